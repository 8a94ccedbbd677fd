/*
 * demangle_bomb — a recursive C function whose ELF symbol is a 142-byte Swift mangled name
 * that demangles to tens of MiB. recurse() (given that symbol with an asm label) calls itself
 * 200 times, then stores through a volatile NULL pointer: 200 frames of the same symbol, then
 * main. Built -O0 without -g: frame pointers and .eh_frame, and no DWARF, so .symtab is the only
 * name (gcc would write the asm label's quotes into DW_AT_linkage_name).
 * The name, $s13demangle_bomb7recurseyy + Say x12 + SiG + _A2cCtG ... _AmMtG + F, is
 * demangle_bomb.recurse(T) -> () where T nests 11 levels of Array<(tuple)>: substitution C is
 * [Swift.Int], and each level is an Array of a tuple holding the previous level's type 4 times
 * (9 levels: the type itself, then A2xX = that substitution 3 more times) or 3 times (2 levels:
 * AxX), the level becoming the next substitution. 4^9 * 3^2 = 2,359,296 copies of [Swift.Int]
 * result from 142 bytes. Measured on the Debian 12 machine these fixtures are checked on, Swift
 * 6.3.1 (one name, one call, 2 vCPUs):
 *   /opt/swift/usr/bin/swift-demangle  33,816,608 bytes (32.2 MiB), 0.34 s, 68 MB peak RSS
 *   swift_demangle() of libswiftCore   68,419,626 bytes (65.2 MiB, it spells Swift.Array<...>),
 *                                      0.45-1.4 s, 195 MB peak RSS; passing a 4 KiB output buffer
 *                                      changes neither the time nor the memory (the whole string
 *                                      is built first; the size written back is 68,419,627)
 *   swift-demangle --simplified        "recurse(_:)", 12 bytes, 0.09 s
 * A symbolizer that demangles every frame's name without a cap writes 200 x 65 MiB; it must cap
 * the demangled text (and its cost) and keep the raw symbol. swift_demangle cannot be stopped midway,
 * so crashwatch gives the name up after 100 ms of the demangling thread's CPU time: every frame's
 * function is the raw symbol, and a soft error (stage symbols) says the name was left mangled and why.
 * The report must be complete.
 *
 * BUILD: -O0
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-SYMBOL: $s13demangle_bomb7recurseyySaySaySaySaySaySaySaySaySaySaySaySaySiG_A2cCtG_A2dDtG_A2eEtG_A2fFtG_A2gGtG_A2hHtG_A2iItG_A2jJtG_A2kKtG_AlLtG_AmMtGF
 * STDOUT: ready
 */
#include <stdio.h>

/* The quotes make the assembler accept a name starting with '$' (AT&T syntax reads a bare
 * "$name" operand as an immediate); the symbol itself has no quotes. */
#define BOMB "$s13demangle_bomb7recurseyySaySaySaySaySaySaySaySaySaySaySaySaySiG_A2cCtG_A2dDtG_A2eEtG_A2fFtG_A2gGtG_A2hHtG_A2iItG_A2jJtG_A2kKtG_AlLtG_AmMtGF"
int recurse(int depth) __asm__("\"" BOMB "\"");

static int *volatile null_target = NULL;

__attribute__((noinline)) int recurse(int depth)
{
    if (depth == 0) {
        *null_target = depth;
        return 0;
    }
    return recurse(depth - 1) + 1; /* not a tail call */
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    return recurse(199);
}
