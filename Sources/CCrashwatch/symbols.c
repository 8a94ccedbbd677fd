/*
 * symbols.c — function names for addresses in a live process, through libdw's dwfl (elfutils):
 * the process's modules come from /proc/PID/maps, their ELF files from disk (a deleted or memfd main
 * executable from /proc/PID/exe), and separate debug info through the standard search.
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

struct cw_symbolizer {
    Dwfl *dwfl;
    pid_t pid;              /* 0 for an offline session */
    char executable[4096];  /* readlink of /proc/PID/exe, " (deleted)" removed */
    char *debuginfo_path;   /* libdw's search path: ":.debug:/usr/lib/debug" plus the caller's directories */
    Dwfl_Callbacks callbacks;
};

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

static int strip_deleted(char *path) {
    size_t n = strlen(path);
    static const char suffix[] = " (deleted)";
    size_t s = sizeof suffix - 1;
    if (n >= s && strcmp(path + n - s, suffix) == 0) {
        path[n - s] = '\0';
        return 1;
    }
    return 0;
}

/* dwfl_linux_proc_find_elf, except that a deleted or memfd main executable is read through
 * /proc/PID/exe, which still reaches the whole file (symbols included) while the process lives. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
                    char **file_name, Elf **elfp) {
    cw_symbolizer *s = current_symbolizer;
    if (s && module_name && (strstr(module_name, " (deleted)") || strncmp(module_name, "/memfd:", 7) == 0)) {
        char name[4096];
        snprintf(name, sizeof name, "%s", module_name);
        strip_deleted(name);
        if (s->executable[0] && strcmp(name, s->executable) == 0) {
            char exe[64];
            snprintf(exe, sizeof exe, "/proc/%d/exe", (int)s->pid);
            int fd = open(exe, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                *elfp = elf_begin(fd, ELF_C_READ_MMAP, NULL);
                if (*elfp) {
                    *file_name = strdup(exe);
                    return fd;
                }
                close(fd);
            }
        }
    }
    return dwfl_linux_proc_find_elf(mod, userdata, module_name, base, file_name, elfp);
}

static cw_symbolizer *symbolizer_begin(const char *debug_directories, int offline) {
    cw_symbolizer *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->debuginfo_path = make_debuginfo_path(debug_directories);
    s->callbacks.find_elf = offline ? dwfl_build_id_find_elf : find_elf;
    s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    s->callbacks.section_address = offline ? dwfl_offline_section_address : NULL;
    s->callbacks.debuginfo_path = &s->debuginfo_path;
    s->dwfl = s->debuginfo_path ? dwfl_begin(&s->callbacks) : NULL;
    if (!s->dwfl) {
        free(s->debuginfo_path);
        free(s);
        errno = ENOMEM;
        return NULL;
    }
    return s;
}

cw_symbolizer *cw_symbolizer_create(pid_t pid, const char *debug_directories) {
    cw_symbolizer *s = symbolizer_begin(debug_directories, 0);
    if (!s) return NULL;
    s->pid = pid;
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(exe, s->executable, sizeof s->executable - 1);
    s->executable[n > 0 ? n : 0] = '\0';
    strip_deleted(s->executable);

    dwfl_report_begin(s->dwfl);
    int result = dwfl_linux_proc_report(s->dwfl, pid);
    dwfl_report_end(s->dwfl, NULL, NULL);
    if (result != 0) {
        cw_symbolizer_destroy(s);
        errno = result > 0 ? result : ESRCH;
        return NULL;
    }
    return s;
}

cw_symbolizer *cw_symbolizer_create_offline(const char *debug_directories) {
    cw_symbolizer *s = symbolizer_begin(debug_directories, 1);
    if (s) dwfl_report_begin(s->dwfl);
    return s;
}

int cw_symbolizer_report_file(cw_symbolizer *s, const char *name, const char *path, uint64_t load_address) {
    Dwfl_Module *module = dwfl_report_elf(s->dwfl, name, path, -1, load_address, false);
    if (!module) {
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
