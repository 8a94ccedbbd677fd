/*
 * unwind.c — stack unwinding with libunwind (whose API is macros, so it is called from C) over a
 * captured address space: no ptrace, no /proc, no path. The space is a set of byte ranges the caller
 * supplies — stack bytes copied while the process was held, image bytes copied from its memory, and
 * image files opened safely and checked by the caller — plus the list of loaded images. Unwind tables
 * are found here, from each image's program headers and `.eh_frame_hdr` read through the same space,
 * every length checked before use; libunwind only ever sees memory through `access_mem`.
 *
 * Everything read here may come from a hostile process: reads are bounded by the ranges, header
 * counts are capped, and a table libunwind would abort() on is refused before libunwind sees it.
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include <gelf.h>

#define UNW_REMOTE_ONLY
#include <libunwind.h>

#define CW_PAGE_SIZE 4096u
#define CW_CACHE_SLOTS 512u /* 2 MiB of cached file pages per space */
#define CW_MAX_RANGES (1u << 20)
#define CW_MAX_IMAGES 65536u
#define CW_MAX_PROGRAM_HEADERS 512u

/* libunwind's table search (exported, not declared in its public headers). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

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

struct cw_space;
static size_t index_eh_frame(struct cw_space *s, struct cw_image *image, uint64_t eh_frame, uint64_t hdr);
static int load_debug_frame(struct cw_space *s, struct cw_image *image, uint64_t bias);

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

/* The space and register snapshot of the unwind in progress (libunwind hands accessors only `arg`). */
static __thread cw_space *current_space;
static __thread const uint64_t *current_registers;
static __thread size_t current_register_count;

/* ---- ranges ---- */

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

static void sort_space(cw_space *s) {
    if (!s->ranges_sorted) qsort(s->ranges, s->range_count, sizeof *s->ranges, by_range_start);
    if (!s->images_sorted) qsort(s->images, s->image_count, sizeof *s->images, by_image_start);
    s->ranges_sorted = s->images_sorted = 1;
}

/* The range holding `address`: the last one starting at or before it that still covers it. */
static const struct cw_range *range_at(cw_space *s, uint64_t address, uint64_t *next_start) {
    size_t low = 0, high = s->range_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (s->ranges[middle].start <= address) low = middle + 1;
        else high = middle;
    }
    /* A later range may start inside this one: stop there, it may be the better source. */
    *next_start = low < s->range_count ? s->ranges[low].start : UINT64_MAX;
    /* Ranges may overlap (a stack captured twice, copied bytes over a file range): of those covering
     * the address among the last few starting before it, the best source. */
    const struct cw_range *best = NULL;
    for (size_t i = low, steps = 0; i > 0 && steps < 8; i--, steps++) {
        const struct cw_range *r = &s->ranges[i - 1];
        if (address < r->start || address >= r->end) continue;
        if (!best || (r->bytes && !best->bytes) || (r->fd >= 0 && !best->bytes && best->fd < 0)) best = r;
    }
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
    sort_space(s);
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

static int read_exact(cw_space *s, uint64_t address, void *buffer, size_t length) {
    return cw_space_read(s, address, buffer, length) == (ssize_t)length ? 0 : -1;
}

/* ---- unwind tables from .eh_frame_hdr ---- */

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/* Reads one pointer of `encoding` at *at (advancing it); `hdr` is the base for datarel. */
static int read_encoded(cw_space *s, uint64_t *at, uint8_t encoding, uint64_t hdr, uint64_t *value) {
    uint64_t where = *at, raw = 0;
    size_t size;
    switch (encoding & 0x0f) {
    case DW_EH_PE_absptr:
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8: size = 8; break;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4: size = 4; break;
    default: return -1;
    }
    if (size == 8) {
        if (read_exact(s, where, &raw, 8) != 0) return -1;
    } else {
        uint32_t word;
        if (read_exact(s, where, &word, 4) != 0) return -1;
        raw = (encoding & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)word : word;
    }
    switch (encoding & 0x70) {
    case 0: break;
    case DW_EH_PE_pcrel: raw += where; break;
    case DW_EH_PE_datarel: raw += hdr; break;
    default: return -1;
    }
    *at = where + size;
    *value = raw;
    return 0;
}

typedef struct {
    uint32_t p_type, p_flags;
    uint64_t p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
} cw_phdr;

