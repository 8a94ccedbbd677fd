/*
 * mapped_data — maps files that are no ELF image, as real programs do (glibc's locale files, the
 * gconv cache, a JVM's CDS archive and hsperfdata): setlocale(LC_ALL, "C.UTF-8") maps glibc's
 * C.utf8 locale files where they are installed, and the program maps a data file of its own
 * (written to a temporary file, then mapped read-only and unlinked). Then crash_here stores
 * through a NULL pointer read from a volatile global (SEGV_MAPERR at 0x0). A mapped file without
 * an ELF header has no build-id to miss: the report must carry no soft error about it.
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
 * CRASH-STACK: crash_here,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int *volatile null_target = NULL;
volatile char sink;

__attribute__((noinline)) void crash_here(const char *data)
{
    sink = data[0];
    *null_target = sink;
}

int main(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    char path[] = "/tmp/crashwatch-mapped-data-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 2;
    static const char text[] = "plain data, no ELF header\n";
    if (write(fd, text, sizeof text) != (ssize_t)sizeof text) return 2;
    const char *data = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    unlink(path);
    close(fd);
    if (data == MAP_FAILED) return 2;
    puts("ready");
    fflush(stdout);
    crash_here(data);
    return 0;
}
