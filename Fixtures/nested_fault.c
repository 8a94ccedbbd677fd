/*
 * nested_fault — a fault inside the fault handler, recovered, then abort(): what the JVM and
 * redis do while writing their crash logs (they probe memory that may be unmapped). main ->
 * caller -> crash_here stores through NULL: SEGV_MAPERR at 0x0, the root fault. The SIGSEGV
 * handler (SA_SIGINFO | SA_NODEFER, so a second SIGSEGV can enter it) sees it is the first
 * entry, sets a recovery point with sigsetjmp and reads a PROT_NONE guard page mapped at start-up
 * (probe_guard): a second SIGSEGV, SEGV_ACCERR at the guard page, enters the handler again on top
 * of the first; that nested entry siglongjmps back to the recovery point in the first entry. The
 * first entry then calls abort(): SIGABRT, SI_TKILL, from segv_handler on the signal frame
 * above crash_here.
 *
 * The report's original fault is the ROOT one, the first SIGSEGV (SEGV_MAPERR at 0x0 in
 * crash_here), not the nested SEGV_ACCERR the handler recovered from. CRASH-STACK is gdb's
 * view of the core (its bt prints __restore_rt as "<signal handler called>"; the tail-call
 * frame __pthread_kill_internal that gdb reconstructs from DWARF call-site data between
 * __pthread_kill_implementation and raise is not on the stack and is left out).
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * ORIGINAL-SIGNAL: SIGSEGV
 * ORIGINAL-CODE: SEGV_MAPERR
 * ORIGINAL-ADDR: 0x0
 * ORIGINAL-FUNCTION: crash_here
 * CRASH-SIGNAL: SIGABRT
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: segv_handler
 * CRASH-STACK: __pthread_kill_implementation,__GI_raise,__GI_abort,segv_handler,__restore_rt,crash_here,caller,main,__libc_start_call_main
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static volatile char *guard_page;
static sigjmp_buf recovery;
static volatile sig_atomic_t entries;
static volatile sig_atomic_t probing;

/* Reads the guard page: a SIGSEGV (SEGV_ACCERR) the handler recovers from. */
__attribute__((noinline)) int probe_guard(void)
{
    return guard_page[16];
}

__attribute__((noinline)) void segv_handler(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
    if (probing) {
        /* The nested fault: back to the first entry. */
        probing = 0;
        siglongjmp(recovery, 1);
    }
    entries++;
    if (sigsetjmp(recovery, 0) == 0) {
        probing = 1;
        probe_guard();
        probing = 0;
    }
    abort();
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void caller(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    guard_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (guard_page == MAP_FAILED)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
