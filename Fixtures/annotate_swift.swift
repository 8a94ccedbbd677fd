/*
 * annotate_swift — Swift using the C header through annotations/swift/module.modulemap (import
 * CrashwatchAnnotations; swiftc -I that directory) with the table and its note from
 * annotations/swift/crashwatch_annotations.c, which build.sh compiles with CC and links in
 * (C-FILES): records the same context as annotate_context.h with language "swift", prints "ready",
 * then stores through the address 0x8 in crashHere() (main -> crashHere): SIGSEGV, SEGV_MAPERR at
 * 0x8. The report's annotations are exactly ANNOTATIONS, its breadcrumbs exactly BREADCRUMBS (see
 * annotate_c).
 *
 * BUILD: -Onone -g -I @ROOT@/annotations/swift
 * C-FILES: ../annotations/swift/crashwatch_annotations.c
 * ENV: SWIFT_BACKTRACE=enable=no
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x8
 * CRASH-THREAD: main
 * CRASH-SYMBOL: $s14annotate_swift9crashHereyyF
 * CRASH-DEMANGLED: annotate_swift.crashHere() -> ()
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=swift session_token=<redacted> user_id=42
 * BREADCRUMBS: 36...99
 */
import CrashwatchAnnotations
import Glibc

@inline(never)
func crashHere() {
    let pointer = UnsafeMutablePointer<Int>(bitPattern: CommandLine.arguments.count * 8)!
    pointer.pointee = 42
}

crashwatch_annotate("language", "swift")
crashwatch_annotate("build", "debug")
crashwatch_annotate("scratch", "temporary")
crashwatch_annotate("user_id", String(42))
crashwatch_annotate("city", "Zürich")
crashwatch_annotate("session_token", "hunter2")
crashwatch_annotate("build", "release")
crashwatch_annotate("scratch", nil)
for i in 0..<100 {
    crashwatch_breadcrumb(crashwatch_level(rawValue: UInt32(i % 5)), "step \(i)")
}
print("ready")
fflush(stdout)
crashHere()
