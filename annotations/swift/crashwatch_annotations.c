/* crashwatch_annotations.c — the table and its ELF note for a Swift program: compile it with a C
 * compiler into the same executable or library (cc -c, or a SwiftPM C target); the one file of the
 * image that defines CRASHWATCH_ANNOTATIONS_IMPLEMENTATION. */
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "../crashwatch_annotations.h"
