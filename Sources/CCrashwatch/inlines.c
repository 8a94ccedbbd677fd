/*
 * inlines.c — source lines and inline chains for addresses, from the DWARF of the symbolizer's modules:
 * dwarf_getscopes where it reaches, else a walk of the unit (rustc and clang nest functions in namespaces,
 * out of its reach) through a per-unit index of its functions.
 */
#define _GNU_SOURCE
#include "ccrashwatch/inlines.h"
#include "symbolizer_internal.h"

#include <stdlib.h>
#include <string.h>

/* DIEs whose address ranges can contain an address, and whose children then may too. */
static int is_pc_scope_tag(int tag) {
    switch (tag) {
    case DW_TAG_subprogram: case DW_TAG_inlined_subroutine: case DW_TAG_entry_point: case DW_TAG_lexical_block:
    case DW_TAG_try_block: case DW_TAG_catch_block: case DW_TAG_with_stmt:
        return 1;
    }
    return 0;
}

/* The function-like DIEs containing `pc` (relative to the module), innermost first, in a malloc'ed
 * array; their count (0 when none). Walks down from `first` (and, with `siblings`, its next siblings)
 * through namespaces, modules, classes and structures as well as through the scopes containing `pc`:
 * rustc (and clang) nest function definitions in namespaces, where dwarf_getscopes (elfutils 0.188)
 * stops looking. Once a function containing `pc` is found, only its subtree is searched further.
 * Bounded in depth and in DIEs visited. */
static int function_chain_at(Dwarf_Die *first, int siblings, Dwarf_Addr pc, Dwarf_Die **chain_out) {
    *chain_out = NULL;
    Dwarf_Die *stack = malloc(CW_MAX_WALK_DEPTH * sizeof *stack);
    Dwarf_Die *chain = malloc(CW_MAX_WALK_DEPTH * sizeof *chain);
    if (!stack || !chain) {
        free(stack);
        free(chain);
        return 0;
    }
    stack[0] = *first;
    int top = 1, committed = -1, count = 0;
    for (long visited = 0; top > 0 && visited < CW_MAX_WALK_DIES; visited++) {
        Dwarf_Die *die = &stack[top - 1];
        int tag = dwarf_tag(die);
        int descend = 0;
        if (is_pc_scope_tag(tag)) {
            descend = dwarf_haspc(die, pc) > 0;
            if (descend && is_function_tag(tag)) {
                committed = top - 1;
                count = 0;
                for (int i = top - 1; i >= 0; i--) {
                    if (is_function_tag(dwarf_tag(&stack[i]))) chain[count++] = stack[i];
                }
            }
        } else if (committed < 0 && is_container_tag(tag)) {
            descend = 1;
        }
        if (descend && top < CW_MAX_WALK_DEPTH && dwarf_child(die, &stack[top]) == 0) {
            top++;
            continue;
        }
        /* The next sibling, climbing out of exhausted subtrees; never past the function found. */
        while (top > 0) {
            if (committed >= top - 1 || (top == 1 && !siblings)) {
                top = 0;
                break;
            }
            if (dwarf_siblingof(&stack[top - 1], &stack[top - 1]) == 0) break;
            top--;
        }
    }
    free(stack);
    if (count == 0) {
        free(chain);
        return 0;
    }
    *chain_out = chain;
    return count;
}

/* Units indexed per session, ranges per function and ranges per session kept (beyond them, lookups
 * walk the unit each time). */
#define CW_MAX_INDEXED_UNITS 256
#define CW_MAX_RANGES_PER_FUNCTION 16
#define CW_MAX_INDEXED_RANGES (1 << 20)

