/*
 * footprint.h — the supervisor's memory footprint (footprint.c): malloc's thresholds and trimming, and
 * read-only pages of loaded objects given back to the page cache.
 */
#ifndef CCRASHWATCH_FOOTPRINT_H
#define CCRASHWATCH_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Drops the read-only pages (code, constants) of every loaded object from the process's resident set, as
 * MADV_DONTNEED does: unchanged from their files, they come back from the page cache on their next use.
 * The pages only loading and start-up touched (relocation tables, initialisers, option parsing) stay out.
 */
void cw_drop_loaded_pages(void);

/**
 * Makes freed heap memory go back to the system as it is freed: blocks of 128 KiB and more get mappings of
 * their own (unmapped when freed), and a heap whose free top grows past 128 KiB is cut back. Without it glibc
 * raises both thresholds after the first large block is freed (up to 32 MiB), and a thread's arena then
 * keeps what one big crash report needed for the rest of the process's life. Process-wide; any thread.
 */
void cw_malloc_return_promptly(void);

/** Gives the free pages inside every arena back to the system (glibc's malloc_trim(0)); 1 when any went. */
int cw_malloc_trim(void);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_FOOTPRINT_H */
