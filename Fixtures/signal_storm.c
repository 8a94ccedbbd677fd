/*
 * signal_storm — raises SIGUSR1 at itself N times (argv[1], default 100000), each caught by a
 * handler that counts it, then prints "signals N" and exits 0. Under a tracer every signal is a
 * ptrace stop: this measures the supervisor's pass-through cost and shows its memory stays flat.
 *
 * BUILD: -O2 -g
 * ARGS: 2000
 * EXIT: code 0
 * CRASHES: 0
 * STDOUT: signals 2000
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t received;

static void on_usr1(int signo)
{
    (void)signo;
    received++;
}

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 100000;
    struct sigaction action = {0};
    action.sa_handler = on_usr1;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR1, &action, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &usr1, NULL); /* a parent may have left it blocked */
    for (long i = 0; i < count; i++) raise(SIGUSR1);
    printf("signals %ld\n", (long)received);
    return received == count ? 0 : 1;
}
