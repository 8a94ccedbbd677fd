/*
 * annotate_go — Go using the cgo package annotations/go (imported by its relative path, GOPATH
 * mode): records the same context as annotate_context.h with language "go" (Annotate, Remove and
 * 100 Breadcrumb calls), prints "ready", then panics. With debug.SetTraceback("crash") (the run-time
 * GOTRACEBACK=crash) Go prints the panic and every goroutine and kills itself with SIGABRT. cgo puts
 * the package's C (the table and its note) in the executable through the external linker. The
 * report's annotations are exactly ANNOTATIONS, its breadcrumbs exactly BREADCRUMBS (see annotate_c).
 *
 * BUILD:
 * CGO: enabled
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * CRASH-SIGNAL: SIGABRT
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=go session_token=<redacted> user_id=42
 * BREADCRUMBS: 36...99
 */
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"

	crashwatch "../annotations/go"
)

func main() {
	debug.SetTraceback("crash")
	crashwatch.Annotate("language", "go")
	crashwatch.Annotate("build", "debug")
	crashwatch.Annotate("scratch", "temporary")
	crashwatch.Annotate("user_id", strconv.Itoa(42))
	crashwatch.Annotate("city", "Zürich")
	crashwatch.Annotate("session_token", "hunter2")
	crashwatch.Annotate("build", "release")
	crashwatch.Remove("scratch")
	for i := 0; i < 100; i++ {
		crashwatch.Breadcrumb(crashwatch.Level(i%5), fmt.Sprintf("step %d", i))
	}
	fmt.Println("ready")
	os.Stdout.Sync()
	panic("annotate_go: crashing on purpose")
}
