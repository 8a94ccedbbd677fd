/*
 * attach_target — a long-running process for `crashwatch attach` and supervisor snapshots: it is started
 * on its own, and crashwatch attaches to it later. Three idle threads named "attach-idle" sleep; the main
 * thread polls the directory given as its argument every millisecond:
 *   DIR/crash exists -> a NULL write in crash_on_request() on the main thread (SIGSEGV, SEGV_MAPERR, 0x0)
 *   DIR/stop exists  -> prints "rt N" (the SIGRTMIN signals it handled) and exits 0
 * Every SIGRTMIN is counted by its handler (SA_RESTART): real-time signals queue, so a run that loses
 * none counts exactly as many as were sent.
 *
 * BUILD: -O0 -g
 * STDOUT: ready (once the threads run), then rt N
 * No EXIT or CRASHES key: the generic fixture runs leave it to AttachTests.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_long received;
/* The idle threads are named before main prints "ready" or looks for DIR/crash. */
static pthread_barrier_t named;

static void count_signal(int signo)
{
    (void)signo;
    atomic_fetch_add(&received, 1);
}

static void *idle_thread(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "attach-idle");
    pthread_barrier_wait(&named);
    for (;;) {
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

__attribute__((noinline)) void crash_on_request(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

static int exists(const char *directory, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: attach_target DIR\n");
        return 64;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = count_signal;
    action.sa_flags = SA_RESTART;
    sigaction(SIGRTMIN, &action, NULL);
    pthread_barrier_init(&named, NULL, 4);
    for (int i = 0; i < 3; i++) {
        pthread_t thread;
        pthread_create(&thread, NULL, idle_thread, NULL);
    }
    pthread_barrier_wait(&named);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        if (exists(argv[1], "crash")) crash_on_request();
        if (exists(argv[1], "stop")) {
            printf("rt %ld\n", atomic_load(&received));
            fflush(stdout);
            return 0;
        }
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}
