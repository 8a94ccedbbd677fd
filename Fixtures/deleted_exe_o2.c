/*
 * deleted_exe_o2 — a deleted executable built -O2 without frame pointers, so only its CFI
 * (.eh_frame, which the deleted file no longer offers by path) can unwind it, and only its
 * .symtab (not loaded into memory) can name its functions. With the argument `unlink` it unlinks
 * its own executable (the path /proc/self/exe names) first; without one it changes nothing.
 * Then it prints "ready" and crashes: main -> step_one -> step_two -> step_three -> step_four ->
 * step_five -> crash_here, every one noipa (not inlined, cloned or merged), each doing work on a
 * stack buffer and using its callee's result (no tail calls); crash_here stores through a
 * volatile NULL pointer.
 * The report of the `unlink` run must show the same frames as the run without it: every function
 * of the chain, then main, then libc's __libc_start_call_main.
 * With `unlink` it destroys its binary: tests copy it to a temporary directory first and run the
 * copy (HostileInputTests). Without an argument the generic tests run it from the build directory.
 *
 * BUILD: -O2 -g -fomit-frame-pointer -fasynchronous-unwind-tables
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * CRASH-STACK: crash_here,step_five,step_four,step_three,step_two,step_one,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int *volatile null_target = NULL;

__attribute__((noipa)) uint64_t crash_here(uint64_t seed)
{
    uint64_t mix[8];
    for (int i = 0; i < 8; i++)
        mix[i] = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    *null_target = (int)mix[7];
    return mix[7] ^ mix[2];
}

/* Each step fills a stack buffer, calls the next one and folds the result in afterwards. */
#define STEP(name, next, size)                                             \
    __attribute__((noipa)) uint64_t name(uint64_t value)                   \
    {                                                                      \
        uint64_t table[size];                                              \
        for (int i = 0; i < (size); i++)                                   \
            table[i] = value + (uint64_t)i * (uint64_t)(i + (size));       \
        uint64_t result = next(table[(size) - 1] ^ table[1]);              \
        return result + table[(size) / 2] + value;                         \
    }

STEP(step_five, crash_here, 5)
STEP(step_four, step_five, 9)
STEP(step_three, step_four, 13)
STEP(step_two, step_three, 17)
STEP(step_one, step_two, 21)

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "unlink") != 0) {
            fprintf(stderr, "deleted_exe_o2: unknown mode %s (unlink)\n", argv[1]);
            return 1;
        }
        char path[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n < 0) {
            perror("readlink /proc/self/exe");
            return 1;
        }
        path[n] = '\0';
        if (unlink(path) != 0) {
            perror("unlink");
            return 1;
        }
    }
    printf("ready\n");
    fflush(stdout);
    uint64_t value = step_one((uint64_t)argc);
    printf("%llu\n", (unsigned long long)value);
    return 0;
}
