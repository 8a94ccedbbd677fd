/*
 * frame_16m — a thread named "huge", on a 64 MiB stack, runs thread_main -> level_one ->
 * huge_frame, which keeps a 16 MiB local buffer and calls crash_here with it; crash_here stores
 * through a NULL pointer read from a volatile global (SEGV_MAPERR at 0x0). The main thread only
 * joins it. Built -O2 without frame pointers: huge_frame's caller is found only through its CFI
 * (CFA = sp + 16 MiB + ...), sixteen times past the 1 MiB crashwatch copies from the stack
 * pointer by default, in the top of the thread's stack captured besides that window, where
 * level_one, thread_main and start_thread's frames are. Every frame down to clone3 must be found
 * at the default settings. The thread waits until pthread_create has returned in main (a flag):
 * a main thread still inside clone3 at the crash is unwound by libunwind only to __clone3 there,
 * where gdb goes on (a race this fixture is not about).
 *
 * BUILD: -O2 -g -fomit-frame-pointer
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: huge
 * CRASH-FUNCTION: crash_here
 * CRASH-STACK: crash_here,huge_frame,level_one,thread_main,start_thread,clone3
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define FRAME_BYTES (16u << 20)
#define STACK_BYTES (64u << 20)

int *volatile null_target = NULL;
volatile int sink;
static volatile int created;

__attribute__((noinline)) int crash_here(volatile char *buffer, unsigned length)
{
    sink = buffer[0] + buffer[length - 1];
    *null_target = sink;
    return sink + 1;
}

__attribute__((noinline)) int huge_frame(int seed)
{
    volatile char buffer[FRAME_BYTES];
    buffer[0] = (char)seed;
    buffer[FRAME_BYTES - 1] = (char)(seed >> 8);
    return crash_here(buffer, FRAME_BYTES) + buffer[FRAME_BYTES / 2];
}

__attribute__((noinline)) int level_one(int seed)
{
    return huge_frame(seed * 3) + 1;
}

static void *thread_main(void *argument)
{
    pthread_setname_np(pthread_self(), "huge");
    while (!created) sched_yield();
    sink = level_one((int)(long)argument);
    return NULL;
}

int main(int argc, char **argv)
{
    (void)argv;
    pthread_attr_t attributes;
    pthread_t thread;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, STACK_BYTES);
    puts("ready");
    fflush(stdout);
    if (pthread_create(&thread, &attributes, thread_main, (void *)(long)argc) != 0) return 1;
    created = 1;
    pthread_join(thread, NULL);
    return 0;
}
