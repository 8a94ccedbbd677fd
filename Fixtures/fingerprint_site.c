/*
 * fingerprint_site — one program, two bugs, for the fingerprint tests: `fingerprint_site SITE WHERE N`
 * stores N into an unmapped low address N * 8 (SIGSEGV, SEGV_MAPERR) at crash site SITE, reached as
 * outer_SITE -> middle_SITE -> store_SITE, called from main (WHERE `main`) or from a thread named
 * `worker` (WHERE `thread`; the main thread waits for it in pthread_join). N is the input: another N
 * is another fault address, the same bug. Site `a` and site `b` are different bugs. Every function is
 * noinline and calls its callee in a non-tail position, so -O0 and -O2 builds have the same frames.
 * The defaults (ARGS) crash at site a on the main thread with N = 1, at address 0x8. The tests rebuild
 * it with another build-id (`-Wl,--build-id=0x…`) and at -O2.
 *
 * BUILD: -O0 -g
 * ARGS: a main 1
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x8
 * CRASH-THREAD: main
 * CRASH-FUNCTION: store_a
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SITE(name)                                                                   \
    __attribute__((noinline)) void store_##name(long n)                              \
    {                                                                                \
        volatile long *volatile p = (volatile long *)(n * 8);                        \
        *p = n;                                                                      \
    }                                                                                \
    __attribute__((noinline)) void middle_##name(long n)                             \
    {                                                                                \
        store_##name(n);                                                             \
        __asm__ volatile("" ::: "memory"); /* not a tail call */                     \
    }                                                                                \
    __attribute__((noinline)) void outer_##name(long n)                              \
    {                                                                                \
        middle_##name(n);                                                            \
        __asm__ volatile("" ::: "memory");                                           \
    }

SITE(a)
SITE(b)

static char site = 'a';
static long input = 1;

static void crash(void)
{
    if (site == 'b') outer_b(input); else outer_a(input);
}

static void *worker(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "worker");
    crash();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) site = argv[1][0];
    long n = argc > 3 ? strtol(argv[3], NULL, 10) : 1;
    input = n > 0 && n < 500 ? n : 1;
    printf("ready\n");
    fflush(stdout);
    if (argc > 2 && strcmp(argv[2], "thread") == 0) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
        pthread_join(thread, NULL);
        return 0;
    }
    crash();
    return 0;
}
