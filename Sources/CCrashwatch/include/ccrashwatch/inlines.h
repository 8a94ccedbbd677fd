/*
 * inlines.h — source lines and inline chains for addresses, from DWARF (inlines.c).
 */
#ifndef CCRASHWATCH_INLINES_H
#define CCRASHWATCH_INLINES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ccrashwatch/symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One level of the (possibly inlined) calls an address is in, from DWARF. Strings belong to the
 * symbolizer and live until its next cw_source_levels call.
 */
typedef struct {
    const char *name;  /* linkage (mangled) name, else the DWARF name qualified by the namespaces and
                          classes of its declaration (`ns::Type<int>::method`; at most 4097 bytes, so
                          that a longer one shows as cut); NULL when unknown */
    const char *file;  /* source file, NULL when unknown */
    int32_t line;      /* 0 when unknown */
    int32_t column;    /* 0 when unknown */
    int32_t inlined;   /* this level was inlined into the next one */
} cw_source_level;

/**
 * The inline chain at `address`, innermost first, ending with the concrete function; each level's
 * location is where the inner call happened (the line table's row for the innermost). Functions nested
 * in namespaces (rustc, clang) are found too. Returns the number of levels written (0 without DWARF).
 */
int cw_source_levels(cw_symbolizer *symbolizer, uint64_t address, cw_source_level *levels, int max_levels);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_INLINES_H */
