/*
 * snapshot_target — a process to take snapshots of (`crashwatch snapshot PID`), with threads in every state a
 * snapshot names. Threads: "spinner" runs a busy loop in spin_here(); "reader" is blocked in read() on a pipe in
 * read_here(); "sleeper" in nanosleep() in sleep_here(); "waiter" in pthread_cond_wait() (futex) in wait_here();
 * "handler" sleeps inside its own SIGUSR1 handler, in_handler(), in nanosleep(). The main thread is blocked in
 * read() of its standard input in main(). Once every thread is in its state, main prints "ready".
 * A snapshot's report must list all six threads by name, each with its function (and source line) in its
 * frames; main and reader in system call read, sleeper and handler in nanosleep or clock_nanosleep, waiter in
 * futex, spinner running.
 * Then each line "ping" on stdin makes main write a byte to the pipe and wait for the reader to count it;
 * SIGUSR2 (process-directed; only the sleeper takes it) is counted too. At the end of stdin every thread is
 * told to stop and joined, and main prints "reads N" (pings answered), "signals N" (SIGUSR2s taken) and "done",
 * exit 0: a snapshot, which interrupts every system call, must change none of this.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: code 0
 * CRASHES: 0
 * STDOUT: ready\nreads 0\nsignals 0\ndone
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "thread_state.h"

static atomic_int quit;
static atomic_int spins;
static atomic_int reads;
static atomic_int signals;
static int pipe_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t answered = PTHREAD_COND_INITIALIZER;
static atomic_int tids[5];

static void nap(void)
{
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static void spin_here(void)
{
    while (!atomic_load(&quit))
        atomic_fetch_add(&spins, 1);
}

static void read_here(void)
{
    char byte;
    while (!atomic_load(&quit)) {
        ssize_t n = read(pipe_fds[0], &byte, 1);
        if (n == 1 && byte == 'p') {
            pthread_mutex_lock(&lock);
            atomic_fetch_add(&reads, 1);
            pthread_cond_broadcast(&answered);
            pthread_mutex_unlock(&lock);
        } else if (n < 0 && errno != EINTR) {
            return;
        }
    }
}

static void sleep_here(void)
{
    while (!atomic_load(&quit)) {
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static void wait_here(void)
{
    pthread_mutex_lock(&lock);
    while (!atomic_load(&quit))
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

static void in_handler(int signo)
{
    (void)signo;
    while (!atomic_load(&quit))
        nap();
}

static void on_usr2(int signo)
{
    (void)signo;
    atomic_fetch_add(&signals, 1);
}

static void *thread_main(void *arg)
{
    long index = (long)arg;
    static const char *names[] = {"spinner", "reader", "sleeper", "waiter", "handler"};
    pthread_setname_np(pthread_self(), names[index]);
    atomic_store(&tids[index], (int)syscall(SYS_gettid));
    if (index == 2) {
        /* Only the sleeper takes SIGUSR2. */
        sigset_t usr2;
        sigemptyset(&usr2);
        sigaddset(&usr2, SIGUSR2);
        pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
    }
    switch (index) {
    case 0: spin_here(); break;
    case 1: read_here(); break;
    case 2: sleep_here(); break;
    case 3: wait_here(); break;
    case 4: pthread_kill(pthread_self(), SIGUSR1); break;
    }
    return NULL;
}

int main(void)
{
    struct sigaction action = {0};
    action.sa_handler = in_handler;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR1, &action, NULL);
    action.sa_handler = on_usr2;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &action, NULL);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    if (pipe(pipe_fds) != 0)
        return 1;

    pthread_t threads[5];
    for (long i = 0; i < 5; i++)
        pthread_create(&threads[i], NULL, thread_main, (void *)i);
    /* Ready once every thread is in its state: the spinner has spun, the others sleep. */
    for (int tries = 0; tries < 10000; tries++) {
        int settled = atomic_load(&spins) > 1000;
        for (int i = 1; i < 5 && settled; i++)
            settled = atomic_load(&tids[i]) != 0 && thread_state(atomic_load(&tids[i])) == 'S';
        if (settled)
            break;
        nap();
    }
    printf("ready\n");
    fflush(stdout);

    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strcmp(line, "ping\n") != 0)
            continue;
        pthread_mutex_lock(&lock);
        int before = atomic_load(&reads);
        if (write(pipe_fds[1], "p", 1) != 1)
            return 1;
        while (atomic_load(&reads) == before)
            pthread_cond_wait(&answered, &lock);
        pthread_mutex_unlock(&lock);
    }

    atomic_store(&quit, 1);
    if (write(pipe_fds[1], "q", 1) != 1)
        return 1;
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 5; i++)
        pthread_join(threads[i], NULL);
    printf("reads %d\nsignals %d\ndone\n", atomic_load(&reads), atomic_load(&signals));
    return 0;
}
