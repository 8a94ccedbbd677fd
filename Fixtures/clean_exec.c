/*
 * clean_exec — a harness helper, not a crash fixture: resets the signal mask to empty and every
 * signal disposition to its default, then execs argv[1..]. The test runner's worker threads block
 * most signals, and a process started from one inherits that mask; the integration tests start
 * every program through this helper so it runs as it would from a shell.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: clean_exec PROGRAM [ARG...]\n");
        return 64;
    }
    for (int signo = 1; signo < NSIG; signo++) {
        if (signo != SIGKILL && signo != SIGSTOP) signal(signo, SIG_DFL);
    }
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
