/*
 * spin_threads — three threads that never stop running and a main thread that crashes while they
 * run. Each thread spins through a loop of 64 separate increments of its own counter, so where a
 * thread is caught is one instruction among hundreds; the main thread crashes in crash_here() once
 * every thread has gone round its loop at least 1,000 times. Caught mid-loop at the capture, no
 * thread may run on after it: the core dump the kernel writes as the process dies must show each
 * thread at the very instruction the report does (ReportTests' cross-check with eu-stack on that
 * core). A thread resumed at the release instead of being left to the kernel's kill runs a few
 * microseconds more, and shows elsewhere.
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
#include <unistd.h>

#define THREAD_COUNT 3

static volatile uint64_t counters[THREAD_COUNT];
static atomic_int warmed_up;

#define STEP(i) counters[i] += 1;
#define EIGHT_STEPS(i) STEP(i) STEP(i) STEP(i) STEP(i) STEP(i) STEP(i) STEP(i) STEP(i)

__attribute__((noinline)) void spin(int index)
{
    for (;;) {
        EIGHT_STEPS(index) EIGHT_STEPS(index) EIGHT_STEPS(index) EIGHT_STEPS(index)
        EIGHT_STEPS(index) EIGHT_STEPS(index) EIGHT_STEPS(index) EIGHT_STEPS(index)
        if (counters[index] == 64 * 1000)
            atomic_fetch_add(&warmed_up, 1);
    }
}

static void *thread_main(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "spin%d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    spin((int)(intptr_t)arg);
    return NULL;
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    pthread_t threads[THREAD_COUNT];
    for (int i = 0; i < THREAD_COUNT; i++)
        pthread_create(&threads[i], NULL, thread_main, (void *)(intptr_t)i);
    while (atomic_load(&warmed_up) < THREAD_COUNT)
        usleep(100);
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
