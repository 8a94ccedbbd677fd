/*
 * go_cgo — Go built with cgo (CGO: enabled; gcc compiles the C in the preamble, -O2 -g as cgo's
 * defaults) crashing in C called from Go: main.main -> main.start -> main.callC -> the cgo call
 * (runtime.cgocall -> runtime.asmcgocall, which switches to the thread's system stack) ->
 * walk_in_c -> crash_in_c, which loads n->next->value with n->next NULL (SEGV_MAPERR at 0x0).
 * Go's handler catches the fault, finds it in C code ("fatal error: unexpected signal during
 * runtime execution"), prints every goroutine with GOTRACEBACK=crash (main sets it with
 * debug.SetTraceback, the run-time form of the variable), and runtime.crash -> dieFromSignal
 * raises SIGABRT (SI_TKILL) on its own thread; Go's handler catches that one too, restores
 * SIG_DFL and raises it again from runtime.sigtramp: that one kills. init() locks the main
 * goroutine to the main thread, so the crash is on the main thread. The SIGSEGV's handler never
 * returned (it is below on the stack): it is the original fault, in crash_in_c.
 *
 * A cgo binary has a small .eh_frame_hdr/.eh_frame covering its C objects only and
 * .debug_frame for the Go code (PITFALLS.md, "Real toolchains"): each table must be used for
 * the addresses it covers, or the Go frames fall back to frame pointers and the chain is lost.
 * Its .debug_aranges covers only the gcc units: the Go frames' source lines must come from the
 * Go unit whose ranges cover them (runtime.raise at sys_linux_amd64.s:159), not from the last C
 * unit. With cgo, Go's handler returns through libc's __restore_rt, so gdb unwinds the crashed
 * thread on the core through both signal frames down to runtime.asmcgocall, where the stack
 * switch ends its unwind (and crashwatch's, which has no Go-specific rules): that is
 * CRASH-STACK, every frame with its file and line as gdb gives them.
 *
 * BUILD:
 * CGO: enabled
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * ORIGINAL-SIGNAL: SIGSEGV
 * ORIGINAL-CODE: SEGV_MAPERR
 * ORIGINAL-ADDR: 0x0
 * ORIGINAL-FUNCTION: crash_in_c
 * CRASH-SIGNAL: SIGABRT
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: runtime.raise
 * CRASH-STACK: runtime.raise,runtime.dieFromSignal,runtime.sigfwdgo,runtime.sigtrampgo,runtime.sigtramp,__restore_rt,runtime.raise,runtime.dieFromSignal,runtime.crash,runtime.fatalthrow.func1,runtime.fatalthrow,runtime.throw,runtime.sigpanic,crash_in_c,walk_in_c,_cgo_Cfunc_walk_in_c,runtime.asmcgocall
 * STDOUT: ready
 */
package main

/*
#include <stddef.h>

struct node { int value; struct node *next; };

__attribute__((noinline)) int crash_in_c(struct node *n) {
    return n->next->value * 3;
}

__attribute__((noinline)) int walk_in_c(int depth) {
    struct node head = { depth, NULL };
    int total = crash_in_c(&head);
    return total + depth;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
)

func init() {
	// The main goroutine runs init on the main thread; keep it there.
	runtime.LockOSThread()
}

//go:noinline
func callC(depth int) int {
	return int(C.walk_in_c(C.int(depth)))
}

//go:noinline
func start(count int) int {
	return callC(count) + 1
}

func main() {
	debug.SetTraceback("crash")
	fmt.Println("ready")
	fmt.Println(start(len(os.Args)))
}
