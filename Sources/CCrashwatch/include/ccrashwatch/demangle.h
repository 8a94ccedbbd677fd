/*
 * demangle.h — Rust, C++ and Swift symbol names demangled (demangle.c).
 */
#ifndef CCRASHWATCH_DEMANGLE_H
#define CCRASHWATCH_DEMANGLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Why cw_demangle returned what it did. */
enum {
    CW_DEMANGLE_DONE = 0,           /* demangled */
    CW_DEMANGLE_NOT_MANGLED = 1,    /* not a mangled name, or not a valid one */
    CW_DEMANGLE_GAVE_UP = 2,        /* a Swift name whose demangling passed its CPU-time budget */
    CW_DEMANGLE_GAVE_UP_BEFORE = 3, /* a Swift name not tried: names given up before used every demangler */
    CW_DEMANGLE_NO_THREAD = 4,      /* a Swift name not tried: no thread (or memory) to demangle it on */
};

/**
 * Demangles a Rust (v0 `_R…`; legacy `_ZN…17h<hash>E`, hash left out), C++ (`_Z…`) or Swift (`$s…`)
 * symbol; a malloc'ed string to free, or NULL with `*why_not` (may be NULL) saying why. Rust and C++ names
 * are cut after 4097 bytes (the work with them: a v0 symbol can expand to gigabytes); Swift ones are
 * whole, but given up past 100 ms of CPU time (demangle.c says how). Thread-safe.
 */
char *cw_demangle(const char *name, int *why_not);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_DEMANGLE_H */
