/*
 * stack_overflow_thread — a secondary thread named "overflow", running on a 256 KiB stack,
 * recurses without bound in recurse() until it runs into its stack's guard page; the main
 * thread only joins it. The guard page is a PROT_NONE mapping, hence SEGV_ACCERR (not MAPERR).
 * The fault address is somewhere in the guard page, so it is not deterministic.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_ACCERR
 * CRASH-THREAD: overflow
 * CRASH-FUNCTION: recurse
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Never reached; read at run time, so gcc cannot prove the recursion infinite. */
static volatile unsigned long depth_limit = ~0UL;

__attribute__((noinline)) unsigned long recurse(unsigned long depth)
{
    volatile char pad[64];
    pad[0] = (char)depth;
    pad[63] = (char)(depth >> 8);
    if (depth == depth_limit)
        return 0;
    /* The result is used after the call, so this cannot become a loop or a tail call. */
    unsigned long below = recurse(depth + 1);
    return below + pad[0] + pad[63];
}

static void *overflow_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "overflow");
    return (void *)recurse(0);
}

int main(void)
{
    pthread_attr_t attr;
    pthread_t thread;
    void *result;

    printf("ready\n");
    fflush(stdout);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (pthread_create(&thread, &attr, overflow_main, NULL) != 0) {
        perror("pthread_create");
        return 1;
    }
    pthread_join(thread, &result);
    return 0;
}
