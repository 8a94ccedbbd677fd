/*
 * ehframe.h — which unwind table of an image of a captured space covers an address, and what is wrong with
 * the image's tables (ehframe.c).
 */
#ifndef CCRASHWATCH_EHFRAME_H
#define CCRASHWATCH_EHFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ccrashwatch/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which unwind table covers an address (cw_space_table_kind). */
#define CW_TABLE_NONE 0
#define CW_TABLE_EH_FRAME_HDR 1     /* the image's .eh_frame_hdr */
#define CW_TABLE_EH_FRAME_INDEXED 2 /* its .eh_frame, indexed because .eh_frame_hdr was unusable */
#define CW_TABLE_DEBUG_FRAME 3      /* its file's .debug_frame */

/** Which of its image's unwind tables covers `address` (CW_TABLE_*): an image may need several. */
int cw_space_table_kind(cw_space *space, uint64_t address);

/** Why the image containing `address` has no usable unwind table (static text), or NULL when it has one or no image contains it. */
const char *cw_space_image_problem(cw_space *space, uint64_t address);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_EHFRAME_H */