/* Points libunwind at a binary-search table of `entries` {pc, fde} int32 pairs relative to `segbase`,
 * sitting in the space at `table`: the image's unwind table from now on. */
static void use_table(struct cw_image *image, uint64_t segbase, uint64_t table, uint64_t entries, const char *problem) {
    memset(&image->info, 0, sizeof image->info);
    image->info.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    image->info.start_ip = image->start;
    image->info.end_ip = image->end;
    image->info.u.rti.segbase = segbase;
    image->info.u.rti.table_data = table;
    image->info.u.rti.table_len = entries * 8 / sizeof(unw_word_t);
    image->problem = problem;
    image->table_state = TABLE_FOUND;
}

/* Finds an image's .eh_frame_hdr through its ELF header and program headers and fills `info`. */
static void load_table(cw_space *s, struct cw_image *image) {
    image->table_state = TABLE_MISSING;
    uint8_t ehdr[64];
    if (read_exact(s, image->base, ehdr, sizeof ehdr) != 0) {
        image->problem = "its ELF header is not readable";
        return;
    }
    if (memcmp(ehdr, "\x7f" "ELF", 4) != 0 || ehdr[4] != 2 || ehdr[5] != 1) {
        image->problem = "its ELF header is not a 64-bit little-endian ELF header";
        return;
    }
    uint64_t phoff;
    uint16_t phentsize, phnum;
    memcpy(&phoff, ehdr + 32, 8);
    memcpy(&phentsize, ehdr + 54, 2);
    memcpy(&phnum, ehdr + 56, 2);
    if (phentsize < sizeof(cw_phdr) || phnum == 0 || phnum > CW_MAX_PROGRAM_HEADERS ||
        phoff > UINT64_MAX - (uint64_t)phnum * phentsize || image->base > UINT64_MAX - phoff - (uint64_t)phnum * phentsize) {
        image->problem = "its program header table is invalid";
        return;
    }
    int have_load = 0, have_hdr = 0;
    uint64_t first_load_offset = 0, first_load_vaddr = 0, hdr_vaddr = 0, hdr_size = 0;
    for (uint16_t i = 0; i < phnum; i++) {
        cw_phdr ph;
        if (read_exact(s, image->base + phoff + (uint64_t)i * phentsize, &ph, sizeof ph) != 0) {
            image->problem = "its program headers are not readable";
            return;
        }
        if (ph.p_type == 1 /* PT_LOAD */ && (!have_load || ph.p_offset < first_load_offset)) {
            have_load = 1;
            first_load_offset = ph.p_offset;
            first_load_vaddr = ph.p_vaddr;
        } else if (ph.p_type == 0x6474e550 /* PT_GNU_EH_FRAME */) {
            have_hdr = 1;
            hdr_vaddr = ph.p_vaddr;
            hdr_size = ph.p_memsz;
        }
    }
    if (!have_load) {
        image->problem = "it has no loadable segment";
        return;
    }
    uint64_t bias = image->base - (first_load_vaddr - first_load_offset);
    if (!have_hdr) {
        /* .eh_frame without a header, or — Go, C built with -fno-asynchronous-unwind-tables — only the
         * file's .debug_frame. */
        if (load_debug_frame(s, image, bias) == 0) return;
        image->problem = "it has no .eh_frame_hdr (PT_GNU_EH_FRAME), and no usable .eh_frame or .debug_frame";
        return;
    }
    uint64_t hdr = bias + hdr_vaddr;
    uint8_t head[4];
    if (hdr_size < 4 || read_exact(s, hdr, head, 4) != 0) {
        image->problem = "its .eh_frame_hdr is not readable";
        return;
    }
    if (head[0] != 1) {
        image->problem = "its .eh_frame_hdr has an unknown version";
        return;
    }
    uint64_t at = hdr + 4, eh_frame = 0, fde_count = 0;
    int pointer_ok = head[1] != DW_EH_PE_omit && read_encoded(s, &at, head[1], hdr, &eh_frame) == 0;
    int count_ok = pointer_ok && head[2] != DW_EH_PE_omit && read_encoded(s, &at, head[2], hdr, &fde_count) == 0;
    uint64_t header_bytes = at - hdr;
    const char *table_problem = NULL;
    /* libunwind's binary search only understands this table encoding, and aborts on others. */
    if (head[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) {
        table_problem = "its .eh_frame_hdr table encoding is not datarel|sdata4";
    } else if (!count_ok) {
        table_problem = "its .eh_frame_hdr header is invalid";
    } else if (header_bytes > hdr_size || fde_count == 0 || fde_count > (hdr_size - header_bytes) / 8) {
        table_problem = "its .eh_frame_hdr table does not fit its segment";
    }
    if (!table_problem) {
        use_table(image, hdr, at, fde_count, NULL);
        return;
    }
    /* The table is unusable, but .eh_frame itself may be fine: index it ourselves, as gdb does. */
    size_t entries = pointer_ok ? index_eh_frame(s, image, eh_frame, hdr) : 0;
    if (entries == 0) {
        image->problem = pointer_ok ? table_problem : "its .eh_frame_hdr header is invalid";
        return;
    }
    use_table(image, hdr, image->index_address, entries, head[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)
        ? "its .eh_frame_hdr table encoding is not datarel|sdata4; its .eh_frame was indexed instead"
        : "its .eh_frame_hdr table is unusable; its .eh_frame was indexed instead");
}

/* Reads a ULEB128 at *at (advancing it); -1 past `end` or when longer than 10 bytes. */
static int read_uleb(cw_space *s, uint64_t *at, uint64_t end, uint64_t *value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t byte;
        if (*at >= end || read_exact(s, *at, &byte, 1) != 0) return -1;
        (*at)++;
        if (shift < 64) result |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *value = result;
            return 0;
        }
    }
    return -1;
}

