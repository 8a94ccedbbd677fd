/*
 * main_exits_first — the main thread starts a worker thread named "worker" and then calls
 * pthread_exit(): the thread-group leader becomes a zombie while the process lives on in the
 * worker. The worker waits until /proc shows the leader as a zombie (state Z in
 * /proc/self/task/PID/stat; at most about 10 s, polling without sleeping), then crashes three
 * frames below its start routine: worker_main -> outer -> middle -> crash_here, a NULL store.
 * At capture time /proc/PID/{maps,mem,exe,cmdline} still answer for the process, but the
 * leader itself cannot be stopped or read: everything must come through the crashed thread.
 * The leader (a zombie) has no registers or frames to offer: the report lists it without frames
 * or registers, its unwindStopReason beginning "exited:", and gdb shows no thread for it in the
 * core.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: worker
 * CRASH-FUNCTION: crash_here
 * CRASH-STACK: crash_here,middle,outer,worker_main,start_thread,clone3
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pid_t leader;

/* The state letter of the leader thread, or '?' when it cannot be read. */
static char leader_state(void)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)leader);
    FILE *file = fopen(path, "r");
    if (!file)
        return '?';
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    char *end = strrchr(text, ')');
    return end && end[1] == ' ' ? end[2] : '?';
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void middle(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void outer(void)
{
    middle();
    __asm__ volatile("" ::: "memory");
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        if (leader_state() == 'Z')
            break;
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 10);
    outer();
    return NULL;
}

int main(void)
{
    leader = getpid();
    printf("ready\n");
    fflush(stdout);
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker_main, NULL) != 0)
        return 1;
    pthread_exit(NULL);
}
