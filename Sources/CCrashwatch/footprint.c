/*
 * footprint.c — the supervisor's resident memory: malloc's thresholds set so that freed memory goes back
 * to the system, arenas trimmed, and the read-only pages of loaded objects dropped once start-up is over.
 */
#define _GNU_SOURCE
#include "ccrashwatch/footprint.h"

#include <link.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/* Whether an object's code was patched when it was loaded (text relocations): its read-only pages then differ
 * from the file and must stay. */
static int has_text_relocations(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *entry = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
             entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_TEXTREL || (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL))) return 1;
        }
    }
    return 0;
}

static int drop_read_only_pages(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size, (void)data;
    /* The vdso is no file to read back from; an object with text relocations has patched pages. */
    if ((info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")) || has_text_relocations(info)) return 0;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        /* Writable segments hold relocated data (RELRO included, read-only only after relocation): never. */
        if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W)) continue;
        uintptr_t start = (info->dlpi_addr + segment->p_vaddr) & ~(uintptr_t)(page - 1);
        uintptr_t end = info->dlpi_addr + segment->p_vaddr + segment->p_memsz;
        madvise((void *)start, end - start, MADV_DONTNEED);
    }
    return 0;
}

void cw_drop_loaded_pages(void) {
    dl_iterate_phdr(drop_read_only_pages, NULL);
}

void cw_malloc_return_promptly(void) {
    /* Setting either fixes it: glibc stops moving the thresholds after the blocks it frees. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

int cw_malloc_trim(void) {
    return malloc_trim(0);
}
