/*
 * units.c — which compilation unit of a module covers an address. dwfl_module_addrdie trusts
 * .debug_aranges, which may cover only some units: a Go binary built with cgo has aranges for its gcc
 * units only, and libdw (0.188) then answers with the last C unit for a Go address. A unit is used only
 * when its own ranges (DW_AT_low_pc/high_pc or DW_AT_ranges) cover the address; otherwise the module's
 * units are searched through an index of their ranges, built once per module and bounded.
 */
#define _GNU_SOURCE
#include "symbolizer_internal.h"

#include <stdlib.h>

/* Units indexed per module, ranges kept per unit, and modules indexed per session. */
#define CW_MAX_UNITS_PER_MODULE (1 << 17)
#define CW_MAX_RANGES_PER_UNIT 4096
#define CW_MAX_UNIT_RANGES (1 << 20)
#define CW_MAX_INDEXED_MODULES 1024

static int by_low(const void *a, const void *b) {
    const struct unit_range *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* Adds every range of every unit of `module` (bounded) to `index`, sorted by start. */
static void index_units(Dwfl_Module *module, struct module_units *index) {
    size_t capacity = 0, units = 0;
    Dwarf_Die *cu = NULL;
    Dwarf_Addr bias = 0;
    while (units++ < CW_MAX_UNITS_PER_MODULE && (cu = dwfl_module_nextcu(module, cu, &bias)) != NULL) {
        Dwarf_Addr base = 0, low = 0, high = 0;
        ptrdiff_t offset = 0;
        for (int n = 0; n < CW_MAX_RANGES_PER_UNIT && (offset = dwarf_ranges(cu, offset, &base, &low, &high)) > 0; n++) {
            if (high <= low) continue;
            if (index->count == CW_MAX_UNIT_RANGES) goto done;
            if (index->count == capacity) {
                size_t grown = capacity ? capacity * 2 : 256;
                struct unit_range *ranges = realloc(index->ranges, grown * sizeof *ranges);
                if (!ranges) goto done;
                index->ranges = ranges;
                capacity = grown;
            }
            index->ranges[index->count++] = (struct unit_range){.low = low + bias, .high = high + bias, .cu = cu, .bias = bias};
        }
    }
done:
    if (index->count > 1) qsort(index->ranges, index->count, sizeof *index->ranges, by_low);
}

/* The module's unit index, built on first use; NULL when the session's bound or memory say no. */
static const struct module_units *module_units(cw_symbolizer *s, Dwfl_Module *module) {
    for (size_t i = 0; i < s->module_unit_count; i++) {
        if (s->module_units[i].module == module) return &s->module_units[i];
    }
    if (s->module_unit_count >= CW_MAX_INDEXED_MODULES) return NULL;
    struct module_units *grown = realloc(s->module_units, (s->module_unit_count + 1) * sizeof *grown);
    if (!grown) return NULL;
    s->module_units = grown;
    struct module_units *index = &grown[s->module_unit_count++];
    *index = (struct module_units){.module = module};
    index_units(module, index);
    return index;
}

Dwarf_Die *cw_unit_at(cw_symbolizer *s, Dwfl_Module *module, uint64_t address, Dwarf_Addr *bias) {
    Dwarf_Die *cu = dwfl_module_addrdie(module, address, bias);
    if (cu && dwarf_haspc(cu, address - *bias) > 0) return cu;
    const struct module_units *index = module_units(s, module);
    if (!index) return NULL;
    /* The last range starting at or before the address, then a few before it (units may overlap). */
    size_t low = 0, high = index->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (index->ranges[middle].low <= address) low = middle + 1;
        else high = middle;
    }
    for (size_t i = low, tries = 0; i > 0 && tries < 8; i--, tries++) {
        const struct unit_range *range = &index->ranges[i - 1];
        if (address >= range->low && address < range->high) {
            *bias = range->bias;
            return range->cu;
        }
    }
    return NULL;
}
