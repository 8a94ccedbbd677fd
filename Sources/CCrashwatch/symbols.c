/*
 * symbols.c — function names, source lines and inline chains for addresses, through libdw's dwfl
 * (elfutils), over images the caller reports: as open files (descriptors the caller opened and checked)
 * or by build-id alone. Nothing here opens a path the crashed process chose before its type is checked
 * (cw_open_untrusted: a regular file, or nothing is opened) and without a build-id match; links are
 * followed only inside trusted debug directories.
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>

/* One address range of a unit's concrete function. */
struct function_range {
    Dwarf_Addr low, high;
    Dwarf_Die die;
};

/* The concrete functions of one unit by address (sorted by `low`), found once by walking the unit
 * through its namespaces, classes and structures: threads share most units, and walking a large one
 * (72,000 DIEs in a unit of Rust's std) for every address would repeat the same work. */
struct unit_functions {
    const void *unit;               /* the unit's Dwarf_CU */
    struct function_range *ranges;
    size_t count;
};

/* A module's function symbols (no ARM mapping symbols) sorted by address, built on its first lookup that
 * libdw answered with a mapping symbol. */
struct indexed_symbol {
    GElf_Addr value;
    GElf_Sym symbol;
    GElf_Word section;
    const char *name;
    Elf *elf;
};

struct symbol_index {
    Dwfl_Module *module;
    struct indexed_symbol *symbols;
    size_t count;
};

struct cw_symbolizer {
    Dwfl *dwfl;
    char *debuginfo_path;   /* libdw's search path: ":.debug:/usr/lib/debug" plus the caller's directories */
    char *directories;      /* the caller's debug directories, colon-separated (may be empty) */
    int use_debuginfod;     /* ask debuginfod (DEBUGINFOD_URLS) when nothing local matches */
    Dwfl_Callbacks callbacks;
    char *level_names;      /* qualified DWARF names of the last cw_source_levels call, one slot per level */
    size_t level_name_slots;
    struct unit_functions *units; /* function indexes of units dwarf_getscopes cannot search */
    size_t unit_count;
    size_t indexed_ranges;
    struct symbol_index *symbol_indexes; /* modules' function symbols by address, for mapping-symbol hits */
    size_t symbol_index_count;
};

/* The session whose lookup is running: libdw's callbacks get the module, not the session. */
static __thread cw_symbolizer *current_symbolizer;

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

/* Whether the ELF file open at `fd` carries `build_id`. */
static int file_has_build_id(int fd, const uint8_t *build_id, int length) {
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf) return 0;
    const void *found = NULL;
    ssize_t found_length = dwelf_elf_gnu_build_id(elf, &found);
    int match = found_length == length && length > 0 && memcmp(found, build_id, (size_t)length) == 0;
    elf_end(elf);
    return match;
}

/* Opens `path` as a debug file candidate for `mod`: a regular file, never blocking, carrying the
 * module's build-id when it has one. */
static int open_candidate(Dwfl_Module *mod, const char *path, int follow_links, char **found_name) {
    int fd = cw_open_untrusted(path, follow_links);
    if (fd < 0) return -1;
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int length = dwfl_module_build_id(mod, &bits, &vaddr);
    if (length > 0 && !file_has_build_id(fd, bits, length)) {
        close(fd);
        return -1;
    }
    if (found_name) *found_name = strdup(path);
    return fd;
}

/* A debug file for `mod` without following anything the crashed process chose: by build-id under
 * trusted directories (the caller's and /usr/lib/debug), then by .gnu_debuglink — a plain file
 * name — next to the image, in its .debug/ and under the trusted directories; links are not
 * followed in directories the image's path names. Each candidate is opened only once it is known to
 * be a regular file (cw_open_untrusted), and must carry the module's build-id. Then debuginfod, when enabled. */
static int try_build_id_paths(Dwfl_Module *mod, const char *directory, char **found_name) {
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int length = dwfl_module_build_id(mod, &bits, &vaddr);
    if (length < 2 || length > 64) return -1;
    char hex[129];
    for (int i = 0; i < length; i++) snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", directory, hex, hex + 2) >= (int)sizeof path) return -1;
    /* Trusted directories: their .build-id links are the packaging's own. */
    return open_candidate(mod, path, 1, found_name);
}

