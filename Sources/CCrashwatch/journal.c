/*
 * journal.c — the socket and memfd calls of journald's native protocol that Swift cannot make itself:
 * sockaddr_un and SCM_RIGHTS control messages are built with macros, and memfd sealing flags are GNU-only.
 * Nothing here blocks: the socket is non-blocking and every send is MSG_DONTWAIT.
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int cw_unix_datagram_socket(void) {
    return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

ssize_t cw_unix_datagram_send(int socket_fd, const char *path, const void *data, size_t length, int pass_fd) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t path_length = strlen(path);
    /* The path must fit with its terminating NUL: a truncated path would name another socket. */
    if (path_length == 0 || path_length >= sizeof address.sun_path) {
        errno = path_length == 0 ? ENOENT : ENAMETOOLONG;
        return -1;
    }
    memcpy(address.sun_path, path, path_length);

    struct iovec vector = {.iov_base = (void *)data, .iov_len = length};
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_name = &address;
    message.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + path_length + 1);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;

    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    if (pass_fd >= 0) {
        memset(&control, 0, sizeof control);
        message.msg_control = control.bytes;
        message.msg_controllen = sizeof control.bytes;
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &pass_fd, sizeof(int));
    }

    ssize_t sent;
    do {
        sent = sendmsg(socket_fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

int cw_sealed_memfd(const char *name, const void *data, size_t length) {
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
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
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}
