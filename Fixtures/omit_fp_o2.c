/*
 * omit_fp_o2 — optimized code without frame pointers: built -O2 -fomit-frame-pointer, so only
 * CFI (.eh_frame) can unwind it. main -> stage_one -> stage_two -> crash_here, each doing real
 * work on a stack buffer and using the callee's result afterwards (no tail calls); noipa keeps
 * gcc from inlining, cloning (.constprop/.isra) or merging them, so the names stay exact.
 * crash_here stores through a volatile NULL pointer.
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
 * STDOUT: ready
 */
#include <stdio.h>
#include <stdint.h>

static int *volatile null_target = NULL;

__attribute__((noipa)) uint64_t crash_here(uint64_t seed)
{
    uint64_t mix[16];
    for (int i = 0; i < 16; i++)
        mix[i] = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    for (int i = 1; i < 16; i++)
        mix[i] ^= mix[i - 1] >> 7;
    *null_target = (int)mix[15];
    return mix[15] ^ mix[3];
}

__attribute__((noipa)) uint64_t stage_two(uint64_t value)
{
    uint64_t table[32];
    for (int i = 0; i < 32; i++)
        table[i] = value + (uint64_t)i * (uint64_t)i;
    uint64_t folded = 0;
    for (int i = 0; i < 32; i++)
        folded = (folded << 5) ^ (folded >> 3) ^ table[i];
    uint64_t result = crash_here(folded);
    return result + table[7] + folded;
}

__attribute__((noipa)) uint64_t stage_one(const char *text)
{
    char buffer[64];
    uint64_t hash = 1469598103934665603ULL;
    int length = snprintf(buffer, sizeof buffer, "%s:%p", text, (void *)buffer);
    for (int i = 0; i < length && i < (int)sizeof buffer; i++)
        hash = (hash ^ (unsigned char)buffer[i]) * 1099511628211ULL;
    uint64_t result = stage_two(hash);
    return result ^ (uint64_t)(unsigned char)buffer[0] ^ hash;
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    uint64_t value = stage_one("omit_fp_o2");
    printf("%llu\n", (unsigned long long)value);
    return 0;
}
