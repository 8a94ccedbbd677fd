/*
 * files.c — file calls Swift's Glibc module does not expose: renameat2(RENAME_NOREPLACE), which moves an
 * entry only when nothing exists under the new name (the spool's claim, release and quarantine moves), and
 * O_PATH opens (GNU-only, so hidden from Swift) for walking a path one component at a time.
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int cw_renameat_noreplace(int old_dirfd, const char *old_name, int new_dirfd, const char *new_name) {
    return (int)syscall(SYS_renameat2, old_dirfd, old_name, new_dirfd, new_name, RENAME_NOREPLACE);
}

ssize_t cw_read_small_at(int dirfd, const char *name, void *buffer, size_t length) {
    int fd;
    do {
        fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    ssize_t n;
    do {
        n = read(fd, buffer, length);
    } while (n < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    errno = e;
    return n;
}

int cw_open_path_directory(int dirfd, const char *name) {
    int fd;
    do {
        fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}
