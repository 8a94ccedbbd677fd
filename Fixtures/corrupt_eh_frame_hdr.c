/*
 * corrupt_eh_frame_hdr — -O2 code without frame pointers whose .eh_frame_hdr lies about its own
 * lookup table. After linking, build.sh (PATCH-BYTE below) checks that byte 3 of the
 * .eh_frame_hdr section, table_enc (the encoding of the binary-search table; the linker writes
 * DW_EH_PE_datarel|DW_EH_PE_sdata4 = 0x3b), is 0x3b and overwrites it with 0x0f, a pointer
 * format (low nibble 0xf) no DWARF version defines. The section is also the PT_GNU_EH_FRAME
 * segment, so the loaded copy in memory has the bad byte too; .eh_frame itself is intact.
 * It prints "ready" and crashes: main -> first -> second -> crash_here, each noipa with the
 * caller using the result (no tail calls), crash_here storing through a volatile NULL pointer.
 * Nothing at run time reads the table (no C++ exception, no backtrace()), so the program runs
 * normally. What readers do with it (measured here on a core dump and live):
 *   gdb 13 (reads .eh_frame itself)   the whole stack, CRASH-STACK (with backtrace past-main
 *                                     on), then __libc_start_main_impl and _start
 *   eu-stack (elfutils 0.188)         crash_here, then "address out of range": libdw accepts
 *                                     the table, cannot decode it and does not search
 *                                     .eh_frame linearly
 *   libunwind 1.6.2 (Debian 12)       abort() inside _UPT_find_proc_info: the crashwatch of
 *                                     this repository before the capture/worker split died of
 *                                     SIGABRT (exit 134) with no report
 * An unwinder must never trust the encoding, abort or hang; it may search .eh_frame linearly
 * (then CRASH-STACK is what it finds) or stop with a reason. The crashed frame (from the
 * registers) and its name (from .symtab/DWARF) do not depend on the CFI: a report must keep
 * them whatever happens to the rest of the stack, and any named frame it gives beyond them must
 * be the function CRASH-STACK has at that position.
 *
 * BUILD: -O2 -g -fomit-frame-pointer
 * PATCH-BYTE: .eh_frame_hdr 3 0x3b 0x0f
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * CRASH-STACK: crash_here,second,first,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <stdint.h>
#include <stdio.h>

static int *volatile null_target = NULL;

__attribute__((noipa)) uint64_t crash_here(uint64_t seed)
{
    uint64_t mix[8];
    for (int i = 0; i < 8; i++)
        mix[i] = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
    *null_target = (int)mix[7];
    return mix[7] ^ mix[2];
}

__attribute__((noipa)) uint64_t second(uint64_t value)
{
    uint64_t table[16];
    for (int i = 0; i < 16; i++)
        table[i] = value + (uint64_t)i * (uint64_t)i;
    uint64_t result = crash_here(table[15] ^ table[3]);
    return result + table[7];
}

__attribute__((noipa)) uint64_t first(uint64_t value)
{
    uint64_t table[24];
    for (int i = 0; i < 24; i++)
        table[i] = value * 31 + (uint64_t)i;
    uint64_t result = second(table[23] ^ table[5]);
    return result ^ table[11];
}

int main(int argc, char **argv)
{
    (void)argv;
    printf("ready\n");
    fflush(stdout);
    uint64_t value = first((uint64_t)argc);
    printf("%llu\n", (unsigned long long)value);
    return 0;
}
