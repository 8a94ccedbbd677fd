/*
 * kill_reraise — a crash reporter's handler that re-raises the way redis does, with a
 * process-directed kill(). A SIGSEGV handler is installed (SA_SIGINFO, no SA_NODEFER: SIGSEGV
 * stays blocked in the thread running it). A worker thread named "faulter" stores through NULL
 * in crash_here (faulter_main -> fault_outer -> fault_middle -> crash_here): SEGV_MAPERR at 0x0,
 * the root fault. The handler restores SIG_DFL and calls kill(getpid(), SIGSEGV). The faulter
 * blocks SIGSEGV, so the kernel gives that process-directed signal to another thread: the
 * thread-group leader gets the first pick when it does not block the signal, and the main
 * thread waits in pthread_join(), so it takes the SIGSEGV (SI_USER, sent by the process
 * itself) and dies of it; the core dump's first thread is therefore the main thread. The
 * handler then waits in pause() (it never returns, so the fault is not retried and the final
 * signal is always the kill()).
 *
 * The report must name the root fault: originalFault SIGSEGV SEGV_MAPERR at 0x0 in crash_here,
 * and the crashed thread is the one that took it (faulter), not the main thread that received
 * the re-raised signal. At the final signal the faulter's stack is pause() in segv_handler on
 * the signal frame above crash_here; that is its CRASH-STACK (as gdb shows that thread on the
 * core; gdb's bt prints the signal trampoline __restore_rt as "<signal handler called>").
 * So that the final signal always finds the faulter there (bare, the main thread could dump
 * core, and crashwatch stop every thread, while the faulter was still returning from kill()),
 * the main thread blocks SIGSEGV before letting the faulter fault, and unblocks it (taking
 * the pending kill()) only once the faulter sleeps in pause().
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * ORIGINAL-SIGNAL: SIGSEGV
 * ORIGINAL-CODE: SEGV_MAPERR
 * ORIGINAL-ADDR: 0x0
 * ORIGINAL-FUNCTION: crash_here
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SI_USER
 * CRASH-THREAD: faulter
 * CRASH-FUNCTION: segv_handler
 * CRASH-STACK: __libc_pause,segv_handler,__restore_rt,crash_here,fault_middle,fault_outer,faulter_main,start_thread,clone3
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t go, pausing;
static volatile pid_t faulter_tid;

__attribute__((noinline)) void segv_handler(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    kill(getpid(), sig);
    pausing = 1;
    for (;;)
        pause();
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void fault_middle(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void fault_outer(void)
{
    fault_middle();
    __asm__ volatile("" ::: "memory");
}

static void *faulter_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "faulter");
    faulter_tid = (pid_t)syscall(SYS_gettid);
    while (!go)
        ;
    fault_outer();
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    pthread_t thread;
    if (pthread_create(&thread, NULL, faulter_main, NULL) != 0)
        return 1;
    sigset_t segv;
    sigemptyset(&segv);
    sigaddset(&segv, SIGSEGV);
    pthread_sigmask(SIG_BLOCK, &segv, NULL);
    go = 1;
    /* Wait until the faulter sleeps in pause() (state S once it has said so), then take the kill(). */
    char path[64], stat[512];
    for (;;) {
        struct timespec tick = {0, 1000000};
        nanosleep(&tick, NULL);
        if (!pausing || !faulter_tid)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)faulter_tid);
        FILE *file = fopen(path, "r");
        if (!file)
            continue;
        size_t length = fread(stat, 1, sizeof stat - 1, file);
        fclose(file);
        stat[length] = 0;
        char *close = strrchr(stat, ')');
        if (close && close[1] == ' ' && close[2] == 'S')
            break;
    }
    pthread_sigmask(SIG_UNBLOCK, &segv, NULL);
    pthread_join(thread, NULL);
    return 0;
}
