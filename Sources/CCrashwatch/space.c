/*
 * space.c — a process's address space as captured: byte ranges (stack and image bytes copied while the
 * process was held), file-backed ranges (image files opened safely and checked by the caller, read through
 * a small page cache), zero ranges, and the loaded images. No ptrace, no /proc, no path: the unwinders
 * read nothing else. Everything in it may come from a hostile process: reads are bounded by the ranges.
 */
#define _GNU_SOURCE
#include "ccrashwatch/space.h"
#include "space_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CW_PAGE_SIZE 4096u
#define CW_CACHE_SLOTS 512u /* 2 MiB of cached file pages per space */
#define CW_MAX_RANGES (1u << 20)
#define CW_MAX_IMAGES 65536u

static int grow(void **array, size_t *capacity, size_t element, size_t limit) {
    size_t next = *capacity ? *capacity * 2 : 64;
    if (next > limit) next = limit;
    if (next <= *capacity) {
        errno = E2BIG;
        return -1;
    }
    void *bigger = realloc(*array, next * element);
    if (!bigger) return -1;
    *array = bigger;
    *capacity = next;
    return 0;
}

static int add_range(cw_space *s, struct cw_range range) {
    if (range.end <= range.start) return 0;
    if (s->range_count == s->range_capacity &&
        grow((void **)&s->ranges, &s->range_capacity, sizeof *s->ranges, CW_MAX_RANGES) != 0) return -1;
    s->ranges[s->range_count++] = range;
    s->ranges_sorted = 0;
    s->hint_high = 0;
    s->slot_memo_stale = 1;
    return 0;
}

int cw_space_add_bytes(cw_space *s, uint64_t address, const void *bytes, uint64_t length) {
    if (address + length < address) length = UINT64_MAX - address;
    return add_range(s, (struct cw_range){.start = address, .end = address + length, .bytes = bytes, .fd = -1});
}

int cw_space_add_file(cw_space *s, uint64_t address, uint64_t length, int fd, uint64_t offset) {
    if (address + length < address) length = UINT64_MAX - address;
    return add_range(s, (struct cw_range){.start = address, .end = address + length, .fd = fd, .offset = offset});
}

int cw_space_add_zeros(cw_space *s, uint64_t address, uint64_t length) {
    if (address + length < address) length = UINT64_MAX - address;
    return add_range(s, (struct cw_range){.start = address, .end = address + length, .fd = -1});
}

int cw_space_add_image(cw_space *s, uint64_t start, uint64_t end, uint64_t base) {
    if (end <= start) return 0;
    if (s->image_count == s->image_capacity &&
        grow((void **)&s->images, &s->image_capacity, sizeof *s->images, CW_MAX_IMAGES) != 0) return -1;
    s->images[s->image_count++] = (struct cw_image){.start = start, .end = end, .base = base, .fd = -1};
    s->images_sorted = 0;
    s->slot_memo_stale = 1;
    return 0;
}

static int by_range_start(const void *a, const void *b) {
    const struct cw_range *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    /* Captured bytes before a file range, a file range before zeros: the best source wins. */
    int rank_x = x->bytes ? 0 : x->fd >= 0 ? 1 : 2, rank_y = y->bytes ? 0 : y->fd >= 0 ? 1 : 2;
    return rank_x - rank_y;
}

static int by_image_start(const void *a, const void *b) {
    const struct cw_image *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

void cw_space_sort(cw_space *s) {
    if (!s->ranges_sorted) qsort(s->ranges, s->range_count, sizeof *s->ranges, by_range_start);
    if (!s->images_sorted) qsort(s->images, s->image_count, sizeof *s->images, by_image_start);
    s->ranges_sorted = s->images_sorted = 1;
}

/* The range holding `address`: the last one starting at or before it that still covers it. */
static const struct cw_range *range_at(cw_space *s, uint64_t address, uint64_t *next_start) {
    if (address >= s->hint_low && address < s->hint_high) {
        *next_start = s->hint_next_start;
        return s->hint_range;
    }
    size_t low = 0, high = s->range_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (s->ranges[middle].start <= address) low = middle + 1;
        else high = middle;
    }
    /* A later range may start inside this one: stop there, it may be the better source. */
    *next_start = low < s->range_count ? s->ranges[low].start : UINT64_MAX;
    if (low == 0) return NULL;
    /* Ranges may overlap (a stack captured twice, copied bytes over a file range): of those covering
     * the address among the last few starting before it, the best source. The same answer holds from the
     * last start at or before the address (or the end of a range in the window that ends before it) up to
     * the next start (or the end of a covering range). */
    const struct cw_range *best = NULL;
    uint64_t hint_low = s->ranges[low - 1].start, hint_high = *next_start;
    for (size_t i = low, steps = 0; i > 0 && steps < 8; i--, steps++) {
        const struct cw_range *r = &s->ranges[i - 1];
        if (address >= r->end) {
            if (r->end > hint_low) hint_low = r->end;
            continue;
        }
        if (r->end < hint_high) hint_high = r->end;
        if (!best || (r->bytes && !best->bytes) || (r->fd >= 0 && !best->bytes && best->fd < 0)) best = r;
    }
    s->hint_low = hint_low;
    s->hint_high = hint_high;
    s->hint_next_start = *next_start;
    s->hint_range = best;
    return best;
}

