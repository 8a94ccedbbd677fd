/*
 * unwind.h — unwinding one thread with libunwind over a captured address space (unwind.c).
 */
#ifndef CCRASHWATCH_UNWIND_H
#define CCRASHWATCH_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ccrashwatch/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One unwound frame. */
typedef struct {
    uint64_t pc;
    uint64_t sp;
    int32_t signal_frame;    /* a signal interrupted this frame: restored from the signal frame's context, its pc is exact */
    int32_t has_unwind_info; /* CFI exists for pc, so the next frame was found through it */
} cw_frame;

/* Why an unwind stopped, besides a negative UNW_E* code from unw_step. */
#define CW_UNWIND_STOP_END 0         /* the outermost frame was reached */
#define CW_UNWIND_STOP_LIMIT 1       /* max_frames were collected */
#define CW_UNWIND_STOP_NO_PROGRESS 2 /* the stack pointer went backwards or repeated: a loop or a corrupt stack */
#define CW_UNWIND_STOP_ERROR 3       /* libdw's unwinder failed: cw_dwfl_unwinder_error says why */

/**
 * Unwinds one thread from `registers` (the host's NT_PRSTATUS layout as 64-bit words) through `space`.
 * Returns the number of frames; `*stop` says why it ended (CW_UNWIND_STOP_* or a negative UNW_E* code).
 */
int cw_unwind(cw_space *space, const uint64_t *registers, size_t register_count,
              cw_frame *frames, int max_frames, int *stop);

/** The last address the latest cw_unwind on this thread wanted to read and the space did not hold (0: none):
 * where an unwind that failed ran out of captured memory (a frame larger than the stack captured). */
uint64_t cw_unwind_missing_address(void);

/** libunwind's text for a negative UNW_E* code. */
const char *cw_unwind_error_name(int code);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_UNWIND_H */
