/*
 * replaced_library — crashes inside a shared library whose file was replaced while it ran.
 * Linked against OUTDIR/libreplaced.so (DT_NEEDED libreplaced.so, RUNPATH $ORIGIN: the library is
 * loaded from the program's own directory; copy libreplaced.so and libreplaced_other.so along
 * with it). -O2 without frame pointers, like the library.
 * With the argument `replace` it copies libreplaced_other.so (another build: other code at every
 * offset, another build-id) from its directory to libreplaced.so.new and renames that over
 * libreplaced.so, the way package managers upgrade a library, with the original still mapped:
 * /proc/PID/maps then shows "DIR/libreplaced.so (deleted)" and DIR/libreplaced.so is the other
 * build. Without an argument it changes nothing.
 * Then it prints "ready" and crashes: main -> call_library -> replaced_entry -> replaced_middle ->
 * replaced_crash (the last three in libreplaced.so), replaced_crash storing through a volatile
 * NULL pointer. The report must unwind through the mapped library (its CFI and names from what
 * was mapped, never from the file now at the path): the three library frames, then
 * call_library, main and libc's __libc_start_call_main; the library image deleted, with the
 * build-id of the original libreplaced.so.
 * With `replace` it changes files beside itself: tests copy it and both libraries to a
 * temporary directory first and run the copy (HostileInputTests). Without an argument the
 * generic tests run it from the build directory.
 *
 * BUILD: -O2 -g -fomit-frame-pointer -L@OUTDIR@ -lreplaced -Wl,-rpath,$ORIGIN
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: replaced_crash
 * CRASH-IMAGE: libreplaced.so
 * CRASH-STACK: replaced_crash,replaced_middle,replaced_entry,call_library,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t replaced_entry(uint64_t value);

__attribute__((noipa)) uint64_t call_library(uint64_t value)
{
    uint64_t table[12];
    for (int i = 0; i < 12; i++)
        table[i] = value * 17 + (uint64_t)i;
    uint64_t result = replaced_entry(table[11] ^ table[4]);
    return result + table[6];
}

/* DIR/libreplaced_other.so -> DIR/libreplaced.so.new -> rename over DIR/libreplaced.so. */
static int replace_library(void)
{
    char directory[PATH_MAX], source[PATH_MAX + 32], staged[PATH_MAX + 32], target[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", directory, sizeof directory - 1);
    if (n < 0) {
        perror("readlink /proc/self/exe");
        return -1;
    }
    directory[n] = '\0';
    char *slash = strrchr(directory, '/');
    if (slash == NULL) {
        fprintf(stderr, "replaced_library: unexpected executable path %s\n", directory);
        return -1;
    }
    *slash = '\0';
    snprintf(source, sizeof source, "%s/libreplaced_other.so", directory);
    snprintf(staged, sizeof staged, "%s/libreplaced.so.new", directory);
    snprintf(target, sizeof target, "%s/libreplaced.so", directory);

    int in = open(source, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        perror(source);
        return -1;
    }
    int out = open(staged, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        perror(staged);
        close(in);
        return -1;
    }
    char buffer[65536];
    ssize_t got;
    while ((got = read(in, buffer, sizeof buffer)) > 0) {
        for (ssize_t done = 0; done < got;) {
            ssize_t wrote = write(out, buffer + done, (size_t)(got - done));
            if (wrote <= 0) {
                perror(staged);
                close(in);
                close(out);
                return -1;
            }
            done += wrote;
        }
    }
    close(in);
    if (got < 0 || close(out) != 0) {
        perror("copy");
        return -1;
    }
    if (rename(staged, target) != 0) {
        perror("rename");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "replace") != 0) {
            fprintf(stderr, "replaced_library: unknown mode %s (replace)\n", argv[1]);
            return 1;
        }
        if (replace_library() != 0)
            return 1;
    }
    printf("ready\n");
    fflush(stdout);
    uint64_t value = call_library((uint64_t)argc);
    printf("%llu\n", (unsigned long long)value);
    return 0;
}
