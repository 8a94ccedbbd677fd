/*
 * dwunwind.h — unwinding with libdw (dwunwind.c): other architectures than the host's, and ARM64.
 */
#ifndef CCRASHWATCH_DWUNWIND_H
#define CCRASHWATCH_DWUNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ccrashwatch/space.h"
#include "ccrashwatch/unwind.h"

#ifdef __cplusplus
extern "C" {
#endif

/** libdw's unwinder over a captured address space, for one architecture. */
typedef struct cw_dwfl_unwinder cw_dwfl_unwinder;

/**
 * Starts an unwinder for `elf_machine` (EM_AARCH64 or EM_X86_64) reading memory from `memory` (kept alive
 * by the caller), with `code_mask` (ARM64 pointer-authentication bits, else 0) cleared from every word
 * read and from the pc and link register. NULL with errno on failure.
 */
cw_dwfl_unwinder *cw_dwfl_unwinder_create(cw_space *memory, uint16_t elf_machine, uint64_t code_mask);

/** Reports the ELF file open at `fd` (a duplicate is kept) as image `name` loaded at `load_address`; before the first unwind. */
int cw_dwfl_unwinder_report(cw_dwfl_unwinder *unwinder, const char *name, int fd, uint64_t load_address);

/**
 * Unwinds one thread from `registers` (NT_PRSTATUS words of the unwinder's architecture), at most
 * `max_frames` frames; `*stop` is a CW_UNWIND_STOP_* value. Frames after the first have sp 0 (unknown).
 */
int cw_dwfl_unwind(cw_dwfl_unwinder *unwinder, const uint64_t *registers, size_t register_count,
                   cw_frame *frames, int max_frames, int *stop);

/** libdw's text for the unwinder's last failure. */
const char *cw_dwfl_unwinder_error(cw_dwfl_unwinder *unwinder);

void cw_dwfl_unwinder_destroy(cw_dwfl_unwinder *unwinder);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_DWUNWIND_H */
