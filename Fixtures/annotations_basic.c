/*
 * annotations_basic — declares an annotation table (annotations/crashwatch_annotations.h, 8 breadcrumb
 * slots), sets annotations (one removed, one replaced, a session_token the report must redact), records
 * 20 breadcrumbs so the ring wraps twice, and dereferences NULL in crash_here() on the main thread.
 * Its report (run with --annotate region=eu-west-1 --annotate request_id=x) must carry exactly:
 * annotations user=42, build=release-7 (replaced), region=eu-west-1 (the operator's value over the app's
 * us-east-1), request_id=x, session_token=<redacted>, and no "tmp" (removed); breadcrumbs "step 12" to
 * "step 19" in that order, levels info except "step 19" at error.
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
 */
#define CRASHWATCH_BREADCRUMB_SLOTS 8
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "../annotations/crashwatch_annotations.h"
#include <stdio.h>

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    crashwatch_annotate("user", "42");
    crashwatch_annotate("build", "release-6");
    crashwatch_annotate("tmp", "scratch");
    crashwatch_annotate("region", "us-east-1");
    crashwatch_annotate("session_token", "s3cr3t-value");
    crashwatch_annotate("build", "release-7");
    crashwatch_annotate("tmp", NULL);
    char message[32];
    for (int step = 0; step < 20; step++) {
        snprintf(message, sizeof message, "step %d", step);
        crashwatch_breadcrumb(step == 19 ? CRASHWATCH_ERROR : CRASHWATCH_INFO, message);
    }
    puts("ready");
    fflush(stdout);
    crash_here();
    return 0;
}
