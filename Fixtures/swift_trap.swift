/*
 * swift_trap — a Swift runtime trap: an array index out of range, built swiftc -Onone -g.
 * Top-level code calls middle(_:) with CommandLine.arguments.count + 2 (3 without arguments, so
 * nothing is constant-folded), middle builds [10, 20, 30] and calls crashHere(_:_:), which
 * subscripts it. The bounds check fails in the standard library: Array's subscript getter (a
 * prespecialized copy in libswiftSwiftOnoneSupport.so) calls _assertionFailure in
 * libswiftCore.so, which prints "Fatal error: Index out of range" to stderr and executes ud2,
 * so the kernel sends SIGILL with ILL_ILLOPN and si_addr = that ud2 (in libswiftCore.so, not
 * deterministic). The innermost frames are libswiftCore.so's (a closure inside
 * _assertionFailure, then _assertionFailure) and libswiftSwiftOnoneSupport.so's (the subscript);
 * the first frame in the executable is crashHere, at its subscript call: CRASH-SYMBOL is its
 * mangled ELF symbol (a local symbol, nm type t), CRASH-DEMANGLED its demangling as the Swift
 * runtime's swift_demangle() prints it: full, without the [T] sugar that the swift-demangle tool
 * adds (`[Swift.Int]`), and not --simplified (`crashHere(_:_:)`).
 *
 * The Swift runtime's own backtracer is on by default on Linux: it handles the SIGILL, prints a
 * backtrace, restores the default action and returns, so the ud2 faults again. The ENV key
 * turns it off; tests run the fixture with that environment, bare and supervised.
 *
 * BUILD: -Onone -g
 * ENV: SWIFT_BACKTRACE=enable=no
 * ARGS:
 * EXIT: signal SIGILL
 * CRASHES: 1
 * CRASH-SIGNAL: SIGILL
 * CRASH-CODE: ILL_ILLOPN
 * CRASH-THREAD: main
 * CRASH-SYMBOL: $s10swift_trap9crashHereySiSaySiG_SitF
 * CRASH-DEMANGLED: swift_trap.crashHere(Swift.Array<Swift.Int>, Swift.Int) -> Swift.Int
 * CRASH-FILE: swift_trap.swift
 * CRASH-LINE: 38
 * STDOUT: ready
 */
import Glibc

@inline(never)
func crashHere(_ values: [Int], _ index: Int) -> Int {
    return values[index]
}

@inline(never)
func middle(_ index: Int) -> Int {
    let values = [10, 20, 30]
    let result = crashHere(values, index)
    return result + 1
}

print("ready")
fflush(stdout)
let total = middle(CommandLine.arguments.count + 2)
print(total)
