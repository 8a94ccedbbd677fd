/*
 * symbols.c — function names, source lines and inline chains for addresses, through libdw's dwfl
 * (elfutils), over images the caller reports: as open files (descriptors the caller opened and checked)
 * or by build-id alone. Nothing here opens a path the crashed process chose without O_NONBLOCK, a
 * regular-file check and a build-id match; links are followed only inside trusted debug directories.
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
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>

struct cw_symbolizer {
    Dwfl *dwfl;
    char *debuginfo_path;   /* libdw's search path: ":.debug:/usr/lib/debug" plus the caller's directories */
    char *directories;      /* the caller's debug directories, colon-separated (may be empty) */
    int use_debuginfod;     /* ask debuginfod (DEBUGINFOD_URLS) when nothing local matches */
    Dwfl_Callbacks callbacks;
    char *level_names;      /* qualified DWARF names of the last cw_source_levels call, one slot per level */
    size_t level_name_slots;
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

int cw_open_untrusted(const char *path, int follow_links) {
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow_links ? 0 : O_NOFOLLOW);
    int fd;
    do {
        fd = open(path, flags);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISREG(st.st_mode) ? errno : EINVAL;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
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
 * followed in directories the image's path names. Each candidate is opened O_NONBLOCK and must be
 * a regular file with the module's build-id. Then debuginfod, when enabled. */
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

static int safe_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
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
    if (name) {
        out->name = name;
        out->offset = offset;
        out->size = symbol.st_size;
        out->source = symbol_source(module, symbol_elf);
    }
    current_symbolizer = NULL;
    return name ? 0 : 1;
}

/* The name a function DIE is known by: its linkage (mangled) name when it has one, else its name,
 * following DW_AT_abstract_origin and DW_AT_specification. */
static const char *die_function_name(Dwarf_Die *die) {
    Dwarf_Attribute attribute;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute));
    if (!name) name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attribute));
    if (!name) name = dwarf_diename(die);
    return name;
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
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point) {
            chain_count = dwarf_getscopes_die(&scopes[i], &chain);
            break;
        }
    }
    Dwarf_Files *files = NULL;
    size_t file_count = 0;
    if (dwarf_getsrcfiles(cu, &files, &file_count) != 0) files = NULL;

    for (int i = 0; i < chain_count && count < max_levels; i++) {
        Dwarf_Die *die = &chain[i];
        int tag = dwarf_tag(die);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine && tag != DW_TAG_entry_point) continue;
        cw_source_level *level = &levels[count++];
        level->name = die_function_name(die);
        level->file = file;
        level->line = line;
        level->column = column;
        level->inlined = tag == DW_TAG_inlined_subroutine;
        if (tag != DW_TAG_inlined_subroutine) break; /* the concrete function ends the chain */
        /* The next (outer) level is located at this inlined call's call site. */
        Dwarf_Word file_index = (Dwarf_Word)die_udata(die, DW_AT_call_file);
        file = (files && file_index > 0 && file_index < file_count) ? dwarf_filesrc(files, file_index, NULL, NULL) : NULL;
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

char *cw_demangle(const char *name) {
    if (!name) return NULL;
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
