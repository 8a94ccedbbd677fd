/*
 * sigbus — maps one page of a temporary file (mkstemp in /tmp, unlinked at once),
 * truncates the file to 0 bytes, then touches the page in crash_here(): the page now lies
 * beyond the end of the file, so the kernel raises SIGBUS with BUS_ADRERR at the
 * mapping's address (not deterministic).
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGBUS
 * CRASHES: 1
 * CRASH-SIGNAL: SIGBUS
 * CRASH-CODE: BUS_ADRERR
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) void crash_here(volatile char *page)
{
    page[0] = 1;
}

int main(void)
{
    char path[] = "/tmp/crashwatch-sigbus-XXXXXX";
    long page_size = sysconf(_SC_PAGESIZE);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    unlink(path);
    if (ftruncate(fd, page_size) != 0) {
        perror("ftruncate");
        return 1;
    }
    char *page = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    if (ftruncate(fd, 0) != 0) {
        perror("ftruncate");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    crash_here(page);
    return 0;
}
