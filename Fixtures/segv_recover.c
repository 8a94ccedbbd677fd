/*
 * segv_recover — installs a SIGSEGV handler (sigaction, SA_SIGINFO) that siglongjmp()s back,
 * then dereferences NULL in fault_once() argv[1] times (default 10000), recovering each time,
 * like a JVM or Go runtime using SIGSEGV on purpose. Prints "recovered N" and exits 0.
 * Each fault is SIGSEGV/SEGV_MAPERR at address 0x0; none must produce a report.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: code 0
 * CRASHES: 0
 * STDOUT: recovered 10000
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sigjmp_buf recovery_point;
static volatile sig_atomic_t faults_seen;

static void segv_handler(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)context;
    if (info->si_code == SEGV_MAPERR && info->si_addr == NULL)
        faults_seen++;
    siglongjmp(recovery_point, 1);
}

__attribute__((noinline)) void fault_once(void)
{
    volatile int *volatile p = NULL;
    *p = 1;
}

int main(int argc, char **argv)
{
    long count = 10000;
    volatile long recovered = 0;
    struct sigaction sa;

    if (argc > 1)
        count = strtol(argv[1], NULL, 10);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    while (recovered < count) {
        /* savemask = 1: siglongjmp restores the mask, so SIGSEGV is unblocked again. */
        if (sigsetjmp(recovery_point, 1) == 0) {
            fault_once();
            fprintf(stderr, "segv_recover: the NULL store did not fault\n");
            return 1;
        }
        recovered++;
    }
    if (faults_seen != recovered) {
        fprintf(stderr, "segv_recover: %ld recoveries but %ld matching faults\n", (long)recovered,
                (long)faults_seen);
        return 1;
    }
    printf("recovered %ld\n", (long)recovered);
    fflush(stdout);
    return 0;
}
