/*
 * null_deref — dereferences a NULL pointer in crash_here() on the main thread
 * (main -> outer -> middle -> crash_here).
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
 * STDOUT: ready
 */
#include <stdio.h>

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void middle(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void outer(void)
{
    middle();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    outer();
    return 0;
}
