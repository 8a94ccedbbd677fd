/*
 * fifo_deleted_exe — a deleted executable whose path text leads to FIFOs nobody writes to.
 *
 * With the argument `fifo` it unlinks its own executable (the path P that /proc/self/exe
 * names) and creates two FIFOs (mode 0600): one at "P (deleted)", the exact text
 * /proc/PID/maps then shows for its mappings, and one at P itself, the text a reader gets
 * after removing the " (deleted)" suffix. With `symlink` it unlinks P, creates one FIFO at
 * "P.fifo" and two symbolic links to it, "P (deleted)" and P. Then (and without an argument,
 * changing nothing) it prints "ready" and crashes: main -> outer -> middle -> crash_here, each
 * noipa and -O2 with the caller using the result (no tail calls), crash_here storing through a
 * volatile NULL pointer.
 * A reader that opens either path text with a plain open(2), or follows the links, blocks
 * forever: opening a FIFO for reading waits for a writer. The image is still readable through
 * /proc/PID/exe, /proc/PID/map_files and the process's memory; the report must be complete and
 * as good as deleted_exe's (main executable deleted, path P, build-id of the copy).
 * With an argument it destroys its binary: tests copy it to a temporary directory first and run
 * the copy (HostileInputTests, both modes). Without one it touches no file, so the generic
 * FixtureTests and ReportTests run it from the build directory like any other fixture.
 *
 * BUILD: -O2 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * CRASH-STACK: crash_here,middle,outer,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Replaces the executable at `path` by FIFOs (`fifo`) or links to one (`symlink`). */
static int plant(const char *mode, const char *path)
{
    char deleted[PATH_MAX + 16], target[PATH_MAX + 16];
    snprintf(deleted, sizeof deleted, "%s (deleted)", path);
    snprintf(target, sizeof target, "%s.fifo", path);
    if (unlink(path) != 0) {
        perror("unlink");
        return -1;
    }
    if (strcmp(mode, "fifo") == 0) {
        if (mkfifo(deleted, 0600) != 0 || mkfifo(path, 0600) != 0) {
            perror("mkfifo");
            return -1;
        }
    } else if (strcmp(mode, "symlink") == 0) {
        if (mkfifo(target, 0600) != 0) {
            perror("mkfifo");
            return -1;
        }
        if (symlink(target, deleted) != 0 || symlink(target, path) != 0) {
            perror("symlink");
            return -1;
        }
    } else {
        fprintf(stderr, "fifo_deleted_exe: unknown mode %s (fifo or symlink)\n", mode);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        char path[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n < 0) {
            perror("readlink /proc/self/exe");
            return 1;
        }
        path[n] = '\0';
        if (plant(argv[1], path) != 0)
            return 1;
    }
    printf("ready\n");
    fflush(stdout);
    return outer(argc) == 0;
}
