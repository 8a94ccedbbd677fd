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

#include <elfutils/libdwfl.h>

struct cw_symbolizer {
    Dwfl *dwfl;
    pid_t pid;
    char executable[4096]; /* readlink of /proc/PID/exe, " (deleted)" removed */
};

static __thread cw_symbolizer *current_symbolizer;
static char *debuginfo_path = NULL;

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

static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

cw_symbolizer *cw_symbolizer_create(pid_t pid) {
    cw_symbolizer *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->pid = pid;
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(exe, s->executable, sizeof s->executable - 1);
    s->executable[n > 0 ? n : 0] = '\0';
    strip_deleted(s->executable);

    s->dwfl = dwfl_begin(&callbacks);
    if (!s->dwfl) {
        free(s);
        errno = ENOMEM;
        return NULL;
    }
    dwfl_report_begin(s->dwfl);
    int result = dwfl_linux_proc_report(s->dwfl, pid);
    dwfl_report_end(s->dwfl, NULL, NULL);
    if (result != 0) {
        dwfl_end(s->dwfl);
        free(s);
        errno = result > 0 ? result : ESRCH;
        return NULL;
    }
    return s;
}

void cw_symbolizer_destroy(cw_symbolizer *s) {
    if (!s) return;
    dwfl_end(s->dwfl);
    free(s);
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
    const char *name = dwfl_module_addrinfo(module, address, &offset, &symbol, NULL, NULL, NULL);
    current_symbolizer = NULL;
    if (name) {
        out->name = name;
        out->offset = offset;
        out->size = symbol.st_size;
    }
    return name ? 0 : 1;
}