static int find_debuginfo_uncached(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                                   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                   char **debuginfo_file_name) {
    cw_symbolizer *s = current_symbolizer;
    if (!s) return -1;
    char trusted[8192];
    snprintf(trusted, sizeof trusted, "%s%s/usr/lib/debug", s->directories, *s->directories ? ":" : "");

    /* 1. By build-id under trusted directories. */
    for (char *saveptr = NULL, *dir = strtok_r(trusted, ":", &saveptr); dir; dir = strtok_r(NULL, ":", &saveptr)) {
        int fd = try_build_id_paths(mod, dir, debuginfo_file_name);
        if (fd >= 0) return fd;
    }

    /* 2. By .gnu_debuglink (a bare file name) or a dwz alt link (an absolute path under a trusted directory). */
    if (debuglink_file && *debuglink_file && strlen(debuglink_file) < 256) {
        char path[PATH_MAX];
        snprintf(trusted, sizeof trusted, "%s%s/usr/lib/debug", s->directories, *s->directories ? ":" : "");
        if (debuglink_file[0] == '/') {
            for (char *saveptr = NULL, *dir = strtok_r(trusted, ":", &saveptr); dir; dir = strtok_r(NULL, ":", &saveptr)) {
                size_t n = strlen(dir);
                if (strncmp(debuglink_file, dir, n) == 0 && debuglink_file[n] == '/' && !strstr(debuglink_file, "/../")) {
                    int fd = open_candidate(mod, debuglink_file, 1, debuginfo_file_name);
                    if (fd >= 0) return fd;
                }
            }
        } else if (!strchr(debuglink_file, '/') && file_name && file_name[0] == '/') {
            char directory[PATH_MAX];
            snprintf(directory, sizeof directory, "%s", file_name);
            char *slash = strrchr(directory, '/');
            if (slash) *slash = '\0';
            const char *image_dir = directory;
            /* Next to the image and in its .debug/: directories the crashed process may control. */
            if (snprintf(path, sizeof path, "%s/%s", image_dir, debuglink_file) < (int)sizeof path &&
                strcmp(path, file_name) != 0) {
                int fd = open_candidate(mod, path, 0, debuginfo_file_name);
                if (fd >= 0) return fd;
            }
            if (snprintf(path, sizeof path, "%s/.debug/%s", image_dir, debuglink_file) < (int)sizeof path) {
                int fd = open_candidate(mod, path, 0, debuginfo_file_name);
                if (fd >= 0) return fd;
            }
            for (char *saveptr = NULL, *dir = strtok_r(trusted, ":", &saveptr); dir; dir = strtok_r(NULL, ":", &saveptr)) {
                if (snprintf(path, sizeof path, "%s%s/%s", dir, image_dir, debuglink_file) < (int)sizeof path) {
                    int fd = open_candidate(mod, path, 0, debuginfo_file_name);
                    if (fd >= 0) return fd;
                }
            }
        }
    }

    /* 3. debuginfod, only when crashwatch was told to use it: libdw's standard search, pointed at a
     * directory that does not exist so that its local part opens nothing, falls through to it. */
    if (s->use_debuginfod) {
        char *saved = s->debuginfo_path;
        char nowhere[] = "/nonexistent/crashwatch-no-local-search";
        s->debuginfo_path = nowhere;
        int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, NULL, debuglink_crc,
                                              debuginfo_file_name);
        s->debuginfo_path = saved;
        if (fd >= 0) return fd;
    }
    errno = ENOENT;
    return -1;
}

/* ---- the inflated debug-file cache ----
 * Distributions compress debug sections (libc6-dbg: zlib); libdw inflates them whole on first use, which
 * is most of a full report's time. A debug file found once is inflated by `eu-elfcompress -t none` after
 * the report is out, into a cache directory the supervisor opened (`<build-id>.debug`, mode 0600); the next
 * crash maps it as is. Entries are used only when their build-id matches, like any other candidate. */

#define CW_CACHE_PENDING 16
static int cache_dirfd = -1;
static struct { char *path; char hex[129]; } cache_pending[CW_CACHE_PENDING];
static size_t cache_pending_count;

void cw_symbolizer_set_cache(int dirfd) { cache_dirfd = dirfd; }

static int build_id_hex(Dwfl_Module *mod, char *hex, size_t size) {
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int length = dwfl_module_build_id(mod, &bits, &vaddr);
    if (length < 2 || length > 64 || (size_t)(2 * length + 1) > size) return -1;
    for (int i = 0; i < length; i++) snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    return 0;
}

static int has_compressed_sections(int fd) {
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf) return 0;
    int compressed = 0;
    Elf_Scn *scn = NULL;
    while (!compressed && (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED)) compressed = 1;
    }
    elf_end(elf);
    return compressed;
}

static int safe_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                               const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                               char **debuginfo_file_name) {
    char hex[129];
    int have_hex = cache_dirfd >= 0 && build_id_hex(mod, hex, sizeof hex) == 0;
    if (have_hex) {
        char name[160];
        snprintf(name, sizeof name, "%s.debug", hex);
        int fd = cw_open_regular_at(cache_dirfd, name, 0);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid()) {
            const unsigned char *bits = NULL;
            GElf_Addr vaddr = 0;
            int length = dwfl_module_build_id(mod, &bits, &vaddr);
            if (file_has_build_id(fd, bits, length)) {
                if (debuginfo_file_name) *debuginfo_file_name = strdup(name);
                return fd;
            }
        }
        if (fd >= 0) close(fd);
    }
    int fd = find_debuginfo_uncached(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                     debuginfo_file_name);
    if (fd >= 0 && have_hex && cache_pending_count < CW_CACHE_PENDING && debuginfo_file_name && *debuginfo_file_name &&
        (*debuginfo_file_name)[0] == '/' && has_compressed_sections(fd)) {
        cache_pending[cache_pending_count].path = strdup(*debuginfo_file_name);
        snprintf(cache_pending[cache_pending_count].hex, sizeof cache_pending[0].hex, "%s", hex);
        if (cache_pending[cache_pending_count].path) cache_pending_count++;
    }
    return fd;
}

