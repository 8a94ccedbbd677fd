/*
 * threads1000 — starts 1,000 threads on 64 KiB stacks; each waits on a 1,001-party barrier
 * in park(), then blocks in pause() forever. Once all have passed the barrier the main thread
 * prints "ready" and dereferences NULL in crash_here(): capture must stop, read and unwind
 * 1,001 threads. The worker threads keep the process name (no pthread_setname_np).
 * With the argument "wait" the main thread prints "ready" and pauses forever instead of crashing
 * (for tests that send it a signal from outside; the caller ends it).
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
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define THREAD_COUNT 1000

static pthread_barrier_t all_parked;

__attribute__((noinline)) void park(void)
{
    pthread_barrier_wait(&all_parked);
    for (;;)
        pause();
}

static void *thread_main(void *arg)
{
    (void)arg;
    park();
    return NULL;
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(int argc, char **argv)
{
    static pthread_t threads[THREAD_COUNT];
    pthread_attr_t attr;
    int err;

    pthread_barrier_init(&all_parked, NULL, THREAD_COUNT + 1);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < THREAD_COUNT; i++) {
        err = pthread_create(&threads[i], &attr, thread_main, NULL);
        if (err != 0) {
            fprintf(stderr, "threads1000: pthread_create #%d: %s\n", i, strerror(err));
            return 1;
        }
    }
    pthread_barrier_wait(&all_parked);
    printf("ready\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        for (;;) pause();
    }
    crash_here();
    return 0;
}
