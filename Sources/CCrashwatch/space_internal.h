/*
 * space_internal.h — the captured address space from the inside, shared by the files that build and read
 * it: space.c (ranges, images, reads), ehframe.c (an image's .eh_frame_hdr or .eh_frame), debugframe.c
 * (its file's .debug_frame) and unwind.c (libunwind's accessors). Not part of the Swift module.
 */
#ifndef CCRASHWATCH_SPACE_INTERNAL_H
#define CCRASHWATCH_SPACE_INTERNAL_H

#include "ccrashwatch/space.h"

#include <stddef.h>
#include <stdint.h>

#define UNW_REMOTE_ONLY
#include <libunwind.h>

struct cw_range {
    uint64_t start, end;
    const uint8_t *bytes; /* captured bytes, or NULL for a file or zero range */
    int fd;               /* file range: read at offset + (address - start); -1 with no bytes: reads as zeros */
    uint64_t offset;
};

enum { TABLE_UNKNOWN = 0, TABLE_FOUND, TABLE_MISSING };

struct cw_image {
    uint64_t start, end, base;
    int table_state;
    const char *problem; /* why the image's .eh_frame_hdr table was not usable; static text */
    unw_dyn_info_t info;
    int32_t *index;         /* a table built from .eh_frame when .eh_frame_hdr's was unusable */
    uint64_t index_address; /* where that table sits in the space */
    int fd;                 /* the image's file, for .debug_frame (-1: none) */
    uint8_t *converted;     /* .debug_frame rewritten as .eh_frame records */
};

struct cw_space {
    struct cw_range *ranges;
    size_t range_count, range_capacity;
    struct cw_image *images;
    size_t image_count, image_capacity;
    int ranges_sorted, images_sorted;
    unw_addr_space_t space;
    uint64_t *page_address; /* cached file page per slot; UINT64_MAX when empty */
    uint8_t *pages;
};

/* Sorts the ranges and images added since the last lookup (space.c). */
void cw_space_sort(cw_space *s);

/* The image containing `ip`, or NULL (space.c). */
struct cw_image *cw_space_image_at(cw_space *s, uint64_t ip);

/* Reads exactly `length` bytes at `address`: 0, or -1 when any is missing (space.c). */
int cw_space_read_exact(cw_space *s, uint64_t address, void *buffer, size_t length);

/* Whether [address, address + length) overlaps no range of the space (space.c). */
int cw_space_is_free(cw_space *s, uint64_t address, uint64_t length);

/* Finds an image's unwind table (.eh_frame_hdr, else .eh_frame or .debug_frame) and sets its
 * table_state, info and problem (ehframe.c). */
void cw_ehframe_load_table(cw_space *s, struct cw_image *image);

/* Points libunwind at a binary-search table of `entries` {pc, fde} int32 pairs relative to `segbase`,
 * sitting in the space at `table`: the image's unwind table from now on (ehframe.c). */
void cw_ehframe_use_table(struct cw_image *image, uint64_t segbase, uint64_t table, uint64_t entries, const char *problem);

/* Indexes the .eh_frame records at `eh_frame` into a table relative to `hdr` placed in the space;
 * the number of entries, 0 when none (ehframe.c). */
size_t cw_ehframe_index(cw_space *s, struct cw_image *image, uint64_t eh_frame, uint64_t hdr);

/* Builds the image's table from its file's sections when it has no .eh_frame_hdr; 0 when one was built
 * (debugframe.c). */
int cw_debugframe_load(cw_space *s, struct cw_image *image, uint64_t bias);

/* A libunwind address space whose accessors read the space of the unwind in progress (unwind.c). */
unw_addr_space_t cw_unwind_address_space_create(void);

#endif /* CCRASHWATCH_SPACE_INTERNAL_H */
