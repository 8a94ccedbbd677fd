/*
 * dwarfnames.c — the name a function's DIE is known by: its linkage name, else (or for a Rust function
 * exported under another name) its DWARF name qualified by the namespaces, classes and structures its
 * declaration sits in. Walks of a hostile file's DWARF are bounded.
 */
#define _GNU_SOURCE
#include "symbolizer_internal.h"

#include <stdlib.h>
#include <string.h>

/* DIEs whose names qualify the functions declared inside them (`std`, `vector<int>`, a function
 * holding a local class). */
static int is_naming_scope_tag(int tag) {
    return is_container_tag(tag) || tag == DW_TAG_enumeration_type || tag == DW_TAG_subprogram;
}

/* Appends `text` to the name in `buffer` (a CW_NAME_SLOT-byte slot holding `*used` bytes), keeping at
 * most CW_NAME_BYTES + 1 bytes. */
static void name_append(char *buffer, size_t *used, const char *text) {
    size_t room = CW_NAME_BYTES + 1 - *used;
    size_t length = strnlen(text, room);
    memcpy(buffer + *used, text, length);
    *used += length;
    buffer[*used] = '\0';
}

/* The DIE declaring the function of `die`: DW_AT_abstract_origin and DW_AT_specification followed, a
 * bounded number of times (an inlined call's origin, an out-of-line definition's declaration). */
static void declaration_die(Dwarf_Die *die, Dwarf_Die *declaration) {
    *declaration = *die;
    for (int i = 0; i < CW_MAX_REFERENCES; i++) {
        Dwarf_Attribute attribute;
        Dwarf_Die next;
        if (!dwarf_attr(declaration, DW_AT_abstract_origin, &attribute) &&
            !dwarf_attr(declaration, DW_AT_specification, &attribute)) return;
        if (!dwarf_formref_die(&attribute, &next)) return;
        *declaration = next;
    }
}

/* The DIEs enclosing `target` in its unit, outermost first and the unit itself left out: at most `max`
 * of them are written to `path`; their count, or -1 when the unit's tree does not lead to `target`
 * within the bounds. Uses DWARF's layout (a DIE's children come after it and before its next sibling),
 * so it walks siblings only, never back up. */
static int enclosing_dies(Dwarf_Die *target, Dwarf_Die *path, int max) {
    Dwarf_Die current;
    if (!dwarf_diecu(target, &current, NULL, NULL)) return -1;
    Dwarf_Off goal = dwarf_dieoffset(target);
    long budget = CW_MAX_WALK_DIES;
    for (int depth = 0;; depth++) {
        Dwarf_Die child, next;
        if (dwarf_child(&current, &child) != 0 || dwarf_dieoffset(&child) > goal) return -1;
        /* The last child starting at or before the goal holds it. */
        while (dwarf_dieoffset(&child) != goal) {
            if (--budget <= 0) return -1;
            if (dwarf_siblingof(&child, &next) != 0 || dwarf_dieoffset(&next) > goal) break;
            child = next;
        }
        if (dwarf_dieoffset(&child) == goal) return depth;
        if (depth >= max) return -1;
        path[depth] = child;
        current = child;
    }
}

/* Whether names in `die`'s unit can be qualified by enclosing scopes: not in C, which has none (and
 * whose units would be walked for nothing). */
static int language_has_scopes(Dwarf_Die *die) {
    Dwarf_Die unit;
    if (!dwarf_diecu(die, &unit, NULL, NULL)) return 1;
    switch (dwarf_srclang(&unit)) {
    case DW_LANG_C89: case DW_LANG_C: case DW_LANG_C99: case DW_LANG_C11: case 0x2c /* DW_LANG_C17 */:
        return 0;
    }
    return 1;
}

/* `die`'s function name qualified by the namespaces, classes and structures its declaration sits in
 * (`std::vector<int>::push_back`, `app::(anonymous namespace)::Box::get`), written into `slot`
 * (CW_NAME_SLOT bytes); the bare name when the scopes cannot be found; NULL without a name. */
