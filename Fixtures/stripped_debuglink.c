/*
 * stripped_debuglink — null_deref's shape (main -> outer -> middle -> crash_here, a store
 * through a volatile NULL pointer in crash_here), but shipped stripped with its DWARF in a
 * separate debug file found only by build-id. With DEBUG: separate, build.sh links it with a
 * GNU build-id note, copies the debug information out with objcopy --only-keep-debug, strips
 * the program with strip --strip-all (no .symtab left, only .dynsym, which names none of the
 * fixture's functions) and installs the debug file as
 *   OUTDIR/debug/.build-id/XX/REST.debug
 * where XX is the first two hex digits of the build-id and REST the others. No .gnu_debuglink
 * section is added, so a symbolizer can find the file only through the build-id path under a
 * debug directory (as libdw's --debuginfo-path and gdb's debug-file-directory do). Without the
 * debug directory crash_here has no name at all; with it, CRASH-FUNCTION and CRASH-LINE.
 *
 * For the wrong-build-id test, build.sh also compiles this source with -DOTHER_BUILD (one more
 * volatile store in crash_here, so other code and another build-id) and keeps only that
 * build's debug file, twice: at its own build-id path under OUTDIR/debug-other/.build-id/ and,
 * renamed to the real program's build-id path, as OUTDIR/debug-wrong/.build-id/XX/REST.debug.
 * That last file sits where the right build-id points but its build-id note names the other
 * build; a symbolizer must compare the note with the program's and refuse it.
 *
 * BUILD: -O0 -g -Wl,--build-id
 * DEBUG: separate
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * CRASH-FILE: stripped_debuglink.c
 * CRASH-LINE: 48
 * STDOUT: ready
 */
#include <stdio.h>

#ifdef OTHER_BUILD
static volatile int other_build_marker;
#endif

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
#ifdef OTHER_BUILD
    other_build_marker = 1;
#endif
    /* The faulting store; the header's CRASH-LINE is its line number. */
    *p = 42;
}

__attribute__((noinline)) void middle(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void outer(void)
{
    middle();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    outer();
    return 0;
}
