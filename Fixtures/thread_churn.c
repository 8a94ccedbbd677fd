/*
 * thread_churn — creates and joins N short-lived threads one after another (argv[1], default
 * 10000), then prints "threads N" and exits 0. Under a tracer each thread is seen at birth and at
 * exit: the supervisor's per-thread state must be released, so its memory stays flat.
 *
 * BUILD: -O2 -g
 * ARGS: 500
 * EXIT: code 0
 * CRASHES: 0
 * STDOUT: threads 500
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *run(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 10000;
    long done = 0;
    for (long i = 0; i < count; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, run, NULL) != 0) return 1;
        pthread_join(thread, NULL);
        done++;
    }
    printf("threads %ld\n", done);
    return 0;
}
