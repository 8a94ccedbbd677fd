/*
 * fork_worker_crash — the parent forks a worker that dereferences NULL in worker_crash();
 * the parent waitpid()s it, prints "worker died by signal 11" and exits 0. The crash report
 * belongs to the worker (its own pid, ppid = the parent); the parent exits normally.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: code 0
 * CRASHES: 1
 * CRASH-PROCESS: child
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: worker_crash
 * STDOUT: worker died by signal 11
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) void worker_crash(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void worker_main(void)
{
    worker_crash();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    int status;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        worker_main();
        _exit(0);
    }
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (WIFSIGNALED(status))
        printf("worker died by signal %d\n", WTERMSIG(status));
    else
        printf("worker exited with code %d\n", WEXITSTATUS(status));
    fflush(stdout);
    return 0;
}
