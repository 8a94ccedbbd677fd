/*
 * annotate_gold — annotate_c linked by gold (-fuse-ld=gold, as swiftc links by default): gold lays
 * out two overlapping PT_NOTE segments, one 8-aligned (.note.gnu.property, .note.ABI-tag,
 * .note.crashwatch) and one 4-aligned (.note.ABI-tag, .note.crashwatch, .note.gnu.build-id), so a
 * reader that walks every PT_NOTE segment meets the one crashwatch note twice: it is one table, read
 * once, and no soft error. Records the context of annotate_context.h with language "c-gold", then
 * dereferences NULL in crash_here() (main -> crash_here). The report's annotations are exactly
 * ANNOTATIONS, its breadcrumbs exactly BREADCRUMBS (see annotate_c).
 *
 * BUILD: -O0 -g -fuse-ld=gold
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=c-gold session_token=<redacted> user_id=42
 * BREADCRUMBS: 36...99
 */
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "annotate_context.h"

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    record_context("c-gold");
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
