/*
 * ccrashwatch.h — the C shim under crashwatch: the one header the Swift module CCrashwatch needs.
 *
 * SwiftPM exports this include directory as an umbrella directory (there is no CCrashwatch.h), so every
 * header below is part of the module; this one includes them all, for C and for a reader, grouped as the
 * pipeline uses them. Each header documents its functions and names the .c file that implements them.
 *
 * Everything Swift cannot call directly lives here: glibc's variadic ptrace(), macros (wait status,
 * CMSG_*, libunwind's unw_* names), GNU-only flags, the code between fork and exec, and the C libraries
 * (libunwind, libdw, libiberty, libcurl, zlib). Every symbol is prefixed `cw_`. Functions return -1 and
 * leave errno set on failure, like the system calls they wrap, unless their comment says otherwise.
 */
#ifndef CCRASHWATCH_H
#define CCRASHWATCH_H

/* Processes: tracing, starting the program and the worker, signals, memory footprint. */
#include "ccrashwatch/ptrace.h"
#include "ccrashwatch/spawn.h"
#include "ccrashwatch/worker.h"
#include "ccrashwatch/signals.h"
#include "ccrashwatch/footprint.h"

/* Unwinding over a captured address space: the space, its unwind tables, libunwind and libdw. */
#include "ccrashwatch/space.h"
#include "ccrashwatch/ehframe.h"
#include "ccrashwatch/unwind.h"
#include "ccrashwatch/dwunwind.h"

/* Symbols: the libdw session, debug files, inline chains, demangling. */
#include "ccrashwatch/symbols.h"
#include "ccrashwatch/debuginfo.h"
#include "ccrashwatch/inlines.h"
#include "ccrashwatch/demangle.h"

/* Files, memfds, sockets, HTTP and gzip. */
#include "ccrashwatch/files.h"
#include "ccrashwatch/memfd.h"
#include "ccrashwatch/sockets.h"
#include "ccrashwatch/http.h"
#include "ccrashwatch/gzip.h"

#endif /* CCRASHWATCH_H */
