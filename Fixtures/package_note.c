/*
 * package_note — carries systemd's ELF packaging metadata (a `.note.package` note, owner "FDO",
 * type 0xcafe1a7e, JSON descriptor) and dereferences NULL in crash_here(). The report's main image
 * must show the package: type deb, name crashwatch-demo, version 1.2.3-1, architecture amd64.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * PACKAGE: deb crashwatch-demo 1.2.3-1 amd64
 * STDOUT: ready
 */
#include <stdio.h>

/* The note, laid out by hand: namesz, descsz, type, "FDO\0", the JSON (NUL-terminated), padded to 4. */
__asm__(".pushsection .note.package,\"a\",@note\n"
        "  .p2align 2\n"
        "  .long 4\n"
        "  .long 2f - 1f\n"
        "  .long 0xcafe1a7e\n"
        "  .asciz \"FDO\"\n"
        "1:.asciz \"{\\\"type\\\":\\\"deb\\\",\\\"name\\\":\\\"crashwatch-demo\\\",\\\"version\\\":\\\"1.2.3-1\\\",\\\"architecture\\\":\\\"amd64\\\"}\"\n"
        "2:.p2align 2\n"
        "  .popsection\n");

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