static int compare_ranges(const void *a, const void *b) {
    const struct function_range *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* Adds the address ranges of function `die` to `index`, growing it; 0, or -1 when memory runs out. */
static int add_function_ranges(struct unit_functions *index, size_t *capacity, size_t limit, Dwarf_Die *die) {
    Dwarf_Addr base = 0, low = 0, high = 0;
    ptrdiff_t offset = 0;
    for (int n = 0; n < CW_MAX_RANGES_PER_FUNCTION && (offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0; n++) {
        if (high <= low) continue;
        if (index->count >= limit) return 0;
        if (index->count == *capacity) {
            size_t grown = *capacity ? *capacity * 2 : 256;
            struct function_range *ranges = realloc(index->ranges, grown * sizeof *ranges);
            if (!ranges) return -1;
            index->ranges = ranges;
            *capacity = grown;
        }
        index->ranges[index->count++] = (struct function_range){.low = low, .high = high, .die = *die};
    }
    return 0;
}

/* Indexes the concrete functions of `unit` (at most `limit` ranges): a walk through containers that
 * does not enter functions. Bounded in depth and in DIEs visited; 0, or -1 when memory runs out. */
static int index_unit(Dwarf_Die *unit, struct unit_functions *index, size_t limit) {
    *index = (struct unit_functions){.unit = unit->cu};
    size_t capacity = 0;
    Dwarf_Die *stack = malloc(CW_MAX_WALK_DEPTH * sizeof *stack);
    if (!stack) return -1;
    int top = dwarf_child(unit, &stack[0]) == 0 ? 1 : 0;
    for (long visited = 0; top > 0 && visited < CW_MAX_WALK_DIES; visited++) {
        Dwarf_Die *die = &stack[top - 1];
        int tag = dwarf_tag(die);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
            if (add_function_ranges(index, &capacity, limit, die) != 0) {
                free(stack);
                return -1;
            }
        } else if (is_container_tag(tag) && top < CW_MAX_WALK_DEPTH && dwarf_child(die, &stack[top]) == 0) {
            top++;
            continue;
        }
        while (top > 0 && dwarf_siblingof(&stack[top - 1], &stack[top - 1]) != 0) top--;
    }
    free(stack);
    if (index->count > 1) qsort(index->ranges, index->count, sizeof *index->ranges, compare_ranges);
    return 0;
}

/* The index of `unit`, built on first use; NULL when the session's bounds or memory say no. */
static const struct unit_functions *unit_functions(cw_symbolizer *s, Dwarf_Die *unit) {
    for (size_t i = 0; i < s->unit_count; i++) {
        if (s->units[i].unit == unit->cu) return &s->units[i];
    }
    if (s->unit_count >= CW_MAX_INDEXED_UNITS || s->indexed_ranges >= CW_MAX_INDEXED_RANGES) return NULL;
    if (!s->units && !(s->units = calloc(CW_MAX_INDEXED_UNITS, sizeof *s->units))) return NULL;
    struct unit_functions *index = &s->units[s->unit_count];
    if (index_unit(unit, index, CW_MAX_INDEXED_RANGES - s->indexed_ranges) != 0) {
        free(index->ranges);
        *index = (struct unit_functions){0};
        return NULL;
    }
    s->indexed_ranges += index->count;
    s->unit_count++;
    return index;
}

/* The inline chain at `pc` in `unit` for units dwarf_getscopes cannot search: through the unit's
 * function index (binary search, then a walk of that one function), else by walking the whole unit. */
static int function_chain_in_unit(cw_symbolizer *s, Dwarf_Die *unit, Dwarf_Addr pc, Dwarf_Die **chain_out) {
    const struct unit_functions *index = unit_functions(s, unit);
    if (!index) {
        Dwarf_Die first;
        return dwarf_child(unit, &first) == 0 ? function_chain_at(&first, 1, pc, chain_out) : 0;
    }
    /* The last range starting at or before `pc`, then a few before it (ranges of a hostile file may overlap). */
    size_t low = 0, high = index->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (index->ranges[middle].low <= pc) low = middle + 1;
        else high = middle;
    }
    for (size_t i = low, tries = 0; i > 0 && tries < 8; i--, tries++) {
        const struct function_range *range = &index->ranges[i - 1];
        if (pc >= range->low && pc < range->high) {
            Dwarf_Die function = range->die;
            return function_chain_at(&function, 0, pc, chain_out);
        }
    }
    *chain_out = NULL;
    return 0;
}

static int32_t die_udata(Dwarf_Die *die, int attribute_name) {
    Dwarf_Attribute attribute;
    Dwarf_Word value = 0;
    if (dwarf_formudata(dwarf_attr(die, attribute_name, &attribute), &value) != 0) return 0;
    return (int32_t)value;
}

/* The function-like DIEs containing `pc` in `cu`, innermost first, in a malloc'ed array (`*chain_out`,
 * NULL or freed by the caller); their count, 0 or less when none. */
static int inline_chain(cw_symbolizer *s, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **chain_out) {
    Dwarf_Die *scopes = NULL;
    int scope_count = dwarf_getscopes(cu, pc, &scopes);
    Dwarf_Die *chain = NULL;
    int chain_count = 0;
    /* dwarf_getscopes alone can miss levels: expand from the innermost function-like scope with
     * dwarf_getscopes_die, which yields every inlined level up to the concrete function. */
    for (int i = 0; i < scope_count; i++) {
        if (is_function_tag(dwarf_tag(&scopes[i]))) {
            chain_count = dwarf_getscopes_die(&scopes[i], &chain);
            break;
        }
    }
    free(scopes);
    /* Functions nested in namespaces (rustc's, clang's) are out of dwarf_getscopes' reach: walk the unit. */
    if (chain_count <= 0) {
        free(chain);
        chain_count = function_chain_in_unit(s, cu, pc, &chain);
    }
    *chain_out = chain;
    return chain_count;
}

/* The line table's row for `pc` in `cu`. Where several rows share the address of the last row at or before
 * `pc`, libdw (and eu-stack) answer with the last of them, gdb with the last that begins a statement: glibc's
 * pthread_sigmask has rows for lines 40, 43 (a statement) and 45 at one address, where gdb says 43 and
 * eu-stack 45. gdb's line wins where the two lines differ; where they agree, libdw's row (its column). */
