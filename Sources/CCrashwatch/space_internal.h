/*
 * space_internal.h — the captured address space from the inside, shared by the files that build and read
 * it: space.c (ranges, images, reads), ehframe.c (an image's .eh_frame_hdr or .eh_frame), debugframe.c
 * (its file's .debug_frame, or its .eh_frame without a header) and unwind.c (libunwind's accessors).
 * Not part of the Swift module.
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

/* The unwind tables of an image, each used for the addresses it covers (a cgo binary's .eh_frame covers its
 * C objects, its .debug_frame the Go code): what the image loads (.eh_frame, through .eh_frame_hdr or an
 * index built here), then its file's .debug_frame, looked for the first time the first misses an address. */
enum { SLOT_EH_FRAME = 0, SLOT_DEBUG_FRAME, SLOT_COUNT };

/* One unwind table: a binary-search table of {pc, fde} pairs libunwind reads through the space. */
struct cw_table {
    int state;              /* TABLE_UNKNOWN until looked for */
    unw_dyn_info_t info;
    int32_t *index;         /* a table built here (over .eh_frame, or the converted .debug_frame) */
    uint64_t index_address; /* where that table sits in the space */
    uint8_t *converted;     /* .debug_frame rewritten as .eh_frame records */
};

struct cw_image {
    uint64_t start, end, base;
    int segments_read;   /* the ELF header and program headers were read: `bias` is known */
    uint64_t bias;       /* load address - link-time address */
    const char *problem; /* what is wrong with the image's .eh_frame (or why it has no table at all); static text */
    int fd;              /* the image's file, for .debug_frame and a header-less .eh_frame (-1: none) */
    struct cw_table tables[SLOT_COUNT];
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
    /* The last range lookup's answer and the addresses [hint_low, hint_high) it holds for (libunwind reads a
     * word at a time, mostly from the range it read last); hint_high 0 when there is none. */
    uint64_t hint_low, hint_high, hint_next_start;
    const struct cw_range *hint_range;
    /* Which table covers an address, remembered per address (`cw_unwind_covering_slot`): threads share most
     * of their return addresses. Slots keyed by address + 1 (0: empty); cleared when ranges or images are added. */
    struct cw_slot_memo { uint64_t key; int slot; } *slot_memo;
    int slot_memo_stale;
};

/* Sorts the ranges and images added since the last lookup (space.c). */
void cw_space_sort(cw_space *s);

/* The image containing `ip`, or NULL (space.c). */
struct cw_image *cw_space_image_at(cw_space *s, uint64_t ip);

/* Reads exactly `length` bytes at `address`: 0, or -1 when any is missing (space.c). */
int cw_space_read_exact(cw_space *s, uint64_t address, void *buffer, size_t length);

/* Whether [address, address + length) overlaps no range of the space (space.c). */
int cw_space_is_free(cw_space *s, uint64_t address, uint64_t length);

/* The image's table in `slot`, looked for on first use; NULL when it has none (ehframe.c). */
struct cw_table *cw_image_table(cw_space *s, struct cw_image *image, int slot);

/* Finds the image's loaded .eh_frame (through .eh_frame_hdr, else indexed) and sets its slot's state and
 * info and the image's problem (ehframe.c). */
void cw_ehframe_load_table(cw_space *s, struct cw_image *image);

/* Points libunwind at a binary-search table of `entries` {pc, fde} int32 pairs relative to `segbase`,
 * sitting in the space at `table_address`: `table` from now on (ehframe.c). */
void cw_ehframe_use_table(struct cw_image *image, struct cw_table *table, uint64_t segbase, uint64_t table_address,
                          uint64_t entries);

/* Indexes the .eh_frame records at `eh_frame` into `table`'s binary-search table relative to `hdr`, placed
 * in the space; the number of entries, 0 when none (ehframe.c). */
size_t cw_ehframe_index(cw_space *s, struct cw_image *image, struct cw_table *table, uint64_t eh_frame, uint64_t hdr);

/* Indexes the .eh_frame of the image's file in place when the image has no .eh_frame_hdr (linked with
 * --no-eh-frame-hdr); 0 when a table was built (debugframe.c). */
int cw_debugframe_index_eh_frame(cw_space *s, struct cw_image *image);

/* Builds the image's .debug_frame table from its file's section; 0 when one was built (debugframe.c). */
int cw_debugframe_load(cw_space *s, struct cw_image *image);

/* Which of the tables of the image containing `ip` (SLOT_*) has an FDE covering it, or -1; remembered
 * per address (unwind.c). */
int cw_unwind_covering_slot(cw_space *s, uint64_t ip);

/* The number of slots of `cw_space.slot_memo`. */
#define CW_SLOT_MEMO_SIZE 4096u

/* A libunwind address space whose accessors read the space of the unwind in progress (unwind.c). */
unw_addr_space_t cw_unwind_address_space_create(void);

#endif /* CCRASHWATCH_SPACE_INTERNAL_H */
