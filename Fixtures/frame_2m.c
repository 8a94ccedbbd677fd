/*
 * frame_2m — a function whose frame is larger than the stack crashwatch copies from the stack
 * pointer by default (--max-stack-bytes 1 MiB): main -> level_one -> big_frame, which keeps a
 * 2 MiB local buffer and calls crash_here with it; crash_here stores through a NULL pointer read
 * from a volatile global (SEGV_MAPERR at 0x0). Built -O2 without frame pointers, so big_frame's
 * caller is found only through its CFI (CFA = sp + 2 MiB + ...): the return address lies above
 * the buffer, past the window copied from the stack pointer, near the stack's end, in the top of
 * the stack captured besides the window. Every frame down to __libc_start_call_main must be
 * found at the default settings (redis's memory test has a 1 MiB frame).
 *
 * With an argument (not in ARGS), big_frame calls itself once before crash_here: the outer
 * big_frame's return address then lies 2 MiB below the stack's top, in neither captured part,
 * and at the default settings the unwind must stop there saying "stack capture limit", with a
 * soft error naming --max-stack-bytes; with --max-stack-bytes 8M every frame is found.
 *
 * BUILD: -O2 -g -fomit-frame-pointer
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * CRASH-STACK: crash_here,big_frame,level_one,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <stdio.h>
#include <string.h>

#define FRAME_BYTES (2u << 20)

int *volatile null_target = NULL;
volatile int sink;

__attribute__((noinline)) int crash_here(volatile char *buffer, unsigned length)
{
    sink = buffer[0] + buffer[length - 1];
    *null_target = sink;
    return sink + 1;
}

__attribute__((noinline)) int big_frame(int seed, int again)
{
    volatile char buffer[FRAME_BYTES];
    buffer[0] = (char)seed;
    buffer[FRAME_BYTES - 1] = (char)(seed >> 8);
    int result = again ? big_frame(seed + 1, again - 1) : crash_here(buffer, FRAME_BYTES);
    return result + buffer[FRAME_BYTES / 2];
}

__attribute__((noinline)) int level_one(int seed, int again)
{
    return big_frame(seed * 3, again) + 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    puts("ready");
    fflush(stdout);
    return level_one(argc, argc > 1) == 42;
}