static Dwarf_Line *statement_row(Dwarf_Die *cu, Dwarf_Addr pc) {
    Dwarf_Line *row = dwarf_getsrc_die(cu, pc);
    Dwarf_Lines *lines = NULL;
    size_t count = 0;
    Dwarf_Addr address = 0;
    if (!row || dwarf_lineaddr(row, &address) != 0 || dwarf_getsrclines(cu, &lines, &count) != 0) return row;
    /* The first row at that address (rows are sorted by address), then at most 64 rows from there. */
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        Dwarf_Addr at = 0;
        dwarf_lineaddr(dwarf_onesrcline(lines, middle), &at);
        if (at < address) low = middle + 1;
        else high = middle;
    }
    Dwarf_Line *chosen = NULL;
    for (size_t i = low; i < count && i < low + 64; i++) {
        Dwarf_Line *candidate = dwarf_onesrcline(lines, i);
        Dwarf_Addr at = 0;
        bool statement = false, end = false;
        if (!candidate || dwarf_lineaddr(candidate, &at) != 0 || at != address) break;
        if (dwarf_linebeginstatement(candidate, &statement) == 0 && statement &&
            dwarf_lineendsequence(candidate, &end) == 0 && !end) chosen = candidate;
    }
    int chosen_line = 0, row_line = 0;
    if (!chosen || dwarf_lineno(chosen, &chosen_line) != 0 || dwarf_lineno(row, &row_line) != 0) return row;
    return chosen_line != row_line ? chosen : row;
}

/* Makes room for `max_levels` qualified names, which live until the next call (as many as memory allows). */
static void reserve_level_names(cw_symbolizer *s, int max_levels) {
    if (s->level_name_slots < (size_t)max_levels) {
        char *slots = realloc(s->level_names, (size_t)max_levels * CW_NAME_SLOT);
        if (slots) {
            s->level_names = slots;
            s->level_name_slots = (size_t)max_levels;
        }
    }
}

int cw_source_levels(cw_symbolizer *s, uint64_t address, cw_source_level *levels, int max_levels) {
    cw_current_symbolizer = s;
    int count = 0;
    Dwfl_Module *module = dwfl_addrmodule(s->dwfl, address);
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = module ? cw_unit_at(s, module, address, &bias) : NULL;
    if (!cu || max_levels <= 0) {
        cw_current_symbolizer = NULL;
        return 0;
    }
    /* The innermost level's location is the line table's row for the address. */
    const char *file = NULL;
    int line = 0, column = 0;
    Dwarf_Line *row = statement_row(cu, address - bias);
    if (row) {
        file = dwarf_linesrc(row, NULL, NULL);
        dwarf_lineno(row, &line);
        dwarf_linecol(row, &column);
    }

    Dwarf_Die *chain = NULL;
    int chain_count = inline_chain(s, cu, address - bias, &chain);
    Dwarf_Files *files = NULL;
    size_t file_count = 0;
    if (dwarf_getsrcfiles(cu, &files, &file_count) != 0) files = NULL;
    /* DWARF 5 numbers the unit's primary file 0; before, 0 meant no file. */
    Dwarf_Half version = 0;
    if (dwarf_cu_info(cu->cu, &version, NULL, NULL, NULL, NULL, NULL, NULL) != 0) version = 0;
    Dwarf_Word first_file = version >= 5 ? 0 : 1;
    reserve_level_names(s, max_levels);

    for (int i = 0; i < chain_count && count < max_levels; i++) {
        Dwarf_Die *die = &chain[i];
        int tag = dwarf_tag(die);
        if (!is_function_tag(tag)) continue;
        char *slot = (size_t)count < s->level_name_slots ? s->level_names + (size_t)count * CW_NAME_SLOT : NULL;
        cw_source_level *level = &levels[count++];
        level->name = cw_die_function_name(die, slot);
        level->file = file;
        level->line = line;
        level->column = column;
        level->inlined = tag == DW_TAG_inlined_subroutine;
        if (tag != DW_TAG_inlined_subroutine) break; /* the concrete function ends the chain */
        /* The next (outer) level is located at this inlined call's call site. */
        Dwarf_Word file_index = (Dwarf_Word)die_udata(die, DW_AT_call_file);
        file = (files && dwarf_hasattr(die, DW_AT_call_file) && file_index >= first_file && file_index < file_count)
            ? dwarf_filesrc(files, file_index, NULL, NULL) : NULL;
        line = die_udata(die, DW_AT_call_line);
        column = die_udata(die, DW_AT_call_column);
    }
    if (count == 0 && (file || line)) {
        levels[0] = (cw_source_level){.name = NULL, .file = file, .line = line, .column = column, .inlined = 0};
        count = 1;
    }
    free(chain);
    cw_current_symbolizer = NULL;
    return count;
}
