/*
 * demangle.c — Rust and C++ names through libiberty (with a cap on the text a symbol may expand to; C++
 * without function return types, as gdb and eu-stack print names), Swift names through the Swift runtime's
 * swift_demangle.
 */
#define _GNU_SOURCE
#include "ccrashwatch/demangle.h"
#include "symbolizer_internal.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

extern char *swift_demangle(const char *mangled, size_t mangled_length, char *buffer, size_t *buffer_size, uint32_t flags);

/* Demangled text as libiberty hands it over, kept to CW_NAME_BYTES + 1 bytes. */
struct capped_text {
    char text[CW_NAME_SLOT];
    size_t length;
    jmp_buf full;
};

/* libiberty's output callback: appends, and once the text is longer than any name a report keeps,
 * leaves the demangler for good (a longjmp back into cw_rust_demangle_capped). v0 back-references let a
 * few hundred bytes of symbol expand to gigabytes of text, written in time proportional to the text,
 * and libiberty has no limit of its own on either. */
static void capped_text_append(const char *piece, size_t length, void *opaque) {
    struct capped_text *out = opaque;
    size_t room = CW_NAME_BYTES + 1 - out->length;
    size_t n = length < room ? length : room;
    memcpy(out->text + out->length, piece, n);
    out->length += n;
    if (out->length > CW_NAME_BYTES) longjmp(out->full, 1);
}

/* `name` demangled by a libiberty `demangler` with `options`, at most CW_NAME_BYTES + 1 bytes: a longer
 * name comes back cut there, for the caller to mark. NULL when the demangler does not take it. */
static char *demangle_capped(const char *name, int (*demangler)(const char *, int, demangle_callbackref, void *),
                             int options) {
    struct capped_text *out = malloc(sizeof *out);
    if (!out) return NULL;
    out->length = 0;
    int demangled;
    if (setjmp(out->full) == 0) {
        demangled = demangler(name, options, capped_text_append, out);
    } else {
        demangled = 1; /* cut: the text so far, longer than any name a report keeps */
    }
    char *result = demangled ? strndup(out->text, out->length) : NULL;
    free(out);
    return result;
}

/* A Rust symbol demangled by libiberty (v0 `_R…`, or legacy `_ZN…17h<hash>E` with the hash left out and
 * `$u7b$`/`$LT$`/`..` escapes decoded, as `nm --demangle=rust` prints them), capped (demangle_capped).
 * NULL when not a Rust symbol. libiberty bounds its own recursion (1024 levels); its rust_demangle_callback
 * allocates nothing but a punycode buffer for a non-ASCII identifier, which a cut in the middle of one leaks.
 * Options 0: no DMGL_VERBOSE, so no legacy hash and no crate disambiguators (`std[e28293b1aa0f68bd]`). */
char *cw_rust_demangle_capped(const char *name) {
    return demangle_capped(name, rust_demangle_callback, 0);
}

char *cw_demangle(const char *name) {
    if (!name) return NULL;
    /* Rust: v0, or legacy (an Itanium-shaped `_ZN…E` path ending in a `17h<16 hex digits>` hash). */
    if (strncmp(name, "_R", 2) == 0 || strncmp(name, "_ZN", 3) == 0) {
        char *rust = cw_rust_demangle_capped(name);
        if (rust || name[1] == 'R') return rust;
    }
    if (strncmp(name, "_Z", 2) == 0) {
        /* Parameters and qualifiers, no return type (`std::__invoke_impl<void, void (*)()>(…)`, not `void std::…`):
         * how gdb and eu-stack name a frame, and what a template function's mangling alone would add. */
        return demangle_capped(name, cplus_demangle_v3_callback, DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP);
    }
    if (strncmp(name, "$s", 2) == 0 || strncmp(name, "$S", 2) == 0 || strncmp(name, "_$s", 3) == 0 ||
        strncmp(name, "$e", 2) == 0 || strncmp(name, "_T0", 3) == 0) {
        return swift_demangle(name, strlen(name), NULL, NULL, 0);
    }
    return NULL;
}
