/*
 * ehframe.c — an image's unwind tables, found through its ELF header and program headers read from the
 * captured space: its .eh_frame_hdr binary-search table; where that table is missing or unusable, an
 * index built here over its .eh_frame (as gdb does); and, for the addresses .eh_frame does not cover (or
 * all of them, where it has none), its file's .debug_frame (debugframe.c). Every length is checked before
 * use, header counts are capped, and a table libunwind would abort() on is refused before libunwind sees it.
 */
#define _GNU_SOURCE
#include "ccrashwatch/ehframe.h"
#include "space_internal.h"

#include <stdlib.h>
#include <string.h>

#define CW_MAX_PROGRAM_HEADERS 512u

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
        if (cw_space_read_exact(s, where, &raw, 8) != 0) return -1;
    } else {
        uint32_t word;
        if (cw_space_read_exact(s, where, &word, 4) != 0) return -1;
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
 * sitting in the space at `table_address`: `table` from now on. */
void cw_ehframe_use_table(struct cw_image *image, struct cw_table *table, uint64_t segbase, uint64_t table_address,
                          uint64_t entries) {
    memset(&table->info, 0, sizeof table->info);
    table->info.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    table->info.start_ip = image->start;
    table->info.end_ip = image->end;
    table->info.u.rti.segbase = segbase;
    table->info.u.rti.table_data = table_address;
    table->info.u.rti.table_len = entries * 8 / sizeof(unw_word_t);
    table->state = TABLE_FOUND;
}

/* Where an image's unwind information is, from its ELF header and program headers. */
struct segments {
    uint64_t bias;          /* load address - link-time address */
    int have_hdr;           /* a PT_GNU_EH_FRAME segment: .eh_frame_hdr */
    uint64_t hdr_vaddr, hdr_size;
};

/* Reads the image's ELF header and program headers through the space; NULL, or why they are unusable. */
static const char *read_segments(cw_space *s, const struct cw_image *image, struct segments *out) {
    uint8_t ehdr[64];
    if (cw_space_read_exact(s, image->base, ehdr, sizeof ehdr) != 0) return "its ELF header is not readable";
    if (memcmp(ehdr, "\x7f" "ELF", 4) != 0 || ehdr[4] != 2 || ehdr[5] != 1) {
        return "its ELF header is not a 64-bit little-endian ELF header";
    }
    uint64_t phoff;
    uint16_t phentsize, phnum;
    memcpy(&phoff, ehdr + 32, 8);
    memcpy(&phentsize, ehdr + 54, 2);
    memcpy(&phnum, ehdr + 56, 2);
    if (phentsize < sizeof(cw_phdr) || phnum == 0 || phnum > CW_MAX_PROGRAM_HEADERS ||
        phoff > UINT64_MAX - (uint64_t)phnum * phentsize || image->base > UINT64_MAX - phoff - (uint64_t)phnum * phentsize) {
        return "its program header table is invalid";
    }
    int have_load = 0;
    uint64_t first_load_offset = 0, first_load_vaddr = 0;
    *out = (struct segments){0};
    for (uint16_t i = 0; i < phnum; i++) {
        cw_phdr ph;
        if (cw_space_read_exact(s, image->base + phoff + (uint64_t)i * phentsize, &ph, sizeof ph) != 0) {
            return "its program headers are not readable";
        }
        if (ph.p_type == 1 /* PT_LOAD */ && (!have_load || ph.p_offset < first_load_offset)) {
            have_load = 1;
            first_load_offset = ph.p_offset;
            first_load_vaddr = ph.p_vaddr;
        } else if (ph.p_type == 0x6474e550 /* PT_GNU_EH_FRAME */) {
            out->have_hdr = 1;
            out->hdr_vaddr = ph.p_vaddr;
            out->hdr_size = ph.p_memsz;
        }
    }
    if (!have_load) return "it has no loadable segment";
    out->bias = image->base - (first_load_vaddr - first_load_offset);
    return NULL;
}

/* Uses the .eh_frame_hdr at `hdr` (`hdr_size` bytes): its binary-search table when libunwind can read it,
 * else an index of the .eh_frame it points to; sets the image's problem when neither works. */
static void load_eh_frame_hdr(cw_space *s, struct cw_image *image, uint64_t hdr, uint64_t hdr_size) {
    uint8_t head[4];
    if (hdr_size < 4 || cw_space_read_exact(s, hdr, head, 4) != 0) {
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
    struct cw_table *table = &image->tables[SLOT_EH_FRAME];
    if (!table_problem) {
        cw_ehframe_use_table(image, table, hdr, at, fde_count);
        return;
    }
    /* The table is unusable, but .eh_frame itself may be fine: index it ourselves, as gdb does. */
    size_t entries = pointer_ok ? cw_ehframe_index(s, image, table, eh_frame, hdr) : 0;
    if (entries == 0) {
        image->problem = pointer_ok ? table_problem : "its .eh_frame_hdr header is invalid";
        return;
    }
    cw_ehframe_use_table(image, table, hdr, table->index_address, entries);
    image->problem = head[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)
        ? "its .eh_frame_hdr table encoding is not datarel|sdata4; its .eh_frame was indexed instead"
        : "its .eh_frame_hdr table is unusable; its .eh_frame was indexed instead";
}

/* Finds an image's loaded .eh_frame through its ELF header and program headers (its .eh_frame_hdr), else
 * through its file's section headers, and fills its slot. */
void cw_ehframe_load_table(cw_space *s, struct cw_image *image) {
    image->tables[SLOT_EH_FRAME].state = TABLE_MISSING;
    struct segments segments;
    const char *problem = read_segments(s, image, &segments);
    if (problem) {
        image->problem = problem;
        return;
    }
    image->segments_read = 1;
    image->bias = segments.bias;
    if (segments.have_hdr) {
        load_eh_frame_hdr(s, image, segments.bias + segments.hdr_vaddr, segments.hdr_size);
    } else if (cw_debugframe_index_eh_frame(s, image) == 0) {
        image->problem = "it has no .eh_frame_hdr; its .eh_frame was indexed instead";
    }
}

struct cw_table *cw_image_table(cw_space *s, struct cw_image *image, int slot) {
    struct cw_table *table = &image->tables[slot];
    if (table->state == TABLE_UNKNOWN) {
        if (slot == SLOT_EH_FRAME) {
            cw_ehframe_load_table(s, image);
        } else {
            if (image->tables[SLOT_EH_FRAME].state == TABLE_UNKNOWN) cw_ehframe_load_table(s, image);
            table->state = TABLE_MISSING;
            /* .debug_frame's addresses are link-time ones: the bias comes from the program headers. */
            if (image->segments_read) cw_debugframe_load(s, image);
        }
    }
    return table->state == TABLE_FOUND ? table : NULL;
}

/* Reads a ULEB128 at *at (advancing it); -1 past `end` or when longer than 10 bytes. */
static int read_uleb(cw_space *s, uint64_t *at, uint64_t end, uint64_t *value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t byte;
        if (*at >= end || cw_space_read_exact(s, *at, &byte, 1) != 0) return -1;
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
    if (cw_space_read_exact(s, cie, &length32, 4) != 0 || length32 == 0xffffffffu) return -1;
    uint64_t cie_end = cie + 4 + length32;
    if (cie_end > end || cw_space_read_exact(s, cie + 4, &id, 4) != 0 || id != 0) return -1;
    uint64_t at = cie + 8;
    uint8_t version;
    if (cw_space_read_exact(s, at++, &version, 1) != 0 || (version != 1 && version != 3)) return -1;
    char augmentation[16];
    size_t n = 0;
    for (;;) {
        if (n == sizeof augmentation || at >= cie_end || cw_space_read_exact(s, at++, &augmentation[n], 1) != 0) return -1;
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
            if (at >= cie_end || cw_space_read_exact(s, at, &encoding, 1) != 0) return -1;
            return encoding;
        case 'L': at++; break;
        case 'P': {
            uint64_t value;
            if (cw_space_read_exact(s, at++, &encoding, 1) != 0 || read_encoded(s, &at, encoding & 0x7f, 0, &value) != 0) return -1;
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
 * `hdr`, sorted, as `table`'s index. The index is placed in the space at an address no process can map
 * (the kernel half; one slot per image and table), where libunwind reads it through access_mem like any
 * other. Returns the number of entries. */
size_t cw_ehframe_index(cw_space *s, struct cw_image *image, struct cw_table *table, uint64_t eh_frame, uint64_t hdr) {
    if (eh_frame < image->start || eh_frame >= image->end) return 0;
    uint64_t end = image->end - eh_frame > (64u << 20) ? eh_frame + (64u << 20) : image->end;
    size_t count = 0, capacity = 0;
    int32_t *entries = NULL;
    uint64_t cached_cie = 0;
    int cached_encoding = -1;
    for (uint64_t at = eh_frame; at + 8 <= end && count < (1u << 20);) {
        uint32_t length, id;
        if (cw_space_read_exact(s, at, &length, 4) != 0 || length == 0 || length == 0xffffffffu) break;
        uint64_t next = at + 4 + length;
        if (next > end || next <= at || cw_space_read_exact(s, at + 4, &id, 4) != 0) break;
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
                        int32_t *grown = realloc(entries, bigger * 2 * sizeof *entries);
                        if (!grown) break;
                        entries = grown;
                        capacity = bigger;
                    }
                    entries[2 * count] = (int32_t)start_offset;
                    entries[2 * count + 1] = (int32_t)fde_offset;
                    count++;
                }
            }
        }
        at = next;
    }
    if (count == 0) {
        free(entries);
        return 0;
    }
    qsort(entries, count, 2 * sizeof *entries, by_table_start);
    free(table->index);
    table->index = entries;
    table->index_address = 0xfff0000000000000ull + ((uint64_t)(image - s->images) << 32) +
                           ((uint64_t)(table - image->tables) << 31);
    if (cw_space_add_bytes(s, table->index_address, entries, count * 2 * sizeof *entries) != 0) return 0;
    return count;
}

int cw_space_table_kind(cw_space *s, uint64_t address) {
    struct cw_image *image = cw_space_image_at(s, address);
    if (!image) return CW_TABLE_NONE;
    switch (cw_unwind_covering_slot(s, address)) {
    case SLOT_EH_FRAME: return image->tables[SLOT_EH_FRAME].index ? CW_TABLE_EH_FRAME_INDEXED : CW_TABLE_EH_FRAME_HDR;
    case SLOT_DEBUG_FRAME: return CW_TABLE_DEBUG_FRAME;
    default: return CW_TABLE_NONE;
    }
}

/* What is wrong with the image's .eh_frame; without one, whether its .debug_frame makes up for it. */
const char *cw_space_image_problem(cw_space *s, uint64_t address) {
    struct cw_image *image = cw_space_image_at(s, address);
    if (!image) return NULL;
    if (cw_image_table(s, image, SLOT_EH_FRAME) || !image->segments_read) return image->problem;
    /* No .eh_frame at all (Go, C built with -fno-asynchronous-unwind-tables): .debug_frame is its table. */
    if (cw_image_table(s, image, SLOT_DEBUG_FRAME)) return image->problem;
    return image->problem ? image->problem : "it has no .eh_frame_hdr (PT_GNU_EH_FRAME), and no usable .eh_frame or .debug_frame";
}