int cw_symbolizer_fill_cache(void) {
    if (cache_dirfd < 0 || cache_pending_count == 0) return 0;
    pid_t pid = fork();
    if (pid != 0) return pid > 0 ? (int)cache_pending_count : -1;
    /* The child: the worker goes on to exit; this one inflates, one file at a time. */
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_FSIZE, &limit);
    }
    for (size_t i = 0; i < cache_pending_count; i++) {
        char temporary[200], final_name[160], output[256];
        snprintf(temporary, sizeof temporary, ".tmp-%s-%d", cache_pending[i].hex, (int)getpid());
        snprintf(final_name, sizeof final_name, "%s.debug", cache_pending[i].hex);
        snprintf(output, sizeof output, "/proc/self/fd/%d/%s", cache_dirfd, temporary);
        pid_t tool = fork();
        if (tool == 0) {
            char *argv[] = {"eu-elfcompress", "-q", "-t", "none", "-o", output, cache_pending[i].path, NULL};
            char *envp[] = {NULL};
            execve("/usr/bin/eu-elfcompress", argv, envp);
            _exit(127);
        }
        int status = 0;
        if (tool > 0) while (waitpid(tool, &status, 0) < 0 && errno == EINTR) {}
        if (tool > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            fchmodat(cache_dirfd, temporary, 0600, 0);
            renameat(cache_dirfd, temporary, cache_dirfd, final_name);
        } else {
            unlinkat(cache_dirfd, temporary, 0);
        }
    }
    _exit(0);
}

/* The ELF file of a module reported by build-id only: the .build-id trees of trusted directories,
 * then debuginfod when enabled (libdw's own lookup, which opens nothing the process named). */
static int safe_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
                         char **file_name, Elf **elfp) {
    cw_symbolizer *s = current_symbolizer;
    *elfp = NULL;
    if (s && !s->use_debuginfod) {
        /* Without debuginfod, libdw's lookup is its .build-id search under the debug path. */
        char *saved = s->debuginfo_path;
        char trusted[8192];
        snprintf(trusted, sizeof trusted, "/usr/lib/debug%s%s", *s->directories ? ":" : "", s->directories);
        s->debuginfo_path = trusted;
        int fd = dwfl_build_id_find_elf(mod, userdata, module_name, base, file_name, elfp);
        s->debuginfo_path = saved;
        return fd;
    }
    return dwfl_build_id_find_elf(mod, userdata, module_name, base, file_name, elfp);
}

