/*
 * sockets.c — AF_UNIX datagrams, for the sd_notify relay and journald's native protocol: addresses,
 * credentials and passed descriptors, in C because sockaddr_un and control messages (CMSG_*) are built
 * with macros; and the stream sockets of a supervisor's control socket with their peers' credentials
 * (SO_PEERCRED). Nothing on the supervisor's side blocks: its sockets are non-blocking and every send is
 * MSG_DONTWAIT; only a client's receive waits, for at most the time it is given.
 */
#define _GNU_SOURCE
#include "ccrashwatch/sockets.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <sys/random.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

/* Fills an AF_UNIX address from "/path" or "@abstract" (systemd's NOTIFY_SOCKET forms). A path must fit
 * with its terminating NUL: a truncated one would name another socket (ENAMETOOLONG); an empty address
 * is ENOENT, any other form EINVAL. */
static int unix_address(const char *text, struct sockaddr_un *address, socklen_t *length) {
    size_t n = strlen(text);
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (n == 0 || n >= sizeof address->sun_path || (text[0] != '/' && text[0] != '@')) {
        errno = n == 0 ? ENOENT : n >= sizeof address->sun_path ? ENAMETOOLONG : EINVAL;
        return -1;
    }
    memcpy(address->sun_path, text, n);
    if (text[0] == '@') address->sun_path[0] = '\0';
    *length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (text[0] == '/' ? 1 : 0));
    return 0;
}

int cw_unix_datagram_socket(void) {
    return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

ssize_t cw_unix_datagram_send(int socket_fd, const char *address_text, const void *data, size_t length,
                              const int *fds, size_t fd_count) {
    struct sockaddr_un address;
    socklen_t address_length;
    if (unix_address(address_text, &address, &address_length) == -1) return -1;
    if (fd_count > CW_NOTIFY_MAX_FDS) {
        errno = EINVAL;
        return -1;
    }
    union {
        struct cmsghdr align;
        char space[CMSG_SPACE(sizeof(int) * CW_NOTIFY_MAX_FDS)];
    } control;
    struct iovec iov = {.iov_base = (void *)data, .iov_len = length};
    struct msghdr message = {.msg_name = &address, .msg_namelen = address_length, .msg_iov = &iov, .msg_iovlen = 1};
    if (fd_count > 0) {
        memset(&control, 0, sizeof control);
        message.msg_control = control.space;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * fd_count);
        struct cmsghdr *c = CMSG_FIRSTHDR(&message);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fd_count);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * fd_count);
    }
    ssize_t sent;
    do {
        sent = sendmsg(socket_fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (sent == -1 && errno == EINTR);
    return sent;
}

int cw_notify_open(char *name_out, size_t size) {
    unsigned char random[8];
    if (getrandom(random, sizeof random, 0) != (ssize_t)sizeof random) return -1;
    char name[80];
    int written = snprintf(name, sizeof name, "@crashwatch/notify/%d/", (int)getpid());
    for (size_t i = 0; i < sizeof random && written > 0 && (size_t)written + 2 < sizeof name; i++) {
        written += snprintf(name + written, sizeof name - (size_t)written, "%02x", random[i]);
    }
    if (written <= 0 || (size_t)written >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    struct sockaddr_un address;
    socklen_t length;
    if (unix_address(name, &address, &length) == -1) return -1;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd == -1) return -1;
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == -1 ||
        bind(fd, (struct sockaddr *)&address, length) == -1) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    memcpy(name_out, name, (size_t)written + 1);
    return fd;
}

ssize_t cw_notify_receive(int fd, void *buf, size_t len, int32_t *sender_pid, int *fds, size_t *fd_count) {
    union {
        struct cmsghdr align;
        char space[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * CW_NOTIFY_MAX_FDS)];
    } control;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
                             .msg_controllen = sizeof control.space};
    ssize_t n;
    do {
        n = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC);
    } while (n == -1 && errno == EINTR);
    if (n == -1) return errno == EAGAIN ? 0 : -1;

    size_t capacity = *fd_count, count = 0;
    *sender_pid = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET) continue;
        if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
            *sender_pid = credentials.pid;
        } else if (c->cmsg_type == SCM_RIGHTS) {
            size_t received = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < received; i++) {
                int passed;
                memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
                if (count < capacity) fds[count++] = passed;
                else close(passed);
            }
        }
    }
    *fd_count = count;
    /* A message cut short (longer than the buffer, or with more descriptors than fit) is not relayed
     * in part: systemd drops such messages too; so are empty ones. */
    if (n == 0 || (size_t)n > len || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
        for (size_t i = 0; i < count; i++) close(fds[i]);
        *fd_count = 0;
        return -2;
    }
    return n;
}

static int peer_credentials(int fd, cw_peer_credentials *peer) {
    struct ucred credentials;
    socklen_t size = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == -1) return -1;
    if (size != sizeof credentials) {
        errno = EPROTO;
        return -1;
    }
    peer->pid = credentials.pid;
    peer->uid = credentials.uid;
    peer->gid = credentials.gid;
    return 0;
}

int cw_unix_stream_listen(const char *path, unsigned mode) {
    struct sockaddr_un address;
    socklen_t length;
    if (path[0] != '/') {
        errno = EINVAL;
        return -1;
    }
    if (unix_address(path, &address, &length) == -1) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd == -1) return -1;
    mode_t previous = umask(077);
    int bound = bind(fd, (struct sockaddr *)&address, length);
    int e = errno;
    umask(previous);
    if (bound == -1 || listen(fd, 16) == -1 || chmod(path, (mode_t)mode) == -1) {
        if (bound == -1) errno = e;
        e = errno;
        if (bound == 0) unlink(path);
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int cw_unix_stream_accept(int fd, cw_peer_credentials *peer) {
    int client;
    do {
        client = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    } while (client == -1 && errno == EINTR);
    if (client == -1) return (errno == EAGAIN || errno == EWOULDBLOCK) ? -2 : -1;
    if (peer_credentials(client, peer) == -1) {
        int e = errno;
        close(client);
        errno = e;
        return -1;
    }
    return client;
}

int cw_unix_stream_connect(const char *path, cw_peer_credentials *peer) {
    struct sockaddr_un address;
    socklen_t length;
    if (unix_address(path, &address, &length) == -1) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1) return -1;
    int connected;
    do {
        connected = connect(fd, (struct sockaddr *)&address, length);
    } while (connected == -1 && errno == EINTR);
    if (connected == -1 || peer_credentials(fd, peer) == -1) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

ssize_t cw_unix_stream_send(int fd, const void *data, size_t length) {
    ssize_t sent;
    do {
        sent = send(fd, data, length, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (sent == -1 && errno == EINTR);
    if (sent == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -2;
    return sent;
}

ssize_t cw_unix_stream_receive(int fd, void *buf, size_t length, int timeout_ms) {
    if (timeout_ms != 0) {
        struct pollfd waiting = {.fd = fd, .events = POLLIN};
        int ready;
        do {
            ready = poll(&waiting, 1, timeout_ms);
        } while (ready == -1 && errno == EINTR);
        if (ready == -1) return -1;
        if (ready == 0) return -2;
    }
    ssize_t n;
    do {
        n = recv(fd, buf, length, MSG_DONTWAIT);
    } while (n == -1 && errno == EINTR);
    if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -2;
    return n;
}
