/*
 * debugframe.c — unwind tables built from an image's file (opened and checked by the caller,
 * cw_space_set_image_file): its .eh_frame indexed in place when it was linked without .eh_frame_hdr, and
 * its .debug_frame (Go, cgo's Go code, C built with -fno-asynchronous-unwind-tables) rewritten as
 * .eh_frame records that libunwind reads like any other, placed in the space near the image.
 */
#define _GNU_SOURCE
#include "space_internal.h"

#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#define CW_MAX_DEBUG_FRAME (64u << 20)

/* A growing output buffer, at most CW_MAX_DEBUG_FRAME bytes. */
struct buffer {
    uint8_t *bytes;
    size_t size, capacity;
};

/* Appends to a growing buffer; -1 past the cap. */
static int put(struct buffer *out, const void *bytes, size_t length) {
    if (out->size + length > CW_MAX_DEBUG_FRAME) return -1;
    if (out->size + length > out->capacity) {
        size_t bigger = out->capacity ? out->capacity * 2 : 65536;
        while (bigger < out->size + length) bigger *= 2;
        uint8_t *grown = realloc(out->bytes, bigger);
        if (!grown) return -1;
        out->bytes = grown;
        out->capacity = bigger;
    }
    memcpy(out->bytes + out->size, bytes, length);
    out->size += length;
    return 0;
}

/* Old CIE offset → new CIE offset (0 when the CIE was skipped), in a small open-addressed map. */
enum { CIE_SLOTS = 4096 };
struct cie_map {
    uint64_t *old_offsets, *new_offsets; /* offset + 1; 0 marks an empty slot */
};

static void cie_map_put(struct cie_map *map, size_t old_offset, size_t new_offset) {
    size_t slot = (old_offset * 2654435761u) % CIE_SLOTS;
    for (int probe = 0; probe < CIE_SLOTS && map->old_offsets[slot] != 0 && map->old_offsets[slot] != old_offset + 1; probe++) {
        slot = (slot + 1) % CIE_SLOTS;
    }
    map->old_offsets[slot] = old_offset + 1;
    map->new_offsets[slot] = new_offset + 1;
}

/* The new offset + 1 of the CIE at `old_offset`, or 0 when it was not kept. */
static uint64_t cie_map_get(const struct cie_map *map, uint32_t old_offset) {
    size_t slot = ((size_t)old_offset * 2654435761u) % CIE_SLOTS;
    for (int probe = 0; probe < CIE_SLOTS && map->old_offsets[slot] != 0; probe++, slot = (slot + 1) % CIE_SLOTS) {
        if (map->old_offsets[slot] == (uint64_t)old_offset + 1) return map->new_offsets[slot];
    }
    return 0;
}

/* Rewrites the CIE at `at` (ending at `next`) as an .eh_frame CIE: id 0, version 4 as 3, the empty
 * augmentation. Versions other than 1, 3 and 4, augmentations and 4-byte addresses are skipped (not
 * written, not mapped). -1 only when the output is full. */
static int convert_cie(const uint8_t *in, size_t at, size_t next, struct buffer *out, struct cie_map *map) {
    size_t p = at + 8;
    if (p >= next) return 0; /* a CIE of nothing but its id: no version byte to read */
    uint8_t version = in[p++];
    if ((version != 1 && version != 3 && version != 4) || p >= next || in[p] != 0) return 0;
    p++; /* the empty augmentation string */
    if (version == 4) {
        if (p + 2 > next || in[p] != 8) return 0; /* 8-byte addresses only */
        p += 2;
    }
    uint32_t new_length = (uint32_t)(4 + 1 + 1 + (next - p));
    uint32_t zero = 0;
    uint8_t header[2] = {version == 4 ? 3 : version, 0};
    size_t new_offset = out->size;
    if (put(out, &new_length, 4) || put(out, &zero, 4) || put(out, header, 2) || put(out, in + p, next - p)) return -1;
    cie_map_put(map, at, new_offset);
    return 0;
}

