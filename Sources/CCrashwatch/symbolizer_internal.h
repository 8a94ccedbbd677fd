/*
 * symbolizer_internal.h — the libdw session from the inside, shared by the files that answer its lookups:
 * symbols.c (the session, symbol names), debuginfo.c (finding debug files), dwarfnames.c (a function's name
 * from DWARF), units.c (the unit covering an address), inlines.c (source lines and inline chains) and
 * demangle.c. Not part of the Swift module.
 */
#ifndef CCRASHWATCH_SYMBOLIZER_INTERNAL_H
#define CCRASHWATCH_SYMBOLIZER_INTERNAL_H

#include "ccrashwatch/symbols.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

/* One address range of a unit's concrete function. */
struct function_range {
    Dwarf_Addr low, high;
    Dwarf_Die die;
};

/* The concrete functions of one unit by address (sorted by `low`), found once by walking the unit
 * through its namespaces, classes and structures: threads share most units, and walking a large one
 * (72,000 DIEs in a unit of Rust's std) for every address would repeat the same work. */
struct unit_functions {
    const void *unit;               /* the unit's Dwarf_CU */
    struct function_range *ranges;
    size_t count;
};

/* A module's function symbols (no ARM mapping symbols) sorted by address, built on its first lookup that
 * libdw answered with a mapping symbol. */
struct indexed_symbol {
    GElf_Addr value;
    GElf_Sym symbol;
    GElf_Word section;
    const char *name;
    Elf *elf;
};

struct symbol_index {
    Dwfl_Module *module;
    struct indexed_symbol *symbols;
    size_t count;
};

/* One address range of a module's compilation unit (module addresses: bias added). */
struct unit_range {
    Dwarf_Addr low, high, bias;
    Dwarf_Die *cu; /* libdw's own, valid for the session */
};

/* A module's units by address (sorted by `low`), built the first time a unit is needed for an address that
 * .debug_aranges misses or gives to a unit that does not cover it (units.c). */
struct module_units {
    Dwfl_Module *module;
    struct unit_range *ranges;
    size_t count;
};

struct cw_symbolizer {
    Dwfl *dwfl;
    char *debuginfo_path;   /* libdw's search path: ":.debug:/usr/lib/debug" plus the caller's directories */
    char *directories;      /* the caller's debug directories, colon-separated (may be empty) */
    int use_debuginfod;     /* ask debuginfod (DEBUGINFOD_URLS) when nothing local matches */
    Dwfl_Callbacks callbacks;
    char *level_names;      /* qualified DWARF names of the last cw_source_levels call, one slot per level */
    size_t level_name_slots;
    struct unit_functions *units; /* function indexes of units dwarf_getscopes cannot search */
    size_t unit_count;
    size_t indexed_ranges;
    struct symbol_index *symbol_indexes; /* modules' function symbols by address, for mapping-symbol hits */
    size_t symbol_index_count;
    struct module_units *module_units;   /* modules' units by address, for addresses aranges do not settle */
    size_t module_unit_count;
};

/* The session whose lookup is running: libdw's callbacks get the module, not the session (symbols.c). */
extern __thread cw_symbolizer *cw_current_symbolizer;

/* libdw's find_elf and find_debuginfo callbacks: nothing the crashed process named is followed, and every
 * candidate must carry the module's build-id (debuginfo.c). */
int cw_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
                char **file_name, Elf **elfp);
int cw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                      const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                      char **debuginfo_file_name);

/* Bounds for walking DWARF from a hostile file: enclosing scopes followed to qualify a name, DIE nesting
 * followed looking for an address, DIEs visited per walk, references followed from a DIE to its
 * declaration. */
#define CW_MAX_SCOPE_DEPTH 32
#define CW_MAX_WALK_DEPTH 256
#define CW_MAX_WALK_DIES (1 << 20)
#define CW_MAX_REFERENCES 8
/* The longest name built or demangled here, in bytes. One byte more is kept (a slot holds it and the
 * NUL), so that the Swift side sees a longer name as cut and marks it. */
#define CW_NAME_BYTES 4096
#define CW_NAME_SLOT (CW_NAME_BYTES + 2)

static inline int is_function_tag(int tag) {
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

/* DIEs without addresses whose children may be functions: rustc and clang nest definitions in them. */
static inline int is_container_tag(int tag) {
    switch (tag) {
    case DW_TAG_namespace: case DW_TAG_module: case DW_TAG_class_type: case DW_TAG_structure_type:
    case DW_TAG_union_type: case DW_TAG_interface_type:
        return 1;
    }
    return 0;
}

/* The name a function DIE is known by, qualified in `slot` (CW_NAME_SLOT bytes) where it must be
 * (dwarfnames.c). */
const char *cw_die_function_name(Dwarf_Die *die, char *slot);

/* The compilation unit of `module` whose ranges cover `address` (a module address), and its bias; NULL when
 * none does (units.c). */
Dwarf_Die *cw_unit_at(cw_symbolizer *s, Dwfl_Module *module, uint64_t address, Dwarf_Addr *bias);

/* A Rust symbol demangled, at most CW_NAME_BYTES + 1 bytes; NULL when not a Rust symbol (demangle.c). */
char *cw_rust_demangle_capped(const char *name);

#endif /* CCRASHWATCH_SYMBOLIZER_INTERNAL_H */
