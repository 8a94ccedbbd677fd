/*
 * libreplaced — the shared library replaced_library links against (DT_NEEDED libreplaced.so,
 * found through the program's RUNPATH $ORIGIN); build.sh builds it into OUTDIR as
 * libreplaced.so (-shared -fPIC). -O2 without frame pointers: only its CFI unwinds it.
 * replaced_entry() -> replaced_middle() -> replaced_crash(), each noipa with the caller using
 * the result (no tail calls); replaced_crash stores through a volatile NULL pointer.
 * libreplaced_other.c compiles this file again with OTHER_BUILD defined: an 8 KiB function in
 * .text.hot placed before the others (and other arithmetic), so the same offsets fall in other
 * code and another build-id results; replaced_library `replace` renames that build over
 * libreplaced.so while it runs with this one mapped.
 *
 * BUILD: -O2 -g -fomit-frame-pointer -Wl,-soname,libreplaced.so -Wl,--build-id
 */
#include <stdint.h>

static int *volatile null_target = 0;

#ifdef OTHER_BUILD
/* 8 KiB of int3 in .text.hot, which the default linker script places before .text. */
__attribute__((noipa, section(".text.hot.other_build_padding"))) uint64_t other_build_padding(uint64_t value)
{
    __asm__ volatile(".skip 8192, 0xcc");
    return value * 5;
}
#define OTHER_BUILD_MIX(value) ((value) ^ other_build_padding(value))
#else
#define OTHER_BUILD_MIX(value) (value)
#endif

__attribute__((noipa)) uint64_t replaced_crash(uint64_t seed)
{
    uint64_t mix[8];
    for (int i = 0; i < 8; i++)
        mix[i] = OTHER_BUILD_MIX(seed) * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    *null_target = (int)mix[7];
    return mix[7] ^ mix[2];
}

__attribute__((noipa)) uint64_t replaced_middle(uint64_t value)
{
    uint64_t table[16];
    for (int i = 0; i < 16; i++)
        table[i] = value + (uint64_t)i * (uint64_t)i;
    uint64_t result = replaced_crash(table[15] ^ table[3]);
    return result + table[7];
}

__attribute__((noipa)) uint64_t replaced_entry(uint64_t value)
{
    uint64_t table[24];
    for (int i = 0; i < 24; i++)
        table[i] = value * 31 + (uint64_t)i;
    uint64_t result = replaced_middle(table[23] ^ table[5]);
    return result ^ table[11];
}
