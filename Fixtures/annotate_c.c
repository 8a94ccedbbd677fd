/*
 * annotate_c — declares the crashwatch annotation table (annotations/crashwatch_annotations.h,
 * format version 1) in its executable, records the context of annotate_context.h with language "c",
 * then dereferences NULL in crash_here() (main -> crash_here). The table's ELF note (owner
 * "crashwatch", type 1) is in the executable; the report's annotations are exactly ANNOTATIONS
 * (session_token redacted by crashwatch's default deny-list), its breadcrumbs exactly BREADCRUMBS:
 * "step N" for N from the first to the last number, oldest first, each at level N % 5 (debug, info,
 * warning, error, fatal), their times plausible and non-decreasing.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=c session_token=<redacted> user_id=42
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
    record_context("c");
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
