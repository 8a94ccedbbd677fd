/*
 * abort_in_handler — a SIGSEGV handler that calls abort(): a crash inside a signal handler.
 * The original fault is a NULL store in crash_here() (SEGV_MAPERR at 0x0). The fatal SIGABRT
 * (SI_TKILL) is raised inside libc's abort() called from segv_handler, which runs on a signal
 * frame above crash_here: the crashed thread's stack reads
 * libc (pthread_kill/raise/abort) -> segv_handler -> signal trampoline (__restore_rt) ->
 * crash_here -> caller -> main. The innermost fixture frame is segv_handler.
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
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void segv_handler(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