/* The pointer encoding of an FDE's pc_begin, from its CIE's augmentation ("zR", "zPLR", …); -1 when unknown. */
static int fde_encoding(cw_space *s, uint64_t cie, uint64_t end) {
    uint32_t length32, id;
    if (read_exact(s, cie, &length32, 4) != 0 || length32 == 0xffffffffu) return -1;
    uint64_t cie_end = cie + 4 + length32;
    if (cie_end > end || read_exact(s, cie + 4, &id, 4) != 0 || id != 0) return -1;
    uint64_t at = cie + 8;
    uint8_t version;
    if (read_exact(s, at++, &version, 1) != 0 || (version != 1 && version != 3)) return -1;
    char augmentation[16];
    size_t n = 0;
    for (;;) {
        if (n == sizeof augmentation || at >= cie_end || read_exact(s, at++, &augmentation[n], 1) != 0) return -1;
        if (augmentation[n] == 0) break;
        n++;
    }
    if (n == 0 || augmentation[0] != 'z') return DW_EH_PE_absptr;
    uint64_t ignored;
    if (read_uleb(s, &at, cie_end, &ignored) != 0 || read_uleb(s, &at, cie_end, &ignored) != 0) return -1; /* code, data align */
    if (version == 1) at++;
    else if (read_uleb(s, &at, cie_end, &ignored) != 0) return -1; /* return register */
    if (read_uleb(s, &at, cie_end, &ignored) != 0) return -1;   /* augmentation length */
    for (size_t i = 1; i < n; i++) {
        uint8_t encoding;
        switch (augmentation[i]) {
        case 'R':
            if (at >= cie_end || read_exact(s, at, &encoding, 1) != 0) return -1;
            return encoding;
        case 'L': at++; break;
        case 'P': {
            uint64_t value;
            if (read_exact(s, at++, &encoding, 1) != 0 || read_encoded(s, &at, encoding & 0x7f, 0, &value) != 0) return -1;
            break;
        }
        case 'S': case 'B': break;
        default: return -1;
        }
    }
    return DW_EH_PE_absptr;
}

