/*
 * fifo_debuglink — a stripped -O2 program whose .gnu_debuglink names a file the crashing user
 * controls. With DEBUG: debuglink, build.sh links it with a GNU build-id note, copies the debug
 * information out to OUTDIR/fifo_debuglink.debug (objcopy --only-keep-debug), strips the program
 * (strip --strip-all: no .symtab, only .dynsym, which names none of its functions) and adds a
 * .gnu_debuglink section naming "fifo_debuglink.debug" with that file's CRC.
 * It prints "ready" and crashes: main -> outer -> middle -> crash_here, each noipa with the caller
 * using the result (no tail calls), crash_here storing through a volatile NULL pointer.
 * Run from the build directory, the real debug file sits beside it and a debuglink lookup (the
 * program's directory, then its .debug/ subdirectory, then /usr/lib/debug + the directory, as
 * libdw and gdb search) names crash_here. HostileInputTests copies only the program to a
 * temporary directory and puts FIFOs (mode 0600, nobody writes to them) at
 * DIR/fifo_debuglink.debug and DIR/.debug/fifo_debuglink.debug before running it: a reader that
 * opens the debuglink candidates with a plain open(2) blocks forever there. The report must be
 * complete: the FIFOs refused (not regular files), the program's own frames without names,
 * the stack unwound through .eh_frame down to libc's __libc_start_call_main.
 *
 * BUILD: -O2 -g -Wl,--build-id
 * DEBUG: debuglink
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

static int *volatile null_target = NULL;

__attribute__((noipa)) int crash_here(int value)
{
    *null_target = value;
    return value + 1;
}

__attribute__((noipa)) int middle(int value)
{
    int result = crash_here(value * 3);
    return result ^ value;
}

__attribute__((noipa)) int outer(int value)
{
    int result = middle(value + 7);
    return result - value;
}

int main(int argc, char **argv)
{
    (void)argv;
    printf("ready\n");
    fflush(stdout);
    return outer(argc) == 0;
}
