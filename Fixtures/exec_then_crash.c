/*
 * exec_then_crash — without arguments it prints "exec" and execs itself through
 * /proc/self/exe with the argument "crash"; the new image prints "ready" and dereferences
 * NULL in crash_here(). Same pid throughout: the report must describe the post-exec image
 * (refreshed executable, maps and argv "crash").
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: exec\nready
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        printf("ready\n");
        fflush(stdout);
        caller();
        return 0;
    }
    printf("exec\n");
    fflush(stdout);
    char *args[] = {argv[0], "crash", NULL};
    execv("/proc/self/exe", args);
    perror("execv /proc/self/exe");
    return 1;
}
