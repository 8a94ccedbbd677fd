/*
 * annotate_stripped — annotate_c stripped: with DEBUG: debuglink, build.sh copies the DWARF out to
 * OUTDIR/annotate_stripped.debug and strips the program (strip --strip-all: no .symtab, and
 * crashwatch_table is hidden, so no symbol names the table anywhere); the ELF note (an allocated
 * section, kept by strip) is the only way to the table. Records the context of annotate_context.h
 * with language "c-stripped", then dereferences NULL in crash_here() (main -> crash_here). The
 * report's annotations are exactly ANNOTATIONS, its breadcrumbs exactly BREADCRUMBS (see annotate_c).
 *
 * BUILD: -O2 -g -Wl,--build-id
 * DEBUG: debuglink
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=c-stripped session_token=<redacted> user_id=42
 * BREADCRUMBS: 36...99
 */
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "annotate_context.h"

__attribute__((noipa)) int crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
    return *p;
}

int main(void)
{
    record_context("c-stripped");
    printf("ready\n");
    fflush(stdout);
    return crash_here() + 1;
}
