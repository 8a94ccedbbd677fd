/*
 * memfd.c — sealed memory files: the worker's inputs (written, then sealed for good) and the memfd
 * journald's native protocol takes for an entry too large for a datagram (the datagrams themselves go
 * through sockets.c). The sealing flags are GNU-only, hidden from Swift.
 */
#define _GNU_SOURCE
#include "ccrashwatch/memfd.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int cw_memfd(const char *name) {
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int cw_memfd_seal(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0 ? 0 : errno;
}

int cw_sealed_memfd(const char *name, const void *data, size_t length) {
    int fd = cw_memfd(name);
    if (fd < 0) return -1;
    const char *bytes = data;
    size_t done = 0;
    while (done < length) {
        ssize_t written = write(fd, bytes + done, length - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            int saved = written < 0 ? errno : EIO;
            close(fd);
            errno = saved;
            return -1;
        }
        done += (size_t)written;
    }
    int failure = cw_memfd_seal(fd);
    if (failure != 0) {
        close(fd);
        errno = failure;
        return -1;
    }
    return fd;
}
