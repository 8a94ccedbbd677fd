/* crashwatch_annotations.c — the table and its ELF note for a Go program (cgo compiles every .c file of
 * the package): the one file of the image that defines CRASHWATCH_ANNOTATIONS_IMPLEMENTATION. */
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "crashwatch_annotations.h"
