/*
 * files.c — file calls Swift's Glibc module does not expose: renameat2(RENAME_NOREPLACE), which moves an
 * entry only when nothing exists under the new name (the spool's claim, release and quarantine moves), and
 * O_PATH opens (GNU-only, so hidden from Swift) for walking a path one component at a time and for
 * checking a file's type before it is opened; small reads and close-on-exec pipes.
 */
#define _GNU_SOURCE
#include "ccrashwatch/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
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

int cw_open_path(int dirfd, const char *path, int follow_links) {
    int fd;
    do {
        fd = openat(dirfd, path, O_PATH | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW));
    } while (fd < 0 && errno == EINTR);
    return fd;
}

int cw_reopen_regular(int path_fd, int dirfd, const char *path, int follow_links) {
    struct stat checked;
    if (fstat(path_fd, &checked) != 0) return -1;
    if (!S_ISREG(checked.st_mode)) {
        errno = S_ISLNK(checked.st_mode) ? ELOOP : EINVAL;
        return -1;
    }
    const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    /* The checked inode itself, through its descriptor's /proc link: nothing swapped in at the path since
     * can be what opens. */
    char link[48];
    snprintf(link, sizeof link, "/proc/self/fd/%d", path_fd);
    int fd;
    do {
        fd = open(link, flags);
    } while (fd < 0 && errno == EINTR);
    if (fd >= 0 || errno != ENOENT) return fd;
    /* No /proc here (a chroot, a bare container): open the path again and keep it only when it is the
     * inode checked. Only a node swapped in between the two calls could then be opened. */
    do {
        fd = openat(dirfd, path, flags | (follow_links ? 0 : O_NOFOLLOW));
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    struct stat opened;
    if (fstat(fd, &opened) != 0 || opened.st_dev != checked.st_dev || opened.st_ino != checked.st_ino) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

int cw_open_regular_at(int dirfd, const char *path, int follow_links) {
    int path_fd = cw_open_path(dirfd, path, follow_links);
    if (path_fd < 0) return -1;
    int fd = cw_reopen_regular(path_fd, dirfd, path, follow_links);
    int saved = errno;
    close(path_fd);
    errno = saved;
    return fd;
}

int cw_open_untrusted(const char *path, int follow_links) {
    return cw_open_regular_at(AT_FDCWD, path, follow_links);
}

int cw_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}
