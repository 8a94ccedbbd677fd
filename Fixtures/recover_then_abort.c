/*
 * recover_then_abort — installs a SIGSEGV handler (sigaction, SA_SIGINFO) that siglongjmp()s
 * back, takes one SIGSEGV (a NULL store in fault_once) and recovers from it, as a JVM or Go
 * runtime does; later it calls abort() in abort_later, whose SIGABRT has the default action. The
 * handler of the SIGSEGV returned long before the death: that fault is no original fault (README,
 * "When is a signal a crash?"), and the report must have neither signal.originalFault nor
 * signal.activeFaults. crashwatch's crash line on stderr, printed when the crash is detected and
 * before any stack is unwound, still names the SIGSEGV the supervisor remembers (STDERR-ORIGINAL-*):
 * only the report can tell that its handler returned.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * CRASH-SIGNAL: SIGABRT
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: abort_later
 * STDERR-ORIGINAL-SIGNAL: SIGSEGV
 * STDERR-ORIGINAL-CODE: SEGV_MAPERR
 * STDOUT: recovered
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sigjmp_buf recovery_point;

static void segv_handler(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
    siglongjmp(recovery_point, 1);
}

__attribute__((noinline)) void fault_once(void)
{
    volatile int *volatile p = NULL;
    *p = 1;
}

__attribute__((noinline)) void abort_later(void)
{
    abort();
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) return 1;
    if (sigsetjmp(recovery_point, 1) == 0) {
        fault_once();
        return 1;
    }
    puts("recovered");
    fflush(stdout);
    abort_later();
    return 0;
}