cw_symbolizer *cw_symbolizer_create(const char *debug_directories, int use_debuginfod) {
    cw_symbolizer *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->debuginfo_path = make_debuginfo_path(debug_directories);
    s->directories = strdup(debug_directories ? debug_directories : "");
    s->use_debuginfod = use_debuginfod;
    s->callbacks.find_elf = safe_find_elf;
    s->callbacks.find_debuginfo = safe_find_debuginfo;
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
    current_symbolizer = s;
    /* libdw keeps the descriptor for the session and closes it at the end. */
    int own = dup(fd);
    if (own < 0) {
        current_symbolizer = NULL;
        return -1;
    }
    Dwfl_Module *module = dwfl_report_elf(s->dwfl, name, name, own, load_address, false);
    current_symbolizer = NULL;
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
    current_symbolizer = s;
    Dwfl_Module *module = dwfl_addrmodule(s->dwfl, address);
    if (!module) {
        current_symbolizer = NULL;
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
    current_symbolizer = NULL;
    return name ? 0 : 1;
}

/* ---- DWARF names ---- */

/* Bounds for walking DWARF from a hostile file: enclosing scopes followed to qualify a name, DIE nesting
 * followed looking for an address, DIEs visited per walk, references followed from a DIE to its
 * declaration. */
#define CW_MAX_SCOPE_DEPTH 32
#define CW_MAX_WALK_DEPTH 256
#define CW_MAX_WALK_DIES (1 << 20)
#define CW_MAX_REFERENCES 8
/* The longest name built or demangled here, in bytes. One byte more is kept (a slot holds it and the
 * NUL), so that the Swift side sees a longer name as cut and marks it. */
#define CW_NAME_BYTES 4096
#define CW_NAME_SLOT (CW_NAME_BYTES + 2)

static int is_function_tag(int tag) {
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

/* DIEs whose address ranges can contain an address, and whose children then may too. */
static int is_pc_scope_tag(int tag) {
    switch (tag) {
    case DW_TAG_subprogram: case DW_TAG_inlined_subroutine: case DW_TAG_entry_point: case DW_TAG_lexical_block:
    case DW_TAG_try_block: case DW_TAG_catch_block: case DW_TAG_with_stmt:
        return 1;
    }
    return 0;
}

/* DIEs without addresses whose children may be functions: rustc and clang nest definitions in them. */
static int is_container_tag(int tag) {
    switch (tag) {
    case DW_TAG_namespace: case DW_TAG_module: case DW_TAG_class_type: case DW_TAG_structure_type:
    case DW_TAG_union_type: case DW_TAG_interface_type:
        return 1;
    }
    return 0;
}

/* DIEs whose names qualify the functions declared inside them (`std`, `vector<int>`, a function
 * holding a local class). */
static int is_naming_scope_tag(int tag) {
    return is_container_tag(tag) || tag == DW_TAG_enumeration_type || tag == DW_TAG_subprogram;
}

/* Appends `text` to the name in `buffer` (a CW_NAME_SLOT-byte slot holding `*used` bytes), keeping at
 * most CW_NAME_BYTES + 1 bytes. */
static void name_append(char *buffer, size_t *used, const char *text) {
    size_t room = CW_NAME_BYTES + 1 - *used;
    size_t length = strnlen(text, room);
    memcpy(buffer + *used, text, length);
    *used += length;
    buffer[*used] = '\0';
}

/* The DIE declaring the function of `die`: DW_AT_abstract_origin and DW_AT_specification followed, a
 * bounded number of times (an inlined call's origin, an out-of-line definition's declaration). */
static void declaration_die(Dwarf_Die *die, Dwarf_Die *declaration) {
    *declaration = *die;
    for (int i = 0; i < CW_MAX_REFERENCES; i++) {
        Dwarf_Attribute attribute;
        Dwarf_Die next;
        if (!dwarf_attr(declaration, DW_AT_abstract_origin, &attribute) &&
            !dwarf_attr(declaration, DW_AT_specification, &attribute)) return;
        if (!dwarf_formref_die(&attribute, &next)) return;
        *declaration = next;
    }
}

/* The DIEs enclosing `target` in its unit, outermost first and the unit itself left out: at most `max`
 * of them are written to `path`; their count, or -1 when the unit's tree does not lead to `target`
 * within the bounds. Uses DWARF's layout (a DIE's children come after it and before its next sibling),
 * so it walks siblings only, never back up. */
static int enclosing_dies(Dwarf_Die *target, Dwarf_Die *path, int max) {
    Dwarf_Die current;
    if (!dwarf_diecu(target, &current, NULL, NULL)) return -1;
    Dwarf_Off goal = dwarf_dieoffset(target);
    long budget = CW_MAX_WALK_DIES;
    for (int depth = 0;; depth++) {
        Dwarf_Die child, next;
        if (dwarf_child(&current, &child) != 0 || dwarf_dieoffset(&child) > goal) return -1;
        /* The last child starting at or before the goal holds it. */
        while (dwarf_dieoffset(&child) != goal) {
            if (--budget <= 0) return -1;
            if (dwarf_siblingof(&child, &next) != 0 || dwarf_dieoffset(&next) > goal) break;
            child = next;
        }
        if (dwarf_dieoffset(&child) == goal) return depth;
        if (depth >= max) return -1;
        path[depth] = child;
        current = child;
    }
}

/* Whether names in `die`'s unit can be qualified by enclosing scopes: not in C, which has none (and
 * whose units would be walked for nothing). */
static int language_has_scopes(Dwarf_Die *die) {
    Dwarf_Die unit;
    if (!dwarf_diecu(die, &unit, NULL, NULL)) return 1;
    switch (dwarf_srclang(&unit)) {
    case DW_LANG_C89: case DW_LANG_C: case DW_LANG_C99: case DW_LANG_C11: case 0x2c /* DW_LANG_C17 */:
        return 0;
    }
    return 1;
}

/* `die`'s function name qualified by the namespaces, classes and structures its declaration sits in
 * (`std::vector<int>::push_back`, `app::(anonymous namespace)::Box::get`), written into `slot`
 * (CW_NAME_SLOT bytes); the bare name when the scopes cannot be found; NULL without a name. */
static const char *qualified_die_name(Dwarf_Die *die, char *slot) {
    Dwarf_Die declaration;
    declaration_die(die, &declaration);
    Dwarf_Attribute attribute;
    const char *name = dwarf_diename(&declaration);
    if (!name) name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attribute));
    if (!name || !slot || !language_has_scopes(&declaration)) return name;
    Dwarf_Die path[CW_MAX_SCOPE_DEPTH];
    int depth = enclosing_dies(&declaration, path, CW_MAX_SCOPE_DEPTH);
    size_t used = 0;
    slot[0] = '\0';
    for (int i = 0; i < depth; i++) {
        int tag = dwarf_tag(&path[i]);
        if (!is_naming_scope_tag(tag)) continue;
        const char *scope = dwarf_diename(&path[i]);
        if (!scope) scope = tag == DW_TAG_namespace ? "(anonymous namespace)" : "{unnamed type}";
        name_append(slot, &used, scope);
        name_append(slot, &used, "::");
    }
    if (used == 0) return name;
    name_append(slot, &used, name);
    return slot;
}

