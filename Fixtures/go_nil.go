/*
 * go_nil — Go (built with `go build`, the compiler's defaults: optimized, inlining on, DWARF
 * kept, no cgo) dereferencing a nil pointer three //go:noinline calls deep: main.main ->
 * main.start -> main.walk -> main.crashHere, which loads n.next.value with n.next nil (a leaf
 * function with no frame of its own). Go handles that SIGSEGV itself (SEGV_MAPERR at 0x0, where
 * it all started): runtime.sigpanic turns it into a panic ("invalid memory address or nil pointer
 * dereference"). Bare Go then exits with code 2, but main calls debug.SetTraceback("crash"),
 * the run-time form of GOTRACEBACK=crash (which must be in the environment before start, so the
 * program sets it itself): Go prints the panic and every goroutine's traceback, runtime frames
 * included, to stderr, then runtime.crash -> dieFromSignal raises SIGABRT (SI_TKILL) with
 * tgkill on its own thread. Go's handler still catches that first SIGABRT and, from
 * runtime.sigtramp on the signal stack, restores SIG_DFL and raises it again: that one kills.
 * init() locks the main goroutine to the main thread, so the crash is on the main thread.
 *
 * Go binaries carry .debug_frame (no .eh_frame), frame pointers, a Go build-id note and no GNU
 * build-id (PITFALLS.md, "Real toolchains"). Function names are Go's (package.Function), and
 * assembly functions' ELF symbols end in .abi0 (runtime.raise.abi0) where DWARF and gdb say
 * runtime.raise. gdb (without Go's runtime-gdb.py) unwinds the crashed thread on the core only
 * down to runtime.sigtramp: the next return address is Go's own sigreturn trampoline
 * (runtime.sigreturn.abi0: no CFI, not named __restore_rt), where it stops making sense; that
 * is CRASH-STACK. A correct unwinder goes on through that signal frame: the first SIGABRT's
 * runtime.raise, dieFromSignal, crash (inlined in fatalpanic), gopanic, then panicmem (inlined
 * in sigpanic) and the goroutine's own frames, main.crashHere down to runtime.goexit, as Go's
 * traceback on stderr prints them for goroutine 1.
 *
 * Go's SIGSEGV handler returns after turning the fault into a call of runtime.sigpanic that
 * "returns" to the faulting instruction: main.crashHere's frame, at the fault's exact pc and stack
 * pointer, is still on the stack, below panicmem/sigpanic, when the second SIGABRT kills the process.
 * So that fault is still active, and it is the oldest: the original fault is the nil dereference,
 * SEGV_MAPERR at 0x0 in main.crashHere (the first SIGABRT, also active, follows it in
 * signal.activeFaults).
 *
 * build.sh builds it with the `go` on PATH (GOPATH and GOCACHE under OUTDIR, GO111MODULE=off,
 * no network), and skips it with a message when there is none. BUILD holds extra `go build`
 * flags.
 *
 * BUILD:
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * ORIGINAL-SIGNAL: SIGSEGV
 * ORIGINAL-CODE: SEGV_MAPERR
 * ORIGINAL-ADDR: 0x0
 * ORIGINAL-FUNCTION: main.crashHere
 * CRASH-SIGNAL: SIGABRT
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: runtime.raise
 * CRASH-STACK: runtime.raise,runtime.dieFromSignal,runtime.sigfwdgo,runtime.sigtrampgo,runtime.sigtramp
 * STDOUT: ready
 */
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
)

type node struct {
	value int
	next  *node
}

func init() {
	// The main goroutine runs init on the main thread; keep it there.
	runtime.LockOSThread()
}

//go:noinline
func crashHere(n *node) int {
	return n.next.value * 3
}

//go:noinline
func walk(n *node, depth int) int {
	total := crashHere(n)
	return total + depth
}

//go:noinline
func start(count int) int {
	head := &node{value: count}
	result := walk(head, count)
	return result + head.value
}

func main() {
	debug.SetTraceback("crash")
	fmt.Println("ready")
	fmt.Println(start(len(os.Args)))
}
