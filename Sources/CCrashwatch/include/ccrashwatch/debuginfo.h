/*
 * debuginfo.h — the inflated debug-file cache behind the symbolizer's debug-file lookup (debuginfo.c).
 */
#ifndef CCRASHWATCH_DEBUGINFO_H
#define CCRASHWATCH_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Uses the directory open at `dirfd` (owned by the caller, writable) as the inflated debug-file cache:
 * debug files are looked up there by build-id first, and compressed ones found elsewhere are noted for
 * cw_symbolizer_fill_cache. -1 turns it off.
 */
void cw_symbolizer_set_cache(int dirfd);

/**
 * Forks a process that inflates the noted debug files into the cache (`eu-elfcompress -t none`, one at a
 * time, atomically renamed into place) and returns at once: the number of files it will inflate, or -1.
 */
int cw_symbolizer_fill_cache(void);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_DEBUGINFO_H */