static int by_table_start(const void *a, const void *b) {
    const int32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Walks .eh_frame from `eh_frame` to its terminator (or the image's end, at most 64 MiB and 1M FDEs)
 * and builds the binary-search table .eh_frame_hdr should have held: {pc_begin, fde} pairs relative to
 * `hdr`, sorted. The table is placed in the space at an address no process can map (the kernel half),
 * where libunwind reads it through access_mem like any other. Returns the number of entries. */
static size_t index_eh_frame(cw_space *s, struct cw_image *image, uint64_t eh_frame, uint64_t hdr) {
    if (eh_frame < image->start || eh_frame >= image->end) return 0;
    uint64_t end = image->end - eh_frame > (64u << 20) ? eh_frame + (64u << 20) : image->end;
    size_t count = 0, capacity = 0;
    int32_t *table = NULL;
    uint64_t cached_cie = 0;
    int cached_encoding = -1;
    for (uint64_t at = eh_frame; at + 8 <= end && count < (1u << 20);) {
        uint32_t length, id;
        if (read_exact(s, at, &length, 4) != 0 || length == 0 || length == 0xffffffffu) break;
        uint64_t next = at + 4 + length;
        if (next > end || next <= at || read_exact(s, at + 4, &id, 4) != 0) break;
        if (id != 0) { /* an FDE: id is the distance back to its CIE */
            uint64_t cie = at + 4 - id;
            if (cie != cached_cie) {
                cached_cie = cie;
                cached_encoding = cie >= eh_frame && cie < at ? fde_encoding(s, cie, end) : -1;
            }
            uint64_t field = at + 8, pc_begin;
            if (cached_encoding >= 0 && read_encoded(s, &field, (uint8_t)(cached_encoding & 0x7f), hdr, &pc_begin) == 0 &&
                pc_begin >= image->start && pc_begin < image->end) {
                int64_t start_offset = (int64_t)(pc_begin - hdr), fde_offset = (int64_t)(at - hdr);
                if (start_offset == (int32_t)start_offset && fde_offset == (int32_t)fde_offset) {
                    if (count == capacity) {
                        size_t bigger = capacity ? capacity * 2 : 256;
                        int32_t *grown = realloc(table, bigger * 2 * sizeof *table);
                        if (!grown) break;
                        table = grown;
                        capacity = bigger;
                    }
                    table[2 * count] = (int32_t)start_offset;
                    table[2 * count + 1] = (int32_t)fde_offset;
                    count++;
                }
            }
        }
        at = next;
    }
    if (count == 0) {
        free(table);
        return 0;
    }
    qsort(table, count, 2 * sizeof *table, by_table_start);
    image->index = table;
    image->index_address = 0xfff0000000000000ull + ((uint64_t)(image - s->images) << 32);
    if (cw_space_add_bytes(s, image->index_address, table, count * 2 * sizeof *table) != 0) return 0;
    return count;
}

/* ---- .debug_frame ---- */

#define CW_MAX_DEBUG_FRAME (64u << 20)

/* Whether [address, address + length) overlaps no range of the space. */
static int space_is_free(cw_space *s, uint64_t address, uint64_t length) {
    for (size_t i = 0; i < s->range_count; i++) {
        if (s->ranges[i].start < address + length && address < s->ranges[i].end) return 0;
    }
    return 1;
}

/* Appends to a growing buffer; -1 past the cap. */
static int put(uint8_t **buffer, size_t *size, size_t *capacity, const void *bytes, size_t length) {
    if (*size + length > CW_MAX_DEBUG_FRAME) return -1;
    if (*size + length > *capacity) {
        size_t bigger = *capacity ? *capacity * 2 : 65536;
        while (bigger < *size + length) bigger *= 2;
        uint8_t *grown = realloc(*buffer, bigger);
        if (!grown) return -1;
        *buffer = grown;
        *capacity = bigger;
    }
    memcpy(*buffer + *size, bytes, length);
    *size += length;
    return 0;
}

/* Reads the image file's .debug_frame (decompressed), rewrites it as .eh_frame records — CIE id 0, FDEs
 * pointing back at their CIE, version 4 CIEs as version 3, pc_begin made absolute with the load bias and
 * kept 8-byte absolute (an empty augmentation) — places that in the space near the image, where int32
 * offsets reach its code, and indexes it like .eh_frame. Every field is bounds-checked; CIEs with an
 * augmentation, 64-bit records and FDEs outside the image are skipped. Returns 0 when a table was built. */
static int load_debug_frame(cw_space *s, struct cw_image *image, uint64_t bias) {
    if (image->fd < 0) return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(image->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    if (!elf) return -1;
    size_t strndx;
    Elf_Scn *scn = NULL, *found = NULL;
    uint64_t eh_frame_address = 0;
    if (elf_getshdrstrndx(elf, &strndx) == 0) {
        while ((scn = elf_nextscn(elf, scn)) != NULL) {
            GElf_Shdr shdr;
            const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, strndx, shdr.sh_name) : NULL;
            if (!name) continue;
            if (strcmp(name, ".debug_frame") == 0) found = scn;
            if (strcmp(name, ".eh_frame") == 0 && (shdr.sh_flags & SHF_ALLOC) && shdr.sh_size > 0) eh_frame_address = shdr.sh_addr + bias;
        }
    }
    /* .eh_frame without its header (linked with --no-eh-frame-hdr): it is loaded, so index it in place. */
    if (eh_frame_address >= image->start && eh_frame_address < image->end) {
        size_t entries = index_eh_frame(s, image, eh_frame_address, eh_frame_address);
        if (entries > 0) {
            elf_end(elf);
            use_table(image, eh_frame_address, image->index_address, entries,
                      "it has no .eh_frame_hdr; its .eh_frame was indexed instead");
            return 0;
        }
    }
    GElf_Shdr shdr;
    Elf_Data *data = NULL;
    if (found && gelf_getshdr(found, &shdr) && shdr.sh_type == SHT_PROGBITS) {
        if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(found, 0, 0) < 0) found = NULL;
        if (found) data = elf_getdata(found, NULL);
    }
    if (!data || !data->d_buf || data->d_size < 8 || data->d_size > CW_MAX_DEBUG_FRAME) {
        elf_end(elf);
        return -1;
    }
    const uint8_t *in = data->d_buf;
    size_t in_size = data->d_size;
    uint8_t *out = NULL;
    size_t out_size = 0, out_capacity = 0;
    /* Old CIE offset → new CIE offset (0 when the CIE was skipped), in a small open-addressed map. */
    enum { SLOTS = 4096 };
    uint64_t *cie_old = calloc(SLOTS, sizeof *cie_old), *cie_new = calloc(SLOTS, sizeof *cie_new);
    int ok = cie_old && cie_new;
    for (size_t at = 0; ok && at + 8 <= in_size;) {
        uint32_t length, id;
        memcpy(&length, in + at, 4);
        if (length == 0xffffffffu || length < 4 || length > in_size - at - 4) break;
        size_t next = at + 4 + length;
        memcpy(&id, in + at + 4, 4);
        if (id == 0xffffffffu) { /* a CIE */
            size_t p = at + 8;
            uint8_t version = in[p++];
            if ((version != 1 && version != 3 && version != 4) || p >= next || in[p] != 0) { at = next; continue; }
            p++; /* the empty augmentation string */
            if (version == 4) {
                if (p + 2 > next || in[p] != 8) { at = next; continue; } /* 8-byte addresses only */
                p += 2;
            }
            uint32_t new_length = (uint32_t)(4 + 1 + 1 + (next - p));
            uint32_t zero = 0;
            uint8_t header[2] = {version == 4 ? 3 : version, 0};
            size_t new_offset = out_size;
            if (put(&out, &out_size, &out_capacity, &new_length, 4) || put(&out, &out_size, &out_capacity, &zero, 4) ||
                put(&out, &out_size, &out_capacity, header, 2) || put(&out, &out_size, &out_capacity, in + p, next - p)) {
                ok = 0;
                break;
            }
            size_t slot = (at * 2654435761u) % SLOTS;
            for (int probe = 0; probe < SLOTS && cie_old[slot] != 0 && cie_old[slot] != at + 1; probe++) slot = (slot + 1) % SLOTS;
            cie_old[slot] = at + 1;
            cie_new[slot] = new_offset + 1;
        } else if (length >= 4 + 16) { /* an FDE: id is its CIE's offset in the section */
            size_t slot = ((size_t)id * 2654435761u) % SLOTS;
            uint64_t cie = 0;
            for (int probe = 0; probe < SLOTS && cie_old[slot] != 0; probe++, slot = (slot + 1) % SLOTS) {
                if (cie_old[slot] == (uint64_t)id + 1) {
                    cie = cie_new[slot];
                    break;
                }
            }
            uint64_t pc_begin, pc_range;
            memcpy(&pc_begin, in + at + 8, 8);
            memcpy(&pc_range, in + at + 16, 8);
            pc_begin += bias;
            if (cie != 0 && pc_begin >= image->start && pc_begin < image->end) {
                uint32_t back = (uint32_t)(out_size + 4 - (cie - 1));
                if (put(&out, &out_size, &out_capacity, &length, 4) || put(&out, &out_size, &out_capacity, &back, 4) ||
                    put(&out, &out_size, &out_capacity, &pc_begin, 8) || put(&out, &out_size, &out_capacity, &pc_range, 8) ||
                    put(&out, &out_size, &out_capacity, in + at + 24, next - at - 24)) {
                    ok = 0;
                    break;
                }
            }
        }
        at = next;
    }
    free(cie_old);
    free(cie_new);
    elf_end(elf);
    uint32_t terminator = 0;
    if (!ok || out_size == 0 || put(&out, &out_size, &out_capacity, &terminator, 4) != 0) {
        free(out);
        return -1;
    }
    /* Below the image if there is room, else above it: within int32 reach of its code. */
    uint64_t length = (out_size + 0xfff) & ~(uint64_t)0xfff, address = 0;
    if (image->start > length + 0x10000 && space_is_free(s, image->start - length - 0x1000, length)) {
        address = image->start - length - 0x1000;
    } else if (image->end < UINT64_MAX - length - 0x2000 && space_is_free(s, image->end + 0x1000, length)) {
        address = image->end + 0x1000;
    }
    if (address == 0 || cw_space_add_bytes(s, address, out, out_size) != 0) {
        free(out);
        return -1;
    }
    image->converted = out;
    /* The records are not inside the image: widen the walk's bounds for the index to them. */
    uint64_t saved_start = image->start, saved_end = image->end;
    image->start = address < saved_start ? address : saved_start;
    image->end = address + out_size > saved_end ? address + out_size : saved_end;
    size_t entries = index_eh_frame(s, image, address, address);
    image->start = saved_start;
    image->end = saved_end;
    if (entries == 0) return -1;
    use_table(image, address, image->index_address, entries, "it has no .eh_frame_hdr; its .debug_frame was used");
    return 0;
}

static struct cw_image *image_at(cw_space *s, uint64_t ip) {
    sort_space(s);
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

/* ---- libunwind accessors ---- */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *arg) {
    struct cw_image *image = image_at(current_space, ip);
    if (!image) return -UNW_ENOINFO;
    if (image->table_state == TABLE_UNKNOWN) load_table(current_space, image);
    if (image->table_state != TABLE_FOUND) return -UNW_ENOINFO;
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &image->info, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
    /* libunwind calls this for dynamic (JIT-registered) info only, which this space never yields;
     * table info is freed by libunwind itself. */
    (void)as; (void)pi; (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg) {
    (void)as; (void)dilap; (void)arg;
    return -UNW_ENOINFO; /* no JIT-registered unwind info */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg) {
    (void)as;
    (void)arg;
    if (write) return -UNW_EREADONLYREG;
    return read_exact(current_space, addr, val, sizeof *val) == 0 ? 0 : -UNW_EINVAL;
}

/* libunwind register number → index in the kernel's NT_PRSTATUS layout. */
static int register_index(unw_regnum_t reg) {
#if defined(__x86_64__)
    /* user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ... */
    static const int map[] = {
        [UNW_X86_64_RAX] = 10, [UNW_X86_64_RDX] = 12, [UNW_X86_64_RCX] = 11, [UNW_X86_64_RBX] = 5,
        [UNW_X86_64_RSI] = 13, [UNW_X86_64_RDI] = 14, [UNW_X86_64_RBP] = 4, [UNW_X86_64_RSP] = 19,
        [UNW_X86_64_R8] = 9, [UNW_X86_64_R9] = 8, [UNW_X86_64_R10] = 7, [UNW_X86_64_R11] = 6,
        [UNW_X86_64_R12] = 3, [UNW_X86_64_R13] = 2, [UNW_X86_64_R14] = 1, [UNW_X86_64_R15] = 0,
        [UNW_X86_64_RIP] = 16,
    };
    if (reg >= 0 && reg <= UNW_X86_64_RIP) return map[reg];
    return -1;
#elif defined(__aarch64__)
    /* user_pt_regs: x0..x30, sp, pc, pstate — the same order as libunwind's numbering. */
    if (reg >= UNW_AARCH64_X0 && reg <= UNW_AARCH64_PSTATE) return (int)reg;
    return -1;
#else
    (void)reg;
    return -1;
#endif
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg) {
    (void)as;
    (void)arg;
    if (write) return -UNW_EREADONLYREG;
    int index = register_index(reg);
    if (index < 0 || (size_t)index >= current_register_count) return -UNW_EBADREG;
    *val = current_registers[index];
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg) {
    (void)as; (void)reg; (void)val; (void)write; (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg) {
    (void)as; (void)c; (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *offp, void *arg) {
    (void)as; (void)addr; (void)buf; (void)len; (void)offp; (void)arg;
    return -UNW_ENOINFO; /* names come from libdw */
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

/* ---- the space ---- */

cw_space *cw_space_create(void) {
    cw_space *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->page_address = malloc(CW_CACHE_SLOTS * sizeof *s->page_address);
    s->pages = malloc((size_t)CW_CACHE_SLOTS * CW_PAGE_SIZE);
    s->space = unw_create_addr_space(&accessors, 0);
    if (!s->page_address || !s->pages || !s->space) {
        int e = errno ? errno : ENOMEM;
        cw_space_destroy(s);
        errno = e;
        return NULL;
    }
    for (size_t i = 0; i < CW_CACHE_SLOTS; i++) s->page_address[i] = UINT64_MAX;
    unw_set_caching_policy(s->space, UNW_CACHE_GLOBAL);
    s->ranges_sorted = s->images_sorted = 1;
    return s;
}

void cw_space_destroy(cw_space *s) {
    if (!s) return;
    if (s->space) unw_destroy_addr_space(s->space);
    free(s->ranges);
    for (size_t i = 0; i < s->image_count; i++) {
        free(s->images[i].index);
        free(s->images[i].converted);
    }
    free(s->images);
    free(s->page_address);
    free(s->pages);
    free(s);
}

int cw_space_table_kind(cw_space *s, uint64_t address) {
    struct cw_image *image = image_at(s, address);
    if (!image) return CW_TABLE_NONE;
    if (image->table_state == TABLE_UNKNOWN) load_table(s, image);
    if (image->table_state != TABLE_FOUND) return CW_TABLE_NONE;
    if (image->converted) return CW_TABLE_DEBUG_FRAME;
    return image->index ? CW_TABLE_EH_FRAME_INDEXED : CW_TABLE_EH_FRAME_HDR;
}

int cw_space_set_image_file(cw_space *s, uint64_t start, int fd) {
    sort_space(s);
    struct cw_image *image = image_at(s, start);
    if (!image || image->start != start) return -1;
    image->fd = fd;
    return 0;
}

const char *cw_space_image_problem(cw_space *s, uint64_t address) {
    struct cw_image *image = image_at(s, address);
    if (!image) return NULL;
    if (image->table_state == TABLE_UNKNOWN) load_table(s, image);
    return image->problem;
}

int cw_unwind(cw_space *s, const uint64_t *registers, size_t register_count,
              cw_frame *frames, int max_frames, int *stop) {
    sort_space(s);
    current_space = s;
    current_registers = registers;
    current_register_count = register_count;
    *stop = CW_UNWIND_STOP_END;

    unw_cursor_t cursor;
    int result = unw_init_remote(&cursor, s->space, NULL);
    if (result < 0) {
        *stop = result;
        current_space = NULL;
        return 0;
    }
    int count = 0;
    while (count < max_frames) {
        unw_word_t pc = 0, sp = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &pc);
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        /* A zero return address ends the stack (Go's goexit, a thread's outermost frame): it is no frame. */
        if (pc == 0 && count > 0) {
            *stop = CW_UNWIND_STOP_END;
            break;
        }
        unw_proc_info_t info;
        cw_frame *frame = &frames[count];
        frame->pc = pc;
        frame->sp = sp;
        frame->signal_frame = unw_is_signal_frame(&cursor) > 0;
        frame->has_unwind_info = unw_get_proc_info(&cursor, &info) == 0 && info.format != UNW_INFO_FORMAT_DYNAMIC;
        if (count > 0) {
            const cw_frame *previous = &frames[count - 1];
            /* The stack grows down: a caller's frame never sits below its callee's, except where a
             * signal interrupted it (the handler may have run on an alternate stack). libunwind marks
             * the interrupted frame, the one restored from the signal frame's saved context. */
            if ((sp < previous->sp && !frame->signal_frame) || (sp == previous->sp && pc == previous->pc)) {
                *stop = CW_UNWIND_STOP_NO_PROGRESS;
                break;
            }
        }
        count++;
        if (pc == 0) {
            *stop = CW_UNWIND_STOP_END;
            break;
        }
        result = unw_step(&cursor);
        if (result == 0) {
            *stop = CW_UNWIND_STOP_END;
            break;
        }
        if (result < 0) {
            *stop = result;
            break;
        }
        if (count == max_frames) *stop = CW_UNWIND_STOP_LIMIT;
    }
    current_space = NULL;
    return count;
}

const char *cw_unwind_error_name(int code) {
    return unw_strerror(code);
}
