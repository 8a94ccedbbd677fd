/*
 * debuginfo.c — the debug files of the symbolizer's modules, found without opening anything the crashed
 * process chose before its type is checked (cw_open_untrusted: a regular file, or nothing is opened) and
 * without a build-id match; links are followed only inside trusted debug directories. Also the cache of
 * inflated debug files the next crash maps as they are.
 */
#define _GNU_SOURCE
#include "ccrashwatch/debuginfo.h"
#include "ccrashwatch/files.h"
#include "symbolizer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

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
    char hex[129];
    if (build_id_hex(mod, hex, sizeof hex) != 0) return -1;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", directory, hex, hex + 2) >= (int)sizeof path) return -1;
    /* Trusted directories: their .build-id links are the packaging's own. */
    return open_candidate(mod, path, 1, found_name);
}

static int find_debuginfo_uncached(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                                   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                   char **debuginfo_file_name) {
    cw_symbolizer *s = cw_current_symbolizer;
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

int cw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
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
int cw_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
                char **file_name, Elf **elfp) {
    cw_symbolizer *s = cw_current_symbolizer;
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
