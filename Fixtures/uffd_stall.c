/*
 * uffd_stall — a crashing program with memory under a userfaultfd it never serves: a memfd mapped read-only
 * (which a capture reads as an image: its first page for a build-id, its pages since no file holds them)
 * is registered for missing-page faults, none of its pages touched, and the program dereferences NULL. A
 * fault on such a page waits for the userfaultfd's handler — here the crashed program itself, held stopped
 * — so a reader that faults the page in as the process would (process_vm_readv) waits for ever, in a sleep
 * no signal ends; reading /proc/PID/mem is refused the page at once. Needs root (or
 * vm.unprivileged_userfaultfd=1) for a userfaultfd that takes faults from the kernel; without one it says
 * so on stderr and crashes the same way. Only HostileInputTests runs it: its core dump may wait too.
 *
 * BUILD: -O0 -g
 * RUN: alone
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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 0 once a memfd mapping is registered for missing-page faults with a userfaultfd nobody serves. */
static int register_unserved_mapping(void)
{
    int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
    if (uffd < 0)
        return -1;
    struct uffdio_api api = {.api = UFFD_API};
    if (ioctl(uffd, UFFDIO_API, &api) != 0)
        return -1;
    int file = memfd_create("unserved", MFD_CLOEXEC);
    if (file < 0 || ftruncate(file, 65536) != 0)
        return -1;
    void *pages = mmap(NULL, 65536, PROT_READ, MAP_SHARED, file, 0);
    if (pages == MAP_FAILED)
        return -1;
    struct uffdio_register registration = {
        .range = {.start = (unsigned long)pages, .len = 65536},
        .mode = UFFDIO_REGISTER_MODE_MISSING,
    };
    return ioctl(uffd, UFFDIO_REGISTER, &registration);
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    if (register_unserved_mapping() == 0)
        fprintf(stderr, "uffd_stall: unserved userfaultfd mapping in place\n");
    else
        fprintf(stderr, "uffd_stall: no userfaultfd mapping (%s); crashing without one\n", strerror(errno));
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
