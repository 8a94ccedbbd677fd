/*
 * vfork_wait — a thread named "spawner" calls vfork(), and its child takes 5 seconds to exec; the
 * main thread crashes meanwhile. The spawner waits in the kernel for its child to exec or exit and
 * cannot stop before that (only a kill ends the wait): bare, the crash kills the process at once.
 * crashwatch must not wait for the spawner either: the report lists it without registers, with a soft
 * error saying why, and the process is let go within milliseconds, not 5 seconds. The child closes
 * its standard streams first (whoever reads the program's output is not kept waiting for it), then
 * exits after the 5 seconds.
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
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "thread_state.h"

static atomic_int spawner_tid;

static void *spawner(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "spawner");
    atomic_store(&spawner_tid, (int)gettid());
    pid_t child = vfork();
    if (child == 0) {
        /* Shares the parent's memory: system calls only, then _exit. */
        syscall(SYS_close, 0);
        syscall(SYS_close, 1);
        syscall(SYS_close, 2);
        struct timespec wait = {5, 0};
        syscall(SYS_nanosleep, &wait, NULL);
        syscall(SYS_exit, 0);
    }
    return NULL;
}


__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    pthread_t thread;
    pthread_create(&thread, NULL, spawner, NULL);
    while (atomic_load(&spawner_tid) == 0)
        usleep(100);
    /* 'D' (an uninterruptible, here killable, sleep): the spawner sleeps so only while it waits in vfork(). */
    while (thread_state(atomic_load(&spawner_tid)) != 'D')
        usleep(100);
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
