/*
 * threads64 — 64 parked threads plus a crashing main thread: the "frames of other threads" case
 * and the benchmark target. Thread i (i = 0..63) is named "tNN" (t00 .. t63) and its stack reads,
 * innermost first: libc (pause) -> park_bottom -> park_level repeated (i % 8) + 4 times ->
 * thread_main -> libc thread start. Every thread waits on a 65-party barrier in park_bottom,
 * then blocks in pause() forever. Once all 64 have passed the barrier and sleep in pause() (each
 * counted past the barrier, then seen sleeping in /proc: its stack can no longer change), the main
 * thread prints "ready" and dereferences NULL in crash_here().
 * With the argument "wait" the main thread prints "ready" and pauses forever instead of
 * crashing (for benchmarks that attach to a live process; the caller kills it).
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
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "thread_state.h"

#define THREAD_COUNT 64

static pthread_barrier_t all_parked;
static atomic_int past_barrier;
static pid_t thread_ids[THREAD_COUNT];

__attribute__((noinline)) void park_bottom(void)
{
    pthread_barrier_wait(&all_parked);
    atomic_fetch_add(&past_barrier, 1);
    for (;;)
        pause();
}


/* Past the barrier a thread sleeps only in pause(): wait until every one does. */
static void wait_until_all_paused(void)
{
    while (atomic_load(&past_barrier) < THREAD_COUNT)
        usleep(100);
    for (int i = 0; i < THREAD_COUNT; i++)
        while (thread_state(thread_ids[i]) != 'S')
            usleep(100);
}

__attribute__((noinline)) void park_level(int level)
{
    if (level > 1)
        park_level(level - 1);
    else
        park_bottom();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void *thread_main(void *arg)
{
    int index = (int)(intptr_t)arg;
    thread_ids[index] = gettid();
    char name[16];
    snprintf(name, sizeof name, "t%02d", index);
    pthread_setname_np(pthread_self(), name);
    park_level(index % 8 + 4);
    return NULL;
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(int argc, char **argv)
{
    pthread_t threads[THREAD_COUNT];

    pthread_barrier_init(&all_parked, NULL, THREAD_COUNT + 1);
    for (int i = 0; i < THREAD_COUNT; i++) {
        if (pthread_create(&threads[i], NULL, thread_main, (void *)(intptr_t)i) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    pthread_barrier_wait(&all_parked);
    wait_until_all_paused();
    printf("ready\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        for (;;)
            pause();
    }
    crash_here();
    return 0;
}