static char *rust_demangle_capped(const char *name);

/* The last `::` component of a demangled Rust path, generic arguments left out: `index` of
 * `<alloc::vec::Vec<T,A> as core::ops::index::Index<I>>::index`, `range` of
 * `core::slice::index::range::<core::ops::range::RangeInclusive<usize>>`. Sets `*length`. */
static const char *rust_last_component(const char *path, size_t *length) {
    const char *start = path, *last = path;
    size_t last_length = 0;
    int depth = 0;
    for (const char *p = path;; p++) {
        int end = *p == '\0' || (depth == 0 && p[0] == ':' && p[1] == ':');
        if (end) {
            if (p > start && *start != '<') {
                last = start;
                last_length = (size_t)(p - start);
            }
            if (*p == '\0') break;
            start = p + 2;
            p++;
            continue;
        }
        if (*p == '<' || *p == '(' || *p == '[') depth++;
        else if ((*p == '>' && (p == path || p[-1] != '-')) || *p == ')' || *p == ']') depth = depth > 0 ? depth - 1 : 0;
    }
    *length = last_length;
    return last;
}

/* Whether a Rust function's linkage name is its path, ending in its DW_AT_name (`name`, whose
 * generic arguments are left out; legacy `{{closure}}` stands for any `{closure#N}`): not so for
 * exports under another name (`#[no_mangle]`, `#[export_name]`), nor for std's internal symbols, which
 * rustc mangles under a made-up crate `__rustc` (`__rustc::rust_begin_unwind` is
 * `std::panicking::panic_handler`, `__rustc::__rust_abort` is `std::rt::__rust_abort`). */
static int rust_linkage_name_is_path(const char *linkage, const char *name) {
    size_t name_length = strcspn(name, "<");
    if (name_length == 0) name_length = strlen(name);
    char *demangled = rust_demangle_capped(linkage);
    const char *path = demangled ? demangled : linkage;
    size_t length = 0;
    const char *last = rust_last_component(path, &length);
    int same = (length == name_length && strncmp(last, name, length) == 0) ||
               (length == 11 && strncmp(last, "{{closure}}", 11) == 0 && strncmp(name, "{closure#", 9) == 0);
    if (strncmp(path, "__rustc::", 9) == 0) same = 0;
    free(demangled);
    return same;
}

/* The name a function DIE is known by: its linkage (mangled) name when it has one, following
 * DW_AT_abstract_origin and DW_AT_specification; else — or for a Rust function exported under another
 * name — its DWARF name qualified by the scopes of its declaration, built in `slot` (CW_NAME_SLOT
 * bytes; NULL: the bare name). */
static const char *die_function_name(Dwarf_Die *die, char *slot) {
    Dwarf_Attribute attribute;
    const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute));
    if (!linkage) linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attribute));
    if (linkage && slot) {
        Dwarf_Die unit;
        const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attribute));
        if (name && dwarf_diecu(die, &unit, NULL, NULL) && dwarf_srclang(&unit) == DW_LANG_Rust &&
            !rust_linkage_name_is_path(linkage, name)) {
            const char *qualified = qualified_die_name(die, slot);
            if (qualified) return qualified;
        }
    }
    return linkage ? linkage : qualified_die_name(die, slot);
}

/* The function-like DIEs containing `pc` (relative to the module), innermost first, in a malloc'ed
 * array; their count (0 when none). Walks down from `first` (and, with `siblings`, its next siblings)
 * through namespaces, modules, classes and structures as well as through the scopes containing `pc`:
 * rustc (and clang) nest function definitions in namespaces, where dwarf_getscopes (elfutils 0.188)
 * stops looking. Once a function containing `pc` is found, only its subtree is searched further.
 * Bounded in depth and in DIEs visited. */
