/*
 * memfd_exec — a program run from a memfd: without arguments it copies its own executable
 * (/proc/self/exe) into memfd_create("crashwatch-memfd") and fexecve()s it with the argument
 * "crash"; the new image prints "ready" and dereferences NULL in crash_here(). The executable
 * mapping then reads "/memfd:crashwatch-memfd (deleted)": no file on disk, never in-app,
 * build-id from memory, symbols only through /proc/PID/exe.
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
 * CRASH-IMAGE: memfd:crashwatch-memfd
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

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

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        printf("ready\n");
        fflush(stdout);
        caller();
        return 0;
    }
    int source = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (source < 0) {
        perror("open /proc/self/exe");
        return 1;
    }
    int memfd = memfd_create("crashwatch-memfd", MFD_CLOEXEC);
    if (memfd < 0) {
        perror("memfd_create");
        return 1;
    }
    char chunk[65536];
    ssize_t n;
    while ((n = read(source, chunk, sizeof chunk)) > 0) {
        for (ssize_t done = 0; done < n;) {
            ssize_t written = write(memfd, chunk + done, (size_t)(n - done));
            if (written < 0) {
                perror("write memfd");
                return 1;
            }
            done += written;
        }
    }
    if (n < 0) {
        perror("read /proc/self/exe");
        return 1;
    }
    close(source);
    char *args[] = {argv[0], "crash", NULL};
    fexecve(memfd, args, environ);
    perror("fexecve");
    return 1;
}
