/*
 * memfd.h — sealed memory files (memfd.c): the worker's inputs and journald's entries too large for a
 * datagram (the sealing flags are GNU-only, hidden from Swift).
 */
#ifndef CCRASHWATCH_MEMFD_H
#define CCRASHWATCH_MEMFD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING). */
int cw_memfd(const char *name);

/** Seals a memfd for good: no write, shrink or grow by anyone holding it, no seal removed. 0 or an errno
    (EBUSY while a writable shared mapping of it exists). */
int cw_memfd_seal(int fd);

/** A memfd (`name`, close-on-exec) holding exactly the `length` bytes of `data`, fully sealed (no shrinking,
 * growing, writing or further sealing): what journald accepts for an entry too large for a datagram.
 * The descriptor, or -1 with errno. */
int cw_sealed_memfd(const char *name, const void *data, size_t length);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_MEMFD_H */