/* Rewrites the FDE at `at` (`length` bytes after its length field; `cie_offset` its CIE's offset in the
 * section) with a pointer back to its converted CIE and pc_begin made absolute with `bias`. FDEs whose
 * CIE was skipped or whose code is outside the image are skipped. -1 only when the output is full. */
static int convert_fde(const uint8_t *in, size_t at, uint32_t length, uint32_t cie_offset, uint64_t bias,
                       const struct cw_image *image, struct buffer *out, const struct cie_map *map) {
    size_t next = at + 4 + length;
    uint64_t cie = cie_map_get(map, cie_offset);
    uint64_t pc_begin, pc_range;
    memcpy(&pc_begin, in + at + 8, 8);
    memcpy(&pc_range, in + at + 16, 8);
    pc_begin += bias;
    if (cie == 0 || pc_begin < image->start || pc_begin >= image->end) return 0;
    uint32_t back = (uint32_t)(out->size + 4 - (cie - 1));
    if (put(out, &length, 4) || put(out, &back, 4) || put(out, &pc_begin, 8) || put(out, &pc_range, 8) ||
        put(out, in + at + 24, next - at - 24)) return -1;
    return 0;
}

/* Rewrites the .debug_frame records of `in` as .eh_frame records into `out`, up to the first malformed or
 * 64-bit one. 1 when done, 0 when memory ran out. */
static int convert_debug_frame(const uint8_t *in, size_t in_size, uint64_t bias, const struct cw_image *image,
                               struct buffer *out) {
    struct cie_map map = {calloc(CIE_SLOTS, sizeof *map.old_offsets), calloc(CIE_SLOTS, sizeof *map.new_offsets)};
    int ok = map.old_offsets && map.new_offsets;
    for (size_t at = 0; ok && at + 8 <= in_size;) {
        uint32_t length, id;
        memcpy(&length, in + at, 4);
        if (length == 0xffffffffu || length < 4 || length > in_size - at - 4) break;
        size_t next = at + 4 + length;
        memcpy(&id, in + at + 4, 4);
        int failed = 0;
        if (id == 0xffffffffu) { /* a CIE */
            failed = convert_cie(in, at, next, out, &map);
        } else if (length >= 4 + 16) { /* an FDE: id is its CIE's offset in the section */
            failed = convert_fde(in, at, length, id, bias, image, out, &map);
        }
        if (failed) ok = 0;
        at = next;
    }
    free(map.old_offsets);
    free(map.new_offsets);
    return ok;
}

/* Finds the file's .debug_frame section and returns the address .eh_frame is loaded at (0 when it has
 * none): the sections an image without .eh_frame_hdr may still unwind from. */
static uint64_t find_frame_sections(Elf *elf, uint64_t bias, Elf_Scn **debug_frame) {
    size_t strndx;
    Elf_Scn *scn = NULL;
    uint64_t eh_frame_address = 0;
    *debug_frame = NULL;
    if (elf_getshdrstrndx(elf, &strndx) != 0) return 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr shdr;
        const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, strndx, shdr.sh_name) : NULL;
        if (!name) continue;
        if (strcmp(name, ".debug_frame") == 0) *debug_frame = scn;
        if (strcmp(name, ".eh_frame") == 0 && (shdr.sh_flags & SHF_ALLOC) && shdr.sh_size > 0) eh_frame_address = shdr.sh_addr + bias;
    }
    return eh_frame_address;
}

/* The contents of the .debug_frame section `found` (decompressed), or NULL when it has none usable. */
static Elf_Data *debug_frame_data(Elf_Scn *found) {
    GElf_Shdr shdr;
    Elf_Data *data = NULL;
    if (found && gelf_getshdr(found, &shdr) && shdr.sh_type == SHT_PROGBITS) {
        if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(found, 0, 0) < 0) found = NULL;
        if (found) data = elf_getdata(found, NULL);
    }
    if (!data || !data->d_buf || data->d_size < 8 || data->d_size > CW_MAX_DEBUG_FRAME) return NULL;
    return data;
}

