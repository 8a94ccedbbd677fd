/*
 * symbols.c — function names for addresses, through libdw's dwfl (elfutils), over images the caller
 * reports: as open files (descriptors the caller opened and checked) or by build-id alone. The session's
 * debug files are found by debuginfo.c, source lines and inline chains by inlines.c.
 */
#define _GNU_SOURCE
#include "ccrashwatch/symbols.h"
#include "symbolizer_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__thread cw_symbolizer *cw_current_symbolizer;

/* The standard search path (debuglink next to the file, in .debug/, under /usr/lib/debug, each of
 * whose absolute entries is also searched by build-id) followed by the caller's directories. */
static char *make_debuginfo_path(const char *extra_directories) {
    const char *standard = ":.debug:/usr/lib/debug";
    size_t length = strlen(standard) + 2 + (extra_directories ? strlen(extra_directories) : 0);
    char *path = malloc(length);
    if (!path) return NULL;
    snprintf(path, length, "%s%s%s", standard, extra_directories && *extra_directories ? ":" : "",
             extra_directories ? extra_directories : "");
    return path;
}

cw_symbolizer *cw_symbolizer_create(const char *debug_directories, int use_debuginfod) {
    cw_symbolizer *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->debuginfo_path = make_debuginfo_path(debug_directories);
    s->directories = strdup(debug_directories ? debug_directories : "");
    s->use_debuginfod = use_debuginfod;
    s->callbacks.find_elf = cw_find_elf;
    s->callbacks.find_debuginfo = cw_find_debuginfo;
    s->callbacks.section_address = dwfl_offline_section_address;
    s->callbacks.debuginfo_path = &s->debuginfo_path;
    s->dwfl = s->debuginfo_path && s->directories ? dwfl_begin(&s->callbacks) : NULL;
    if (!s->dwfl) {
        free(s->debuginfo_path);
        free(s->directories);
        free(s);
        errno = ENOMEM;
        return NULL;
    }
    dwfl_report_begin(s->dwfl);
    return s;
}

