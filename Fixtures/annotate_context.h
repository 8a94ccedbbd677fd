/* annotate_context.h — what the annotation fixtures (annotate_c, annotate_stripped,
 * libannotate_plugin) record through ../annotations/crashwatch_annotations.h before they crash, in
 * the table of the image that includes it with CRASHWATCH_ANNOTATIONS_IMPLEMENTATION (default sizes:
 * 64 annotation slots, a ring of 64 breadcrumbs). The annotations left: build=release (set to debug,
 * then replaced), city=Zürich (UTF-8), language=LANGUAGE, session_token=hunter2 (recorded as
 * <redacted>: the key holds "token"), user_id=42; scratch was set and removed. The breadcrumbs:
 * "step 0" ... "step 99" at level N % 5 (debug, info, warning, error, fatal): the ring wrapped, the
 * last 64 ("step 36" ... "step 99") are in it. The other languages' fixtures record the same. */
#ifndef ANNOTATE_CONTEXT_H
#define ANNOTATE_CONTEXT_H

#include <stdio.h>
#include "../annotations/crashwatch_annotations.h"

static void record_context(const char *language)
{
    crashwatch_annotate("language", language);
    crashwatch_annotate("build", "debug");
    crashwatch_annotate("scratch", "temporary");
    crashwatch_annotate("user_id", "42");
    crashwatch_annotate("city", "Z\xc3\xbcrich");
    crashwatch_annotate("session_token", "hunter2");
    crashwatch_annotate("build", "release");
    crashwatch_annotate("scratch", NULL);
    char message[32];
    for (int i = 0; i < 100; i++) {
        snprintf(message, sizeof message, "step %d", i);
        crashwatch_breadcrumb((enum crashwatch_level)(i % 5), message);
    }
}

#endif