static int function_chain_at(Dwarf_Die *first, int siblings, Dwarf_Addr pc, Dwarf_Die **chain_out) {
    *chain_out = NULL;
    Dwarf_Die *stack = malloc(CW_MAX_WALK_DEPTH * sizeof *stack);
    Dwarf_Die *chain = malloc(CW_MAX_WALK_DEPTH * sizeof *chain);
    if (!stack || !chain) {
        free(stack);
        free(chain);
        return 0;
    }
    stack[0] = *first;
    int top = 1, committed = -1, count = 0;
    for (long visited = 0; top > 0 && visited < CW_MAX_WALK_DIES; visited++) {
        Dwarf_Die *die = &stack[top - 1];
        int tag = dwarf_tag(die);
        int descend = 0;
        if (is_pc_scope_tag(tag)) {
            descend = dwarf_haspc(die, pc) > 0;
            if (descend && is_function_tag(tag)) {
                committed = top - 1;
                count = 0;
                for (int i = top - 1; i >= 0; i--) {
                    if (is_function_tag(dwarf_tag(&stack[i]))) chain[count++] = stack[i];
                }
            }
        } else if (committed < 0 && is_container_tag(tag)) {
            descend = 1;
        }
        if (descend && top < CW_MAX_WALK_DEPTH && dwarf_child(die, &stack[top]) == 0) {
            top++;
            continue;
        }
        /* The next sibling, climbing out of exhausted subtrees; never past the function found. */
        while (top > 0) {
            if (committed >= top - 1 || (top == 1 && !siblings)) {
                top = 0;
                break;
            }
            if (dwarf_siblingof(&stack[top - 1], &stack[top - 1]) == 0) break;
            top--;
        }
    }
    free(stack);
    if (count == 0) {
        free(chain);
        return 0;
    }
    *chain_out = chain;
    return count;
}

/* Units indexed per session, ranges per function and ranges per session kept (beyond them, lookups
 * walk the unit each time). */
#define CW_MAX_INDEXED_UNITS 256
#define CW_MAX_RANGES_PER_FUNCTION 16
#define CW_MAX_INDEXED_RANGES (1 << 20)

static int compare_ranges(const void *a, const void *b) {
    const struct function_range *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* Adds the address ranges of function `die` to `index`, growing it; 0, or -1 when memory runs out. */
static int add_function_ranges(struct unit_functions *index, size_t *capacity, size_t limit, Dwarf_Die *die) {
    Dwarf_Addr base = 0, low = 0, high = 0;
    ptrdiff_t offset = 0;
    for (int n = 0; n < CW_MAX_RANGES_PER_FUNCTION && (offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0; n++) {
        if (high <= low) continue;
        if (index->count >= limit) return 0;
        if (index->count == *capacity) {
            size_t grown = *capacity ? *capacity * 2 : 256;
            struct function_range *ranges = realloc(index->ranges, grown * sizeof *ranges);
            if (!ranges) return -1;
            index->ranges = ranges;
            *capacity = grown;
        }
        index->ranges[index->count++] = (struct function_range){.low = low, .high = high, .die = *die};
    }
    return 0;
}

/* Indexes the concrete functions of `unit` (at most `limit` ranges): a walk through containers that
 * does not enter functions. Bounded in depth and in DIEs visited; 0, or -1 when memory runs out. */
static int index_unit(Dwarf_Die *unit, struct unit_functions *index, size_t limit) {
    *index = (struct unit_functions){.unit = unit->cu};
    size_t capacity = 0;
    Dwarf_Die *stack = malloc(CW_MAX_WALK_DEPTH * sizeof *stack);
    if (!stack) return -1;
    int top = dwarf_child(unit, &stack[0]) == 0 ? 1 : 0;
    for (long visited = 0; top > 0 && visited < CW_MAX_WALK_DIES; visited++) {
        Dwarf_Die *die = &stack[top - 1];
        int tag = dwarf_tag(die);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
            if (add_function_ranges(index, &capacity, limit, die) != 0) {
                free(stack);
                return -1;
            }
        } else if (is_container_tag(tag) && top < CW_MAX_WALK_DEPTH && dwarf_child(die, &stack[top]) == 0) {
            top++;
            continue;
        }
        while (top > 0 && dwarf_siblingof(&stack[top - 1], &stack[top - 1]) != 0) top--;
    }
    free(stack);
    if (index->count > 1) qsort(index->ranges, index->count, sizeof *index->ranges, compare_ranges);
    return 0;
}

/* The index of `unit`, built on first use; NULL when the session's bounds or memory say no. */
static const struct unit_functions *unit_functions(cw_symbolizer *s, Dwarf_Die *unit) {
    for (size_t i = 0; i < s->unit_count; i++) {
        if (s->units[i].unit == unit->cu) return &s->units[i];
    }
    if (s->unit_count >= CW_MAX_INDEXED_UNITS || s->indexed_ranges >= CW_MAX_INDEXED_RANGES) return NULL;
    if (!s->units && !(s->units = calloc(CW_MAX_INDEXED_UNITS, sizeof *s->units))) return NULL;
    struct unit_functions *index = &s->units[s->unit_count];
    if (index_unit(unit, index, CW_MAX_INDEXED_RANGES - s->indexed_ranges) != 0) {
        free(index->ranges);
        *index = (struct unit_functions){0};
        return NULL;
    }
    s->indexed_ranges += index->count;
    s->unit_count++;
    return index;
}

/* The inline chain at `pc` in `unit` for units dwarf_getscopes cannot search: through the unit's
 * function index (binary search, then a walk of that one function), else by walking the whole unit. */
static int function_chain_in_unit(cw_symbolizer *s, Dwarf_Die *unit, Dwarf_Addr pc, Dwarf_Die **chain_out) {
    const struct unit_functions *index = unit_functions(s, unit);
    if (!index) {
        Dwarf_Die first;
        return dwarf_child(unit, &first) == 0 ? function_chain_at(&first, 1, pc, chain_out) : 0;
    }
    /* The last range starting at or before `pc`, then a few before it (ranges of a hostile file may overlap). */
    size_t low = 0, high = index->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (index->ranges[middle].low <= pc) low = middle + 1;
        else high = middle;
    }
    for (size_t i = low, tries = 0; i > 0 && tries < 8; i--, tries++) {
        const struct function_range *range = &index->ranges[i - 1];
        if (pc >= range->low && pc < range->high) {
            Dwarf_Die function = range->die;
            return function_chain_at(&function, 0, pc, chain_out);
        }
    }
    *chain_out = NULL;
    return 0;
}

