/*
 * null_fn_ptr — calls through a NULL function pointer from call_through(). The call pushes
 * the return address (into call_through) and jumps to 0: SIGSEGV/SEGV_MAPERR with si_addr 0x0
 * and pc 0x0, outside every mapping. No function contains the pc, so the crashed function
 * to report is the caller, found from the return address at [sp] on x86-64 (in lr/x30 on
 * aarch64): call_through. The frames below it are caller and main.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-PC: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: call_through
 * STDOUT: ready
 */
#include <stddef.h>
#include <stdio.h>

typedef void (*callback_fn)(void);

static callback_fn volatile callback = NULL;

__attribute__((noinline)) void call_through(void)
{
    callback();
    __asm__ volatile("" ::: "memory"); /* a real call, not a tail jump */
}

__attribute__((noinline)) void caller(void)
{
    call_through();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
