/*
 * go_asm — Go mixing Go assembly (GO-FILES: go_asm_amd64.s, built as one package with it;
 * x86-64 only): main.main -> main.start -> main.viaAsm -> main.crashAsm, an assembly function
 * with a frame of its own (the assembler adds the frame-pointer prologue and .debug_frame CFI)
 * that loads through a nil pointer, at go_asm_amd64.s:11. Go handles that SIGSEGV as in
 * go_nil (runtime.sigpanic, a panic), and with GOTRACEBACK=crash (set by main through
 * debug.SetTraceback) prints every goroutine and dies of SIGABRT raised twice, the second time
 * from runtime.sigtramp: that one kills. gdb stops at Go's own sigreturn trampoline (as in
 * go_nil), so CRASH-STACK ends at runtime.sigtramp; past it, the goroutine's frames — the
 * assembly function with its .s line, then the Go callers with theirs — must be those of Go's own
 * traceback on stderr, file and line included.
 *
 * BUILD:
 * GO-FILES: go_asm_amd64.s
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * ORIGINAL-SIGNAL: SIGSEGV
 * ORIGINAL-CODE: SEGV_MAPERR
 * ORIGINAL-ADDR: 0x0
 * ORIGINAL-FUNCTION: main.crashAsm
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

// crashAsm is in go_asm_amd64.s.
func crashAsm(p *int64, depth int64) int64

func init() {
	// The main goroutine runs init on the main thread; keep it there.
	runtime.LockOSThread()
}

//go:noinline
func viaAsm(depth int) int64 {
	var target *int64
	return crashAsm(target, int64(depth)) + 1
}

//go:noinline
func start(count int) int64 {
	return viaAsm(count) * 2
}

func main() {
	debug.SetTraceback("crash")
	fmt.Println("ready")
	fmt.Println(start(len(os.Args)))
}
