/*
 * fork_churn — benchmark helper (bench/bench.py compiles it to .build/bench/fork_churn, -O2).
 *
 *   fork_churn [N]
 *
 * Forks N children one after another (default 3000), each exiting at once (_exit(0)), and waits for
 * each before the next; prints "forks N" and exits 0 (1 when a fork or a child fails). Under a tracer
 * that follows forks every child is seen at birth (PTRACE_EVENT_FORK, its first PTRACE_EVENT_STOP),
 * at its exit stop (PTRACE_EVENT_EXIT) and at its end: the fork churn workload of bench.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 3000;
    for (long i = 0; i < count; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork_churn: fork");
            return 1;
        }
        if (pid == 0)
            _exit(0);
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "fork_churn: child %ld failed\n", i);
            return 1;
        }
    }
    printf("forks %ld\n", count);
    return 0;
}
