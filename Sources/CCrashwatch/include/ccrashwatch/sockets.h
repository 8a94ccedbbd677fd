/*
 * sockets.h — AF_UNIX datagrams for the sd_notify relay and journald, and the stream sockets of a
 * supervisor's control socket (sockets.c).
 */
#ifndef CCRASHWATCH_SOCKETS_H
#define CCRASHWATCH_SOCKETS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most descriptors one notify message may pass (the kernel's SCM_MAX_FD). */
#define CW_NOTIFY_MAX_FDS 253

/**
 * Opens the relay's socket: an AF_UNIX datagram socket (non-blocking, close-on-exec, SO_PASSCRED) bound
 * to a random abstract name, written as "@name" (sd_notify's form) into `name_out`. The fd, or -1.
 */
int cw_notify_open(char *name_out, size_t size);

/**
 * Receives one datagram without blocking: its bytes into `buf`, the sender's pid (SCM_CREDENTIALS) into
 * `*sender_pid`, passed descriptors (close-on-exec) into `fds` (capacity in `*fd_count`, count out).
 * Returns the length, 0 when nothing is waiting, -2 for an empty message or one cut short (dropped, its
 * descriptors closed), -1 with errno on failure.
 */
ssize_t cw_notify_receive(int fd, void *buf, size_t len, int32_t *sender_pid, int *fds, size_t *fd_count);

/** A non-blocking, close-on-exec AF_UNIX datagram socket, unbound. The descriptor, or -1 with errno. */
int cw_unix_datagram_socket(void);

/**
 * Sends one datagram on `socket_fd` to the AF_UNIX socket at `address` ("/path", or "@name" for an abstract
 * one, as NOTIFY_SOCKET gives them) without ever blocking (MSG_DONTWAIT, MSG_NOSIGNAL): the `length` bytes
 * of `data`, with `fds` attached (SCM_RIGHTS; at most CW_NOTIFY_MAX_FDS). A path too long for sockaddr_un
 * fails with ENAMETOOLONG, an empty address with ENOENT, another form with EINVAL. The bytes sent, or -1
 * with errno.
 */
ssize_t cw_unix_datagram_send(int socket_fd, const char *address, const void *data, size_t length,
                              const int *fds, size_t fd_count);

/** A stream peer's credentials as the kernel recorded them at connect (SO_PEERCRED). */
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} cw_peer_credentials;

/**
 * Opens a listening AF_UNIX stream socket (non-blocking, close-on-exec, backlog 16) bound to `path`, which
 * must not exist (the caller removes a stale one), and gives the socket file `mode`. The file is created
 * under a umask of 077, so until the chmod nobody else can connect. The fd, or -1 with errno.
 */
int cw_unix_stream_listen(const char *path, unsigned mode);

/**
 * Accepts one waiting connection without blocking (non-blocking, close-on-exec) and reads its peer's
 * credentials. The fd; -2 when none waits; -1 with errno.
 */
int cw_unix_stream_accept(int fd, cw_peer_credentials *peer);

/**
 * Connects to the AF_UNIX stream socket at `path` (close-on-exec, blocking; a Unix connect does not wait
 * for the server to accept) and reads the server's credentials. The fd, or -1 with errno.
 */
int cw_unix_stream_connect(const char *path, cw_peer_credentials *peer);

/** Sends without blocking or SIGPIPE (MSG_DONTWAIT, MSG_NOSIGNAL). The bytes sent, -2 when it would block, -1 with errno. */
ssize_t cw_unix_stream_send(int fd, const void *data, size_t length);

/**
 * Receives what is waiting, waiting at most `timeout_ms` (0: not at all; -1: no limit) for it. The length
 * (0 at end of stream), -2 when nothing came in time, -1 with errno.
 */
ssize_t cw_unix_stream_receive(int fd, void *buf, size_t length, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_SOCKETS_H */