static int32_t die_udata(Dwarf_Die *die, int attribute_name) {
    Dwarf_Attribute attribute;
    Dwarf_Word value = 0;
    if (dwarf_formudata(dwarf_attr(die, attribute_name, &attribute), &value) != 0) return 0;
    return (int32_t)value;
}

/* The compilation unit containing `address`, found by each unit's ranges: for objects without
 * .debug_aranges (swiftc emits none), where dwfl_module_addrdie finds nothing. */
static Dwarf_Die *find_cu_without_aranges(Dwfl_Module *module, uint64_t address, Dwarf_Addr *bias) {
    /* Only for modules without any: where aranges exist and miss the address, no unit covers it
     * (assembly without DWARF, _start), and scanning thousands of units would be wasted. */
    Dwarf_Addr dwarf_bias = 0;
    Dwarf *dwarf = dwfl_module_getdwarf(module, &dwarf_bias);
    Dwarf_Aranges *aranges = NULL;
    size_t arange_count = 0;
    if (!dwarf || (dwarf_getaranges(dwarf, &aranges, &arange_count) == 0 && arange_count > 0)) return NULL;
    Dwarf_Die *cu = NULL;
    while ((cu = dwfl_module_nextcu(module, cu, bias)) != NULL) {
        if (dwarf_haspc(cu, address - *bias) > 0) return cu;
    }
    return NULL;
}

int cw_source_levels(cw_symbolizer *s, uint64_t address, cw_source_level *levels, int max_levels) {
    current_symbolizer = s;
    int count = 0;
    Dwfl_Module *module = dwfl_addrmodule(s->dwfl, address);
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = module ? dwfl_module_addrdie(module, address, &bias) : NULL;
    if (!cu && module) cu = find_cu_without_aranges(module, address, &bias);
    if (!cu || max_levels <= 0) {
        current_symbolizer = NULL;
        return 0;
    }
    /* The innermost level's location is the line table's row for the address. */
    const char *file = NULL;
    int line = 0, column = 0;
    Dwarf_Line *row = dwarf_getsrc_die(cu, address - bias);
    if (row) {
        file = dwarf_linesrc(row, NULL, NULL);
        dwarf_lineno(row, &line);
        dwarf_linecol(row, &column);
    }

    Dwarf_Die *scopes = NULL;
    int scope_count = dwarf_getscopes(cu, address - bias, &scopes);
    Dwarf_Die *chain = NULL;
    int chain_count = 0;
    /* dwarf_getscopes alone can miss levels: expand from the innermost function-like scope with
     * dwarf_getscopes_die, which yields every inlined level up to the concrete function. */
    for (int i = 0; i < scope_count; i++) {
        if (is_function_tag(dwarf_tag(&scopes[i]))) {
            chain_count = dwarf_getscopes_die(&scopes[i], &chain);
            break;
        }
    }
    /* Functions nested in namespaces (rustc's, clang's) are out of dwarf_getscopes' reach: walk the unit. */
    if (chain_count <= 0) {
        free(chain);
        chain_count = function_chain_in_unit(s, cu, address - bias, &chain);
    }
    Dwarf_Files *files = NULL;
    size_t file_count = 0;
    if (dwarf_getsrcfiles(cu, &files, &file_count) != 0) files = NULL;
    /* DWARF 5 numbers the unit's primary file 0; before, 0 meant no file. */
    Dwarf_Half version = 0;
    if (dwarf_cu_info(cu->cu, &version, NULL, NULL, NULL, NULL, NULL, NULL) != 0) version = 0;
    Dwarf_Word first_file = version >= 5 ? 0 : 1;
    /* Slots for qualified names, which live until the next call. */
    if (s->level_name_slots < (size_t)max_levels) {
        char *slots = realloc(s->level_names, (size_t)max_levels * CW_NAME_SLOT);
        if (slots) {
            s->level_names = slots;
            s->level_name_slots = (size_t)max_levels;
        }
    }

    for (int i = 0; i < chain_count && count < max_levels; i++) {
        Dwarf_Die *die = &chain[i];
        int tag = dwarf_tag(die);
        if (!is_function_tag(tag)) continue;
        char *slot = (size_t)count < s->level_name_slots ? s->level_names + (size_t)count * CW_NAME_SLOT : NULL;
        cw_source_level *level = &levels[count++];
        level->name = die_function_name(die, slot);
        level->file = file;
        level->line = line;
        level->column = column;
        level->inlined = tag == DW_TAG_inlined_subroutine;
        if (tag != DW_TAG_inlined_subroutine) break; /* the concrete function ends the chain */
        /* The next (outer) level is located at this inlined call's call site. */
        Dwarf_Word file_index = (Dwarf_Word)die_udata(die, DW_AT_call_file);
        file = (files && dwarf_hasattr(die, DW_AT_call_file) && file_index >= first_file && file_index < file_count)
            ? dwarf_filesrc(files, file_index, NULL, NULL) : NULL;
        line = die_udata(die, DW_AT_call_line);
        column = die_udata(die, DW_AT_call_column);
    }
    if (count == 0 && (file || line)) {
        levels[0] = (cw_source_level){.name = NULL, .file = file, .line = line, .column = column, .inlined = 0};
        count = 1;
    }
    free(scopes);
    free(chain);
    current_symbolizer = NULL;
    return count;
}

