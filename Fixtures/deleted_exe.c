/*
 * deleted_exe — unlinks its own executable (the path /proc/self/exe points to), prints
 * "ready", then dereferences NULL in crash_here(). The mappings of the executable then read
 * "<path> (deleted)": the image must be reported as deleted, with its build-id read from
 * memory and symbols from /proc/PID/exe.
 * It destroys its binary: tests copy it to a temporary directory first and run the copy.
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
 * STDOUT: ready
 */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void caller(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n < 0) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    path[n] = '\0';
    if (unlink(path) != 0) {
        perror("unlink");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
