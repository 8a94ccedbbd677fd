/*
 * abort — calls abort() from crash_here() on the main thread. The signal is raised
 * inside libc (abort -> raise -> pthread_kill -> tgkill), so the innermost frames
 * belong to libc; crash_here is the innermost frame of the fixture itself.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * CRASH-SIGNAL: SIGABRT
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void crash_here(void)
{
    abort();
}

__attribute__((noinline)) void caller(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