static int file_page(cw_space *s, const struct cw_range *r, uint64_t page, const uint8_t **out, size_t *valid) {
    size_t slot = (size_t)((page / CW_PAGE_SIZE) % CW_CACHE_SLOTS);
    uint8_t *data = s->pages + slot * CW_PAGE_SIZE;
    if (s->page_address[slot] != page) {
        uint64_t first = page < r->start ? r->start : page;
        size_t skip = (size_t)(first - page);
        uint64_t file_offset = r->offset + (first - r->start);
        memset(data, 0, CW_PAGE_SIZE);
        ssize_t n;
        do {
            n = pread(r->fd, data + skip, CW_PAGE_SIZE - skip, (off_t)file_offset);
        } while (n < 0 && errno == EINTR);
        if (n <= 0) {
            s->page_address[slot] = UINT64_MAX;
            return -1;
        }
        s->page_address[slot] = page;
    }
    *out = data;
    *valid = CW_PAGE_SIZE;
    return 0;
}

ssize_t cw_space_read(cw_space *s, uint64_t address, void *buffer, size_t length) {
    cw_space_sort(s);
    size_t done = 0;
    while (done < length) {
        uint64_t at = address + done;
        if (at < address) break; /* wrapped */
        uint64_t next_start;
        const struct cw_range *r = range_at(s, at, &next_start);
        if (!r) break;
        size_t want = length - done;
        if (r->end - at < want) want = (size_t)(r->end - at);
        if (next_start - at < want) want = (size_t)(next_start - at);
        if (r->bytes) {
            memcpy((uint8_t *)buffer + done, r->bytes + (at - r->start), want);
            done += want;
            continue;
        }
        if (r->fd < 0) {
            memset((uint8_t *)buffer + done, 0, want);
            done += want;
            continue;
        }
        uint64_t page = at & ~(uint64_t)(CW_PAGE_SIZE - 1);
        const uint8_t *data;
        size_t valid;
        if (file_page(s, r, page, &data, &valid) != 0) break;
        size_t offset = (size_t)(at - page);
        size_t chunk = valid - offset;
        if (chunk > want) chunk = want;
        memcpy((uint8_t *)buffer + done, data + offset, chunk);
        done += chunk;
    }
    if (done == 0 && length > 0) {
        errno = EFAULT;
        return -1;
    }
    return (ssize_t)done;
}

int cw_space_read_exact(cw_space *s, uint64_t address, void *buffer, size_t length) {
    return cw_space_read(s, address, buffer, length) == (ssize_t)length ? 0 : -1;
}

struct cw_image *cw_space_image_at(cw_space *s, uint64_t ip) {
    cw_space_sort(s);
    size_t low = 0, high = s->image_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        struct cw_image *image = &s->images[middle];
        if (ip < image->start) high = middle;
        else if (ip >= image->end) low = middle + 1;
        else return image;
    }
    return NULL;
}

/* Whether [address, address + length) overlaps no range of the space. */
int cw_space_is_free(cw_space *s, uint64_t address, uint64_t length) {
    for (size_t i = 0; i < s->range_count; i++) {
        if (s->ranges[i].start < address + length && address < s->ranges[i].end) return 0;
    }
    return 1;
}

cw_space *cw_space_create(void) {
    cw_space *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->page_address = malloc(CW_CACHE_SLOTS * sizeof *s->page_address);
    s->pages = malloc((size_t)CW_CACHE_SLOTS * CW_PAGE_SIZE);
    s->slot_memo = calloc(CW_SLOT_MEMO_SIZE, sizeof *s->slot_memo);
    s->space = cw_unwind_address_space_create();
    if (!s->page_address || !s->pages || !s->slot_memo || !s->space) {
        int e = errno ? errno : ENOMEM;
        cw_space_destroy(s);
        errno = e;
        return NULL;
    }
    for (size_t i = 0; i < CW_CACHE_SLOTS; i++) s->page_address[i] = UINT64_MAX;
    s->ranges_sorted = s->images_sorted = 1;
    return s;
}

void cw_space_destroy(cw_space *s) {
    if (!s) return;
    if (s->space) unw_destroy_addr_space(s->space);
    free(s->ranges);
    for (size_t i = 0; i < s->image_count; i++) {
        for (int slot = 0; slot < SLOT_COUNT; slot++) {
            free(s->images[i].tables[slot].index);
            free(s->images[i].tables[slot].converted);
        }
    }
    free(s->images);
    free(s->page_address);
    free(s->pages);
    free(s->slot_memo);
    free(s);
}

int cw_space_set_image_file(cw_space *s, uint64_t start, int fd) {
    cw_space_sort(s);
    struct cw_image *image = cw_space_image_at(s, start);
    if (!image || image->start != start) return -1;
    image->fd = fd;
    return 0;
}