int cw_symbolizer_report_fd(cw_symbolizer *s, const char *name, int fd, uint64_t load_address) {
    cw_current_symbolizer = s;
    /* libdw keeps the descriptor for the session and closes it at the end. */
    int own = dup(fd);
    if (own < 0) {
        cw_current_symbolizer = NULL;
        return -1;
    }
    Dwfl_Module *module = dwfl_report_elf(s->dwfl, name, name, own, load_address, false);
    cw_current_symbolizer = NULL;
    if (!module) {
        close(own);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int cw_symbolizer_report_build_id(cw_symbolizer *s, const char *name, uint64_t start, uint64_t end,
                                  const uint8_t *build_id, size_t build_id_length) {
    Dwfl_Module *module = dwfl_report_module(s->dwfl, name, start, end);
    if (!module || dwfl_module_report_build_id(module, build_id, build_id_length, 0) != 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

void cw_symbolizer_end_reporting(cw_symbolizer *s) {
    dwfl_report_end(s->dwfl, NULL, NULL);
}

void cw_symbolizer_begin_adding(cw_symbolizer *s) {
    dwfl_report_begin_add(s->dwfl);
}

const char *cw_symbolizer_last_error(void) {
    return dwfl_errmsg(-1);
}

void cw_symbolizer_destroy(cw_symbolizer *s) {
    if (!s) return;
    dwfl_end(s->dwfl);
    free(s->debuginfo_path);
    free(s->directories);
    free(s->level_names);
    for (size_t i = 0; i < s->unit_count; i++) free(s->units[i].ranges);
    free(s->units);
    for (size_t i = 0; i < s->symbol_index_count; i++) free(s->symbol_indexes[i].symbols);
    free(s->symbol_indexes);
    for (size_t i = 0; i < s->module_unit_count; i++) free(s->module_units[i].ranges);
    free(s->module_units);
    free(s);
}

/* Which table a symbol came from: the separate debug file's, the file's own .symtab, or .dynsym. */
static int32_t symbol_source(Dwfl_Module *module, Elf *symbol_elf) {
    GElf_Addr bias;
    Elf *main_elf = dwfl_module_getelf(module, &bias);
    if (symbol_elf && main_elf && symbol_elf != main_elf) return CW_SYMBOL_SOURCE_DEBUGINFO;
    Elf *elf = symbol_elf ? symbol_elf : main_elf;
    Elf_Scn *section = NULL;
    while (elf && (section = elf_nextscn(elf, section)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) && header.sh_type == SHT_SYMTAB) return CW_SYMBOL_SOURCE_SYMTAB;
    }
    return CW_SYMBOL_SOURCE_DYNSYM;
}

/* ARM's mapping symbols ($x, $d, $x.42: where code or data starts) are no function names, yet libdw (0.188)
 * returns one where the function's own symbol has no size (glibc's aarch64 _start). The closest symbol at
 * or below the address in the same section that is not one is the function. */
#define CW_MAX_INDEXED_SYMBOLS (1 << 21)
#define CW_MAX_SYMBOL_WALK 64
static int is_mapping_symbol(const char *name) {
    return name[0] == '$' && name[1] && strchr("xdat", name[1]) && (name[2] == 0 || name[2] == '.');
}

static int by_symbol_value(const void *a, const void *b) {
    const struct indexed_symbol *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* The module's index, built the first time it is asked for (at most CW_MAX_INDEXED_SYMBOLS symbols). */
static const struct symbol_index *symbol_index(cw_symbolizer *s, Dwfl_Module *module) {
    for (size_t i = 0; i < s->symbol_index_count; i++) {
        if (s->symbol_indexes[i].module == module) return &s->symbol_indexes[i];
    }
    struct symbol_index *grown = realloc(s->symbol_indexes, (s->symbol_index_count + 1) * sizeof *grown);
    if (!grown) return NULL;
    s->symbol_indexes = grown;
    struct symbol_index *index = &grown[s->symbol_index_count++];
    *index = (struct symbol_index){.module = module};
    int total = dwfl_module_getsymtab(module);
    size_t limit = total > 1 ? (size_t)total - 1 : 0;
    if (limit > CW_MAX_INDEXED_SYMBOLS) limit = CW_MAX_INDEXED_SYMBOLS;
    index->symbols = limit ? malloc(limit * sizeof *index->symbols) : NULL;
    if (!index->symbols) return index;
    for (size_t i = 1; i <= limit; i++) {
        struct indexed_symbol entry;
        Dwarf_Addr bias;
        const char *name = dwfl_module_getsym_info(module, (int)i, &entry.symbol, &entry.value, &entry.section, &entry.elf, &bias);
        int type = GELF_ST_TYPE(entry.symbol.st_info);
        if (!name || name[0] == 0 || is_mapping_symbol(name) || (type != STT_FUNC && type != STT_NOTYPE)) continue;
        entry.name = name;
        index->symbols[index->count++] = entry;
    }
    qsort(index->symbols, index->count, sizeof *index->symbols, by_symbol_value);
    return index;
}

/* The function containing `address` in `section`: the nearest indexed symbol at or below it (looking back
 * at most CW_MAX_SYMBOL_WALK symbols) whose size, if it has one, covers it. NULL when there is none. */
static const char *function_symbol(cw_symbolizer *s, Dwfl_Module *module, Dwarf_Addr address, GElf_Word section,
                                   GElf_Off *offset, GElf_Sym *symbol, Elf **symbol_elf) {
    const struct symbol_index *index = symbol_index(s, module);
    if (!index || index->count == 0) return NULL;
    size_t low = 0, high = index->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (index->symbols[middle].value <= address) low = middle + 1;
        else high = middle;
    }
    for (size_t i = low, steps = 0; i > 0 && steps < CW_MAX_SYMBOL_WALK; i--, steps++) {
        const struct indexed_symbol *candidate = &index->symbols[i - 1];
        if (candidate->section != section) continue;
        if (candidate->symbol.st_size && address - candidate->value >= candidate->symbol.st_size) continue;
        *offset = address - candidate->value;
        *symbol = candidate->symbol;
        *symbol_elf = candidate->elf;
        return candidate->name;
    }
    return NULL;
}

int cw_symbolize(cw_symbolizer *s, uint64_t address, cw_symbol *out) {
    memset(out, 0, sizeof *out);
    cw_current_symbolizer = s;
    Dwfl_Module *module = dwfl_addrmodule(s->dwfl, address);
    if (!module) {
        cw_current_symbolizer = NULL;
        return -1;
    }
    Dwarf_Addr start = 0, end = 0;
    out->module_name = dwfl_module_info(module, NULL, &start, &end, NULL, NULL, NULL, NULL);
    out->module_start = start;
    GElf_Off offset = 0;
    GElf_Sym symbol;
    GElf_Word section_index = 0;
    Elf *symbol_elf = NULL;
    Dwarf_Addr symbol_bias = 0;
    const char *name = dwfl_module_addrinfo(module, address, &offset, &symbol, &section_index, &symbol_elf, &symbol_bias);
    if (name && is_mapping_symbol(name)) name = function_symbol(s, module, address, section_index, &offset, &symbol, &symbol_elf);
    if (name) {
        out->name = name;
        out->offset = offset;
        out->size = symbol.st_size;
        out->source = symbol_source(module, symbol_elf);
    }
    cw_current_symbolizer = NULL;
    return name ? 0 : 1;
}
