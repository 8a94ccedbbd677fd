/*
 * lld_c — optimized C linked by LLVM's linker: clang -O2 -fomit-frame-pointer -fuse-ld=lld.
 * main -> level_one -> level_two -> level_three -> crash_here, four noinline functions, each
 * doing some work on a stack buffer and using its callee's result afterwards (no tail calls);
 * they are not static, so clang neither clones nor specializes them and the names stay exact.
 * crash_here stores through a NULL pointer read from a volatile global (a constant NULL store
 * would be turned into ud2 by clang). Without frame pointers only the unwind tables can walk
 * this stack, and lld lays them out differently from GNU ld: Debian's libunwind 1.6.2 finds no
 * table in lld output and falls back to frame pointers (PITFALLS.md, "Real toolchains").
 * build.sh builds it with clang whatever CC is (COMPILER key), and skips it (with a message)
 * when clang is missing or CC targets another machine.
 *
 * COMPILER: clang
 * BUILD: -O2 -g -fomit-frame-pointer -fuse-ld=lld
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

int *volatile lld_null_target = NULL;
volatile uint64_t lld_sink;

__attribute__((noinline)) uint64_t crash_here(uint64_t seed)
{
    uint64_t mix[8];
    for (int i = 0; i < 8; i++)
        mix[i] = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    lld_sink = mix[3];
    *lld_null_target = (int)mix[7];
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
    lld_sink = result;
    return (int)(result & 1);
}
