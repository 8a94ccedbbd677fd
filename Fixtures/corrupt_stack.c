/*
 * corrupt_stack — crash_here() smashes its own stack before crashing: it fills a local
 * 64-byte buffer with 0x41 and keeps going past its end through a volatile pointer, up to and
 * including its frame record (x86-64: saved rbp and return address right above the locals),
 * then writes garbage over the frame record at __builtin_frame_address(0) directly (on x86-64
 * the saved rbp and return address, on aarch64 the saved x29 and x30), and finally stores
 * through a NULL pointer. Frame 0 is exact (crash_here, from the registers); everything
 * below it is garbage (0x4141414141414141 return address): an unwinder must stop cleanly
 * with a reason, not loop or crash. Built without stack protector so nothing aborts first.
 *
 * BUILD: -O0 -g -fno-stack-protector
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
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static volatile int *volatile null_target = NULL;
static volatile uintptr_t garbage = (uintptr_t)0x4141414141414141ULL;

__attribute__((noinline)) void crash_here(void)
{
    char buffer[64];
    volatile char *cursor = buffer;
    /* Overflow the buffer: from its start up to the end of the frame record when the frame
     * record lies above it (x86-64), else 16 bytes past its end (aarch64 keeps its own frame
     * record below the locals; the bytes past the end belong to the caller's frame). Both
     * pointers are computed from registers; only register values are used after the fill. */
    char *frame_end = (char *)__builtin_frame_address(0) + 2 * sizeof(void *);
    size_t length = frame_end > buffer ? (size_t)(frame_end - buffer) : sizeof buffer + 16;
    memset((char *)cursor, 0x41, length);
    /* Now the frame record itself, at the frame pointer register (not a stack variable). */
    ((volatile uintptr_t *)__builtin_frame_address(0))[0] = garbage;
    ((volatile uintptr_t *)__builtin_frame_address(0))[1] = garbage;
    *null_target = 1;
}

__attribute__((noinline)) void caller(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
