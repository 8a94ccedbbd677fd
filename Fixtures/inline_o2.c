/*
 * inline_o2 — a crash inside inlined code, built -O2 -g. main calls crash_outer (noinline,
 * noclone) through a volatile function pointer with argc, so nothing is constant-folded;
 * crash_outer calls the always_inline middle_inlined, which calls the always_inline
 * leaf_inlined, which stores through a volatile NULL pointer. Both inline functions are
 * expanded into crash_outer, so the crashed pc lies in crash_outer's code (its ELF symbol, and
 * the outermost concrete function of the pc) while DWARF describes it as leaf_inlined inlined
 * into middle_inlined inlined into crash_outer. The source lines of that expansion, innermost
 * first (as eu-stack -s -i prints them): leaf_inlined at the store (the CRASH-LINE below, 39),
 * middle_inlined at its call of leaf_inlined (46), crash_outer at its call of middle_inlined
 * (53). The caller frame is main at its call through the pointer (63).
 *
 * BUILD: -O2 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_outer
 * CRASH-FILE: inline_o2.c
 * CRASH-LINE: 39
 * CRASH-INLINE-CHAIN: leaf_inlined,middle_inlined,crash_outer
 * STDOUT: ready
 */
#include <stdio.h>

static int *volatile null_target = NULL;
static volatile int sink;

int crash_outer(int seed);
static int (*volatile entry)(int) = crash_outer;

static inline __attribute__((always_inline)) void leaf_inlined(int value)
{
    int scaled = value * 7 + 3;
    sink = scaled;
    *null_target = scaled;
}

static inline __attribute__((always_inline)) int middle_inlined(int value)
{
    int mixed = (value << 2) ^ 0x5a;
    sink = mixed;
    leaf_inlined(mixed);
    return mixed + sink;
}

__attribute__((noinline, noclone)) int crash_outer(int seed)
{
    sink = seed;
    int result = middle_inlined(seed + 11);
    sink = result;
    return result * 3;
}

int main(int argc, char **argv)
{
    (void)argv;
    printf("ready\n");
    fflush(stdout);
    int result = entry(argc);
    printf("%d\n", result);
    return 0;
}