static const char *qualified_die_name(Dwarf_Die *die, char *slot) {
    Dwarf_Die declaration;
    declaration_die(die, &declaration);
    Dwarf_Attribute attribute;
    const char *name = dwarf_diename(&declaration);
    if (!name) name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attribute));
    if (!name || !slot || !language_has_scopes(&declaration)) return name;
    Dwarf_Die path[CW_MAX_SCOPE_DEPTH];
    int depth = enclosing_dies(&declaration, path, CW_MAX_SCOPE_DEPTH);
    size_t used = 0;
    slot[0] = '\0';
    for (int i = 0; i < depth; i++) {
        int tag = dwarf_tag(&path[i]);
        if (!is_naming_scope_tag(tag)) continue;
        const char *scope = dwarf_diename(&path[i]);
        if (!scope) scope = tag == DW_TAG_namespace ? "(anonymous namespace)" : "{unnamed type}";
        name_append(slot, &used, scope);
        name_append(slot, &used, "::");
    }
    if (used == 0) return name;
    name_append(slot, &used, name);
    return slot;
}


/* The last `::` component of a demangled Rust path, generic arguments left out: `index` of
 * `<alloc::vec::Vec<T,A> as core::ops::index::Index<I>>::index`, `range` of
 * `core::slice::index::range::<core::ops::range::RangeInclusive<usize>>`. Sets `*length`. */
static const char *rust_last_component(const char *path, size_t *length) {
    const char *start = path, *last = path;
    size_t last_length = 0;
    int depth = 0;
    for (const char *p = path;; p++) {
        int end = *p == '\0' || (depth == 0 && p[0] == ':' && p[1] == ':');
        if (end) {
            if (p > start && *start != '<') {
                last = start;
                last_length = (size_t)(p - start);
            }
            if (*p == '\0') break;
            start = p + 2;
            p++;
            continue;
        }
        if (*p == '<' || *p == '(' || *p == '[') depth++;
        else if ((*p == '>' && (p == path || p[-1] != '-')) || *p == ')' || *p == ']') depth = depth > 0 ? depth - 1 : 0;
    }
    *length = last_length;
    return last;
}

/* Whether a Rust function's linkage name is its path, ending in its DW_AT_name (`name`, whose
 * generic arguments are left out; legacy `{{closure}}` stands for any `{closure#N}`): not so for
 * exports under another name (`#[no_mangle]`, `#[export_name]`), nor for std's internal symbols, which
 * rustc mangles under a made-up crate `__rustc` (`__rustc::rust_begin_unwind` is
 * `std::panicking::panic_handler`, `__rustc::__rust_abort` is `std::rt::__rust_abort`). */
static int rust_linkage_name_is_path(const char *linkage, const char *name) {
    size_t name_length = strcspn(name, "<");
    if (name_length == 0) name_length = strlen(name);
    char *demangled = cw_rust_demangle_capped(linkage);
    const char *path = demangled ? demangled : linkage;
    size_t length = 0;
    const char *last = rust_last_component(path, &length);
    int same = (length == name_length && strncmp(last, name, length) == 0) ||
               (length == 11 && strncmp(last, "{{closure}}", 11) == 0 && strncmp(name, "{closure#", 9) == 0);
    if (strncmp(path, "__rustc::", 9) == 0) same = 0;
    free(demangled);
    return same;
}

/* The name a function DIE is known by: its linkage (mangled) name when it has one, following
 * DW_AT_abstract_origin and DW_AT_specification; else — or for a Rust function exported under another
 * name — its DWARF name qualified by the scopes of its declaration, built in `slot` (CW_NAME_SLOT
 * bytes; NULL: the bare name). */
const char *cw_die_function_name(Dwarf_Die *die, char *slot) {
    Dwarf_Attribute attribute;
    const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute));
    if (!linkage) linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attribute));
    if (linkage && slot) {
        Dwarf_Die unit;
        const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attribute));
        if (name && dwarf_diecu(die, &unit, NULL, NULL) && dwarf_srclang(&unit) == DW_LANG_Rust &&
            !rust_linkage_name_is_path(linkage, name)) {
            const char *qualified = qualified_die_name(die, slot);
            if (qualified) return qualified;
        }
    }
    return linkage ? linkage : qualified_die_name(die, slot);
}