/* ---- demangling ---- */

extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);
extern char *swift_demangle(const char *mangled, size_t mangled_length, char *buffer, size_t *buffer_size, uint32_t flags);

/* Demangled text as libiberty hands it over, kept to CW_NAME_BYTES + 1 bytes. */
struct capped_text {
    char text[CW_NAME_SLOT];
    size_t length;
    jmp_buf full;
};

/* libiberty's output callback: appends, and once the text is longer than any name a report keeps,
 * leaves the demangler for good (a longjmp back into rust_demangle_capped). v0 back-references let a
 * few hundred bytes of symbol expand to gigabytes of text, written in time proportional to the text,
 * and libiberty has no limit of its own on either. */
static void capped_text_append(const char *piece, size_t length, void *opaque) {
    struct capped_text *out = opaque;
    size_t room = CW_NAME_BYTES + 1 - out->length;
    size_t n = length < room ? length : room;
    memcpy(out->text + out->length, piece, n);
    out->length += n;
    if (out->length > CW_NAME_BYTES) longjmp(out->full, 1);
}

/* A Rust symbol demangled by libiberty (v0 `_R…`, or legacy `_ZN…17h<hash>E` with the hash left out and
 * `$u7b$`/`$LT$`/`..` escapes decoded, as `nm --demangle=rust` prints them), at most CW_NAME_BYTES + 1
 * bytes: a longer name comes back cut there, for the caller to mark. NULL when not a Rust symbol.
 * libiberty bounds its own recursion (1024 levels); its rust_demangle_callback allocates nothing but
 * a punycode buffer for a non-ASCII identifier, which a cut in the middle of one leaks. */
static char *rust_demangle_capped(const char *name) {
    struct capped_text *out = malloc(sizeof *out);
    if (!out) return NULL;
    out->length = 0;
    /* Options 0: no DMGL_VERBOSE, so no legacy hash and no crate disambiguators (`std[e28293b1aa0f68bd]`). */
    int demangled;
    if (setjmp(out->full) == 0) {
        demangled = rust_demangle_callback(name, 0, capped_text_append, out);
    } else {
        demangled = 1; /* cut: the text so far, longer than any name a report keeps */
    }
    char *result = demangled ? strndup(out->text, out->length) : NULL;
    free(out);
    return result;
}

char *cw_demangle(const char *name) {
    if (!name) return NULL;
    /* Rust: v0, or legacy (an Itanium-shaped `_ZN…E` path ending in a `17h<16 hex digits>` hash). */
    if (strncmp(name, "_R", 2) == 0 || strncmp(name, "_ZN", 3) == 0) {
        char *rust = rust_demangle_capped(name);
        if (rust || name[1] == 'R') return rust;
    }
    if (strncmp(name, "_Z", 2) == 0) {
        int status = 0;
        char *result = __cxa_demangle(name, NULL, NULL, &status);
        return status == 0 ? result : NULL;
    }
    if (strncmp(name, "$s", 2) == 0 || strncmp(name, "$S", 2) == 0 || strncmp(name, "_$s", 3) == 0 ||
        strncmp(name, "$e", 2) == 0 || strncmp(name, "_T0", 3) == 0) {
        return swift_demangle(name, strlen(name), NULL, NULL, 0);
    }
    return NULL;
}
