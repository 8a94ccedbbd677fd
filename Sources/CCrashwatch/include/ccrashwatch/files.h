/*
 * files.h — file calls Swift's Glibc module does not expose (files.c): renameat2(RENAME_NOREPLACE),
 * O_PATH opens that check a file's type before opening it, small reads and close-on-exec pipes.
 */
#ifndef CCRASHWATCH_FILES_H
#define CCRASHWATCH_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Renames `old_name` (relative to `old_dirfd`) to `new_name` (relative to `new_dirfd`) only when no entry
 * exists under the new name (renameat2 with RENAME_NOREPLACE). Never follows a symbolic link
 * in either last component. Fails with EEXIST when the new name is taken, and with EINVAL or ENOSYS where
 * the file system or kernel lacks the flag.
 */
int cw_renameat_noreplace(int old_dirfd, const char *old_name, int new_dirfd, const char *new_name);

/** Reads at most `length` bytes of the file `name` relative to `dirfd` (one openat, one read, one close;
 * no final link followed): small /proc files such as a thread's comm. The bytes read, or -1 with errno. */
ssize_t cw_read_small_at(int dirfd, const char *name, void *buffer, size_t length);

/**
 * Opens a file a crashed process, a core or a report named, type first: `cw_open_regular_at(AT_FDCWD, …)`.
 * A FIFO, device, socket or directory is never opened (EINVAL), so no driver's open runs and nothing
 * blocks; a final symbolic link fails with ELOOP unless `follow_links`. Returns the fd, or -1 with errno.
 */
int cw_open_untrusted(const char *path, int follow_links);

/**
 * Opens `path` (relative to `dirfd`) read-only only when it is a regular file, checked before anything is
 * opened: an O_PATH descriptor (which runs no driver's open and never blocks) is fstat'ed, and only a
 * regular file is then opened, through that descriptor's /proc/self/fd link (the same inode, whatever the
 * path names by then), O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC. Without /proc the path is opened again and
 * kept only when it is the inode checked. No final link is followed unless `follow_links` (ELOOP); a
 * FIFO, device, socket or directory fails with EINVAL. Returns the fd, or -1 with errno.
 */
int cw_open_regular_at(int dirfd, const char *path, int follow_links);

/** An O_PATH|O_CLOEXEC descriptor of `path` relative to `dirfd` (O_NOFOLLOW unless `follow_links`): no
 * driver's open runs, nothing blocks, and only search permission on the way is needed. -1 with errno. */
int cw_open_path(int dirfd, const char *path, int follow_links);

/** The second half of cw_open_regular_at: opens the file `path_fd` (from cw_open_path on the same
 * `dirfd`, `path`, `follow_links`) for reading when fstat says it is a regular file. -1 with errno. */
int cw_reopen_regular(int path_fd, int dirfd, const char *path, int follow_links);

/** Opens directory `name` relative to `dirfd` as a path-only descriptor (O_PATH|O_DIRECTORY|O_NOFOLLOW|
 * O_CLOEXEC): it needs search permission on the way only, never read permission, and a symbolic link as
 * `name` fails with ELOOP or ENOTDIR instead of being followed. The descriptor, or -1 with errno. */
int cw_open_path_directory(int dirfd, const char *name);

/** pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start; 0 or -1 with errno. */
int cw_pipe_cloexec(int fds[2]);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_FILES_H */
