/*
 * segv_reraise — behaves like an in-process crash reporter: a SIGSEGV handler (SA_SIGINFO)
 * writes one line to stderr, restores SIG_DFL and re-raises with raise(SIGSEGV), then returns.
 * The original fault is a NULL store in crash_here() (SEGV_MAPERR at 0x0). The re-raised
 * SIGSEGV (SI_TKILL) stays pending while the handler runs (SIGSEGV is blocked inside it) and
 * is delivered when the handler returns through rt_sigreturn, i.e. with the registers of the
 * original fault restored: the final fatal signal's pc is again the faulting store in
 * crash_here, and the handler is no longer on the stack.
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
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void segv_handler(int sig, siginfo_t *info, void *context)
{
    static const char msg[] = "segv_reraise: caught SIGSEGV, re-raising\n";
    (void)info;
    (void)context;
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    signal(sig, SIG_DFL);
    raise(sig);
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
