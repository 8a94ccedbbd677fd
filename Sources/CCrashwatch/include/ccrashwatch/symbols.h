/*
 * symbols.h — function names for addresses through a libdw session over reported images (symbols.c).
 */
#ifndef CCRASHWATCH_SYMBOLS_H
#define CCRASHWATCH_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A libdw session over reported images. */
typedef struct cw_symbolizer cw_symbolizer;

/**
 * Starts a session: report images, then end reporting. Separate debug info is searched by build-id in
 * `debug_directories` (colon-separated, may be NULL) and /usr/lib/debug, and by .gnu_debuglink next to
 * the image, in its .debug/ and under those directories; debuginfod (DEBUGINFOD_URLS) only when
 * `use_debuginfod`. NULL with errno on failure.
 */
cw_symbolizer *cw_symbolizer_create(const char *debug_directories, int use_debuginfod);

/** Reports the ELF file open at `fd` (the session keeps its own duplicate) as module `name` loaded at `load_address`. */
int cw_symbolizer_report_fd(cw_symbolizer *symbolizer, const char *name, int fd, uint64_t load_address);

/**
 * Reports a module known only by its address range and build-id: libdw then looks for its file in the
 * debug directories' `.build-id` trees and, when enabled, on debuginfod servers.
 */
int cw_symbolizer_report_build_id(cw_symbolizer *symbolizer, const char *name, uint64_t start, uint64_t end,
                                  const uint8_t *build_id, size_t build_id_length);

/** Ends an offline session's reporting; lookups work afterwards. */
void cw_symbolizer_end_reporting(cw_symbolizer *symbolizer);

/** Reports more images to a session whose reporting ended (lookups made so far are kept); end it again after. */
void cw_symbolizer_begin_adding(cw_symbolizer *symbolizer);

/** libdw's text for its last error on this thread. */
const char *cw_symbolizer_last_error(void);

/** Ends the libdw session. */
void cw_symbolizer_destroy(cw_symbolizer *symbolizer);

/* Where a symbol came from. */
#define CW_SYMBOL_SOURCE_NONE 0
#define CW_SYMBOL_SOURCE_SYMTAB 1    /* the file's own .symtab */
#define CW_SYMBOL_SOURCE_DYNSYM 2    /* only the dynamic symbol table */
#define CW_SYMBOL_SOURCE_DEBUGINFO 3 /* a separate debug file */

/** What libdw knows about one address. Strings belong to the symbolizer. */
typedef struct {
    const char *module_name; /* the module's name (its path as mapped) */
    uint64_t module_start;
    const char *name;        /* the raw (mangled) symbol name, or NULL */
    uint64_t offset;         /* address - symbol value */
    uint64_t size;           /* the symbol's size */
    int32_t source;          /* CW_SYMBOL_SOURCE_* */
} cw_symbol;

/** Looks up `address`: 0 with a symbol, 1 when only the module is known, -1 when no module contains it. */
int cw_symbolize(cw_symbolizer *symbolizer, uint64_t address, cw_symbol *out);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_SYMBOLS_H */
