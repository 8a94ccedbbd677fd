/*
 * libannotate_plugin — a shared object that declares its own crashwatch annotation table (the
 * executable that dlopens it, annotate_dlopen, declares none): plugin_record() records the context
 * of annotate_context.h with language "c-plugin" in the library's table.
 *
 * BUILD: -O0 -g
 */
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "annotate_context.h"

void plugin_record(void)
{
    record_context("c-plugin");
}
