/*
 * space.h — a process's address space as captured (space.c): the only memory the unwinders read.
 */
#ifndef CCRASHWATCH_SPACE_H
#define CCRASHWATCH_SPACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A process's address space as captured: byte ranges (stack and image bytes copied while it was held),
 * file-backed ranges (image files the caller opened and checked) and the loaded images. Unwinding
 * reads nothing else.
 */
typedef struct cw_space cw_space;

/** An empty space; NULL with errno on failure. */
cw_space *cw_space_create(void);

/** Frees the space (not the bytes or descriptors it was given). */
void cw_space_destroy(cw_space *space);

/** Adds `length` bytes at `address`, read from `bytes` (which must outlive the space). 0, or -1 when full. */
int cw_space_add_bytes(cw_space *space, uint64_t address, const void *bytes, uint64_t length);

/** Adds `length` bytes at `address` read from file `fd` at `offset` onwards (the fd must outlive the space). */
int cw_space_add_file(cw_space *space, uint64_t address, uint64_t length, int fd, uint64_t offset);

/** Adds `length` bytes at `address` that read as zeros (an image's data whose contents were not captured). */
int cw_space_add_zeros(cw_space *space, uint64_t address, uint64_t length);

/** Adds a loaded image [start, end) whose ELF header is at `base`: its unwind table is found from there. */
int cw_space_add_image(cw_space *space, uint64_t start, uint64_t end, uint64_t base);

/** Gives the image starting at `start` its file (which must outlive the space), where .debug_frame is read
 * for the addresses the image's .eh_frame does not cover (and .eh_frame itself without .eh_frame_hdr).
 * 0, or -1 when no image starts there. */
int cw_space_set_image_file(cw_space *space, uint64_t start, int fd);

/** Reads from the space; returns the bytes read (short where the captured ranges end) or -1. */
ssize_t cw_space_read(cw_space *space, uint64_t address, void *buffer, size_t length);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_SPACE_H */
