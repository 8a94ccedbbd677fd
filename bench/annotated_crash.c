/*
 * annotated_crash — benchmark helper (bench/bench.py compiles it twice into .build/bench/: annotated_crash
 * with -DANNOTATED, annotated_crash_plain without).
 *
 *   annotated_crash
 *
 * Starts 16 threads parked at recursion depth 16, then dereferences NULL on its main thread. Built with
 * ANNOTATED, it declares an annotation table (annotations/crashwatch_annotations.h: 128 annotation slots,
 * 64 breadcrumb slots) and sets 100 annotations and 100 breadcrumbs (the ring wrapped) first; without it,
 * the same program declares no table. bench.py compares the hold (holdDurationMs) of both.
 */
#ifdef ANNOTATED
#define CRASHWATCH_ANNOTATION_SLOTS 128
#define CRASHWATCH_BREADCRUMB_SLOTS 64
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "crashwatch_annotations.h"
#endif
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define THREADS 16

static pthread_barrier_t parked;

__attribute__((noinline)) static void park_bottom(void)
{
    pthread_barrier_wait(&parked);
    for (;;)
        pause();
}

__attribute__((noinline)) static void park_level(int level)
{
    if (level > 1)
        park_level(level - 1);
    else
        park_bottom();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void *thread_main(void *unused)
{
    (void)unused;
    park_level(16);
    return NULL;
}

int main(void)
{
#ifdef ANNOTATED
    char key[32], value[64];
    for (int n = 0; n < 100; n++) {
        snprintf(key, sizeof key, "key_%d", n);
        snprintf(value, sizeof value, "value of annotation number %d", n);
        crashwatch_annotate(key, value);
        snprintf(value, sizeof value, "breadcrumb number %d", n);
        crashwatch_breadcrumb(CRASHWATCH_INFO, value);
    }
#endif
    pthread_barrier_init(&parked, NULL, THREADS + 1);
    pthread_t threads[THREADS];
    for (int n = 0; n < THREADS; n++) pthread_create(&threads[n], NULL, thread_main, NULL);
    pthread_barrier_wait(&parked);
    volatile int *volatile p = NULL;
    *p = 42;
    return 0;
}
