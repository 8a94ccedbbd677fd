/*
 * no_eh_frame_hdr — optimized C (gcc -O2 -fomit-frame-pointer) linked with --no-eh-frame-hdr:
 * the program has .eh_frame but no .eh_frame_hdr, so no PT_GNU_EH_FRAME program header points
 * at an unwind table. main -> level_one -> level_two -> level_three -> crash_here, four
 * noinline functions using their callees' results (no tail calls); crash_here stores through a
 * NULL pointer read from a volatile global. Without frame pointers and without the header's
 * table, an unwinder must find .eh_frame through the file's section headers and index it
 * itself (crashwatch does, with a soft error saying so); libc still has its header.
 *
 * BUILD: -O2 -g -fomit-frame-pointer -Wl,--no-eh-frame-hdr
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * CRASH-STACK: crash_here,level_three,level_two,level_one,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <stdint.h>
#include <stdio.h>

int *volatile null_target = NULL;
volatile uint64_t sink;

__attribute__((noinline)) uint64_t crash_here(uint64_t seed)
{
    uint64_t mix[8];
    for (int i = 0; i < 8; i++)
        mix[i] = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    sink = mix[3];
    *null_target = (int)mix[7];
    return mix[7] ^ mix[1];
}

__attribute__((noinline)) uint64_t level_three(uint64_t value)
{
    volatile uint64_t table[16];
    for (int i = 0; i < 16; i++)
        table[i] = value + (uint64_t)i * 7;
    uint64_t result = crash_here(table[5]);
    return result + table[9];
}

__attribute__((noinline)) uint64_t level_two(uint64_t value)
{
    volatile uint64_t table[16];
    for (int i = 0; i < 16; i++)
        table[i] = value ^ ((uint64_t)i << 3);
    uint64_t result = level_three(table[2]);
    return result * 3 + table[11];
}

__attribute__((noinline)) uint64_t level_one(const char *text)
{
    volatile char buffer[32];
    uint64_t hash = 1469598103934665603ULL;
    for (int i = 0; i < 31 && text[i]; i++) {
        buffer[i] = text[i];
        hash = (hash ^ (uint8_t)buffer[i]) * 1099511628211ULL;
    }
    uint64_t result = level_two(hash);
    return result + buffer[0];
}

int main(int argc, char **argv)
{
    (void)argc;
    printf("ready\n");
    fflush(stdout);
    uint64_t result = level_one(argv[0]);
    sink = result;
    return (int)(result & 1);
}
