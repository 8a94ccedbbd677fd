// Package crashwatch keeps annotations and breadcrumbs that crashwatch reads out of a crashed Go program:
// the table of crashwatch_annotations.h (format version 1, docs/annotations.md), declared by the C file
// beside this one, written through cgo by the header's writers (plain and atomic stores: no system call,
// no lock; each wrapper copies its strings to C memory for the call and frees them). Copy this
// directory (with crashwatch_annotations.h, found beside it or one level up) into the module as a
// package, then:
//
//	crashwatch.Annotate("request_id", "7f3a-19") // set or replace a key
//	crashwatch.Remove("request_id")              // remove it
//	crashwatch.Breadcrumb(crashwatch.Info, "cache miss for user 42")
//
// Needs cgo, and the external linker (cgo's default for a package outside the standard library) so the
// note reaches the executable. Go's own fatal errors exit without a crash signal unless GOTRACEBACK=crash
// (or debug.SetTraceback("crash")).
package crashwatch

// #cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/..
// #include <stdlib.h>
// #include "crashwatch_annotations.h"
import "C"
import "unsafe"

// Level is a breadcrumb's level, as the format numbers it.
type Level int

const (
	Debug   Level = 0
	Info    Level = 1
	Warning Level = 2
	Error   Level = 3
	Fatal   Level = 4
)

// Annotate sets key to value; false when no slot was free. The table holds C strings: a NUL ends
// the text early.
func Annotate(key, value string) bool {
	k, v := C.CString(key), C.CString(value)
	defer C.free(unsafe.Pointer(k))
	defer C.free(unsafe.Pointer(v))
	return C.crashwatch_annotate(k, v) == 0
}

// Remove removes key.
func Remove(key string) {
	k := C.CString(key)
	defer C.free(unsafe.Pointer(k))
	C.crashwatch_annotate(k, nil)
}

// Breadcrumb appends a breadcrumb to the ring (the oldest is overwritten once it is full).
func Breadcrumb(level Level, message string) {
	m := C.CString(message)
	defer C.free(unsafe.Pointer(m))
	C.crashwatch_breadcrumb(C.enum_crashwatch_level(level), m)
}
