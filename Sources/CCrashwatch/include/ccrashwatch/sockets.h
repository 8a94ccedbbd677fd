/*
 * sockets.h — AF_UNIX datagrams for the sd_notify relay and journald (sockets.c).
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

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_SOCKETS_H */
