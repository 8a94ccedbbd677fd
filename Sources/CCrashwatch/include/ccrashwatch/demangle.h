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

/**
 * Demangles a Rust (v0 `_R…`; legacy `_ZN…17h<hash>E`, hash left out), C++ (`_Z…`) or Swift (`$s…`)
 * symbol; a malloc'ed string to free, or NULL when not mangled. Rust names are cut after 4097 bytes
 * (the work with them: a v0 symbol can expand to gigabytes); C++ and Swift ones are whole.
 */
char *cw_demangle(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_DEMANGLE_H */