/* Places the converted records (`out`, `out_size` bytes, terminated) in the space near the image and
 * indexes them: the image's .debug_frame table from now on. 0, or -1 (freeing `out` when the space did not
 * take it). */
static int place_converted(cw_space *s, struct cw_image *image, uint8_t *out, size_t out_size) {
    /* Below the image if there is room, else above it: within int32 reach of its code. */
    uint64_t length = (out_size + 0xfff) & ~(uint64_t)0xfff, address = 0;
    if (image->start > length + 0x10000 && cw_space_is_free(s, image->start - length - 0x1000, length)) {
        address = image->start - length - 0x1000;
    } else if (image->end < UINT64_MAX - length - 0x2000 && cw_space_is_free(s, image->end + 0x1000, length)) {
        address = image->end + 0x1000;
    }
    if (address == 0 || cw_space_add_bytes(s, address, out, out_size) != 0) {
        free(out);
        return -1;
    }
    struct cw_table *table = &image->tables[SLOT_DEBUG_FRAME];
    table->converted = out;
    /* The records are not inside the image: widen the walk's bounds for the index to them. */
    uint64_t saved_start = image->start, saved_end = image->end;
    image->start = address < saved_start ? address : saved_start;
    image->end = address + out_size > saved_end ? address + out_size : saved_end;
    size_t entries = cw_ehframe_index(s, image, table, address, address);
    image->start = saved_start;
    image->end = saved_end;
    if (entries == 0) return -1;
    cw_ehframe_use_table(image, table, address, table->index_address, entries);
    return 0;
}

int cw_debugframe_index_eh_frame(cw_space *s, struct cw_image *image) {
    if (image->fd < 0) return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(image->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    if (!elf) return -1;
    Elf_Scn *ignored;
    uint64_t eh_frame_address = find_frame_sections(elf, image->bias, &ignored);
    elf_end(elf);
    /* It is loaded (SHF_ALLOC): index it in place, where it is. */
    if (eh_frame_address < image->start || eh_frame_address >= image->end) return -1;
    struct cw_table *table = &image->tables[SLOT_EH_FRAME];
    size_t entries = cw_ehframe_index(s, image, table, eh_frame_address, eh_frame_address);
    if (entries == 0) return -1;
    cw_ehframe_use_table(image, table, eh_frame_address, table->index_address, entries);
    return 0;
}

/* Reads the image file's .debug_frame (decompressed), rewrites it as .eh_frame records — CIE id 0, FDEs
 * pointing back at their CIE, version 4 CIEs as version 3, pc_begin made absolute with the load bias and
 * kept 8-byte absolute (an empty augmentation) — places that in the space near the image, where int32
 * offsets reach its code, and indexes it like .eh_frame. Every field is bounds-checked; CIEs with an
 * augmentation, 64-bit records and FDEs outside the image are skipped. Returns 0 when a table was built. */
int cw_debugframe_load(cw_space *s, struct cw_image *image) {
    if (image->fd < 0) return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(image->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    if (!elf) return -1;
    Elf_Scn *found;
    (void)find_frame_sections(elf, image->bias, &found);
    Elf_Data *data = debug_frame_data(found);
    if (!data) {
        elf_end(elf);
        return -1;
    }
    struct buffer out = {0};
    int ok = convert_debug_frame(data->d_buf, data->d_size, image->bias, image, &out);
    elf_end(elf);
    uint32_t terminator = 0;
    if (!ok || out.size == 0 || put(&out, &terminator, 4) != 0) {
        free(out.bytes);
        return -1;
    }
    return place_converted(s, image, out.bytes, out.size);
}
