/*
 * debuginfod_hang — a stripped program with a build-id and no debug information anywhere on
 * the machine, so a symbolizer configured with a debuginfod server has to ask it. Linked with
 * -s (no .symtab, no DWARF; only .dynsym, which names none of its functions) and a GNU build-id
 * note. It prints "ready" and crashes: main -> outer -> middle -> crash_here, each noipa with the
 * caller using the result (no tail calls), crash_here storing through a volatile NULL pointer.
 * Its own frames have no names unless a debuginfod server provides the debug file.
 * HostileInputTests runs it under `crashwatch run --capture-timeout 2 --debuginfod URL` with URL
 * a local TCP server that accepts connections and never answers: crashwatch must still end
 * within the capture timeout plus a second, with one report (complete, or minimal with a soft
 * error naming debuginfod or the deadline), and must not leave a connection open behind it.
 *
 * BUILD: -O2 -s -Wl,--build-id
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
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
