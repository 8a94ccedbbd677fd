// RealToolchainTests.swift — crashes built by real toolchains, as programs really ship: Rust (rustc, lld, panic=abort),
// clang + lld -O2 without frame pointers, Go (GOTRACEBACK=crash; with cgo, with assembly), and the thread shapes real crash handlers produce (a
// zombie thread-group leader, a handler that re-raises with a process-directed kill(), a fault inside the fault
// handler). Each fixture (Fixtures/<name>.c|.rs|.go; its header says what it does) runs under `crashwatch run`: the
// same exit status as bare, one report that validates against the schema, the crashed thread's frames beginning with
// the header's CRASH-STACK (gdb's view of the core), the root fault where a handler ran, and — on the core dump of the
// very crash crashwatch reported — gdb's frames for every thread, address for address, name for name and source line
// for source line.
// These are the specification the unwinder is measured against: fewer frames than gdb is a failure.
import CrashwatchTestSupport
import Foundation
import Testing

/// The fixtures of this suite, in the order they run.
private let toolchainFixtures = ["rust_oob", "rust_panic_abort", "lld_c", "no_eh_frame_hdr", "go_nil", "go_cgo", "go_asm", "frame_2m", "frame_16m", "main_exits_first",
                                 "kill_reraise", "nested_fault"]

/// This suite's fixtures are also written in Rust and Go.
private let toolchainExtensions = ["c", "rs", "go"]

extension Fixture {
    /// `CRASH-STACK`: function names, innermost first.
    var crashStack: [String]? { keys["CRASH-STACK"].map(splitFunctionList) }

    /// The built program, or a failure: a skip (its message ends "; skip") when build.sh left it out for a missing
    /// compiler and said why in `OUTDIR/<name>.skipped`, a plain failure when it was simply not built.
    func executable() throws -> String {
        let path = Paths.fixture(name)
        if FileManager.default.isExecutableFile(atPath: path) { return path }
        let reason = (try? String(contentsOfFile: "\(Paths.fixtures)/\(name).skipped", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let message = reason.map { "\($0); skip" } ?? "\(path) is not built: run Fixtures/build.sh .build/fixtures"
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(message)")
        return path
    }
}

/// Splits a comma-separated list of function names where a comma inside `<...>`, `(...)`, `[...]` or `{...}` belongs to
/// the name (Rust: `call_once<fn(), ()>`); `->` is not a bracket.
private func splitFunctionList(_ text: String) -> [String] {
    var names: [String] = []
    var current = ""
    var depth = 0
    var previous: Character = " "
    for character in text {
        switch character {
        case "<", "(", "[", "{": depth += 1
        case ">" where previous != "-": depth = max(0, depth - 1)
        case ")", "]", "}": depth = max(0, depth - 1)
        case "," where depth == 0:
            names.append(current.trimmingCharacters(in: .whitespaces))
            current = ""
            previous = character
            continue
        default: break
        }
        current.append(character)
        previous = character
    }
    if !current.trimmingCharacters(in: .whitespaces).isEmpty { names.append(current.trimmingCharacters(in: .whitespaces)) }
    return names
}

/// A name with the parts two correct symbolizers may legitimately spell differently taken out: a legacy Rust hash
/// (`::h0123456789abcdef`), cgo's per-build hash (`_cgo_0123456789ab_Cfunc_f` → `_cgo_Cfunc_f`, which a header cannot
/// know), generic argument lists (`write_volatile<u64>`, `do_call::<…>`: gdb prints DWARF names with
/// their generics, a demangler with a turbofish or without), closure spellings (`{{closure}}`, `{closure#0}`,
/// `{closure_env#0}` → `{closure}`) and leading underscores (gdb's `clone3` for libc's `__clone3`, an alias of the
/// same code).
private func normalizedFunction(_ name: String) -> String {
    var text = name
    if let hash = text.firstMatch(of: #/::h[0-9a-f]{16}$/#) { text.removeSubrange(hash.range) }
    text = text.replacing(#/^_cgo_[0-9a-f]{12}_/#, with: "_cgo_")
    text = text.replacingOccurrences(of: "{{closure}}", with: "{closure}")
    text = text.replacing(#/\{closure(_env)?#\d+\}/#, with: "{closure}")
    // Generic argument lists: a balanced <...> that follows an identifier, `}` or `::` (not a leading `<T as Trait>`).
    var result = ""
    var depth = 0
    var previous: Character = " "
    for character in text {
        if depth > 0 {
            if character == "<" { depth += 1 } else if character == ">" && previous != "-" { depth -= 1 }
            previous = character
            continue
        }
        if character == "<", let last = result.last, last.isLetter || last.isNumber || last == "_" || last == "}" || last == ":" {
            if result.hasSuffix("::") { result.removeLast(2) }
            depth = 1
            previous = character
            continue
        }
        result.append(character)
        previous = character
    }
    return String(result.drop(while: { $0 == "_" }))
}

/// The last `::` component of a normalized name (outside brackets): `call_once` of both
/// `core::ops::function::impls::{impl#2}::call_once` (gdb, from DWARF) and
/// `<&dyn core::ops::function::Fn<()> as core::ops::function::FnOnce<()>>::call_once` (the demangled symbol).
private func lastComponent(_ name: String) -> String {
    var depth = 0
    var start = name.startIndex
    var index = name.startIndex
    while index < name.endIndex {
        let character = name[index]
        if "<([{".contains(character) { depth += 1 } else if ">)]}".contains(character) { depth = max(0, depth - 1) }
        if depth == 0, character == ":", name[name.index(after: index)...].hasPrefix(":") {
            start = name.index(index, offsetBy: 2)
            index = start
            continue
        }
        index = name.index(after: index)
    }
    return String(String(name[start...]).drop(while: { $0 == "_" }))
}

/// Whether crashwatch's name for a frame and gdb's (or the header's) denote the same function: equal, equal once
/// normalized, or the same function name in another path (a Rust function exported under `__rustc::` that DWARF
/// places in its module, `std::rt::__rust_abort`; a trait method named by its impl block or by `<T as Trait>`).
private func sameFunction(_ ours: String?, _ theirs: String?) -> Bool {
    guard let ours, let theirs else { return ours == nil && theirs == nil }
    if ours == theirs { return true }
    let (a, b) = (normalizedFunction(ours), normalizedFunction(theirs))
    return a == b || lastComponent(a) == lastComponent(b)
}

/// One frame of gdb's backtrace of a thread on a core file.
private struct GDBFrame: CustomStringConvertible {
    let pc: UInt64
    /// gdb's frame type: `normal`, `inline`, `tailcall`, `sigtramp`, ...
    let kind: String
    let function: String?
    /// The basename of the frame's source file and its line, when gdb has one.
    let file: String?
    let line: Int?
    var description: String { "0x\(String(pc, radix: 16)) \(function ?? "??") \(file ?? "?"):\(line ?? 0) [\(kind)]" }
}

/// gdb's Python API walks every thread's frames (with backtrace past-main and past-entry on) and prints one line per
/// frame: `FRAME 0xPC TYPE FILE:LINE NAME` (FILE the basename of the source file, `?:0` without one). The pc of every
/// frame, the innermost included, comes from gdb itself (what `bt` omits where a pc is at the start of a line, `p $pc`
/// would print); the line is gdb's for the frame (for a caller, the call's: gdb looks up pc - 1).
private let gdbFrameScript = """
    import gdb
    gdb.execute("set backtrace past-main on")
    gdb.execute("set backtrace past-entry on")
    kinds = {gdb.NORMAL_FRAME: "normal", gdb.INLINE_FRAME: "inline", gdb.TAILCALL_FRAME: "tailcall",
             gdb.SIGTRAMP_FRAME: "sigtramp", gdb.DUMMY_FRAME: "dummy", gdb.ARCH_FRAME: "arch", gdb.SENTINEL_FRAME: "sentinel"}
    for thread in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        thread.switch()
        print("THREAD %d" % thread.ptid[1])
        try:
            frame = gdb.newest_frame()
            while frame is not None:
                sal = frame.find_sal()
                where = "%s:%d" % (sal.symtab.filename.split("/")[-1], sal.line) if sal.symtab and sal.line else "?:0"
                print("FRAME 0x%x %s %s %s" % (frame.pc(), kinds.get(frame.type(), "other"), where, frame.name() or "??"))
                frame = frame.older()
        except gdb.error as error:
            print("STOP %s" % error)
    """

/// Parses the script's output: threads by tid, each a list of frames innermost first.
private func parseGDBFrames(_ text: String) -> [Int: [GDBFrame]] {
    var threads: [Int: [GDBFrame]] = [:]
    var current: Int?
    for line in text.split(separator: "\n") {
        if line.hasPrefix("THREAD "), let tid = Int(line.dropFirst(7)) {
            current = tid
            threads[tid] = []
        } else if let tid = current, line.hasPrefix("FRAME 0x") {
            let parts = line.split(separator: " ", maxSplits: 4)
            guard parts.count == 5, let pc = UInt64(parts[1].dropFirst(2), radix: 16), let colon = parts[3].lastIndex(of: ":") else { continue }
            let file = String(parts[3][..<colon]), number = Int(parts[3][parts[3].index(after: colon)...]) ?? 0
            threads[tid]?.append(GDBFrame(pc: pc, kind: String(parts[2]), function: parts[4] == "??" ? nil : String(parts[4]),
                                          file: file == "?" ? nil : file, line: number > 0 ? number : nil))
        }
    }
    return threads
}

/// One frame of Go's own traceback: the function, the basename of its source file and the line.
private struct GoFrame: Equatable, CustomStringConvertible {
    let function: String
    let file: String?
    let line: Int?
    var description: String { "\(function) (\(file ?? "?"):\(line ?? 0))" }
}

/// The frames Go's own traceback prints for goroutine `1` on stderr (`goroutine 1 [running...]:` up to the blank
/// line), innermost first: `panic`, `runtime.panicmem`, `runtime.sigpanic`, `main.crashHere`, ..., each with the
/// `\tFILE:LINE +0x…` line that follows it.
private func goTraceback(_ stderr: String) -> [GoFrame] {
    var frames: [GoFrame] = []
    var inside = false
    for line in stderr.split(separator: "\n", omittingEmptySubsequences: false) {
        if !inside {
            inside = line.hasPrefix("goroutine 1 [")
            continue
        }
        if line.isEmpty { break }
        if line.hasPrefix("\t"), let last = frames.last, last.file == nil {
            // "\t/path/file.go:LINE +0x1c fp=… sp=… pc=…"
            let location = line.dropFirst().split(separator: " ").first ?? ""
            guard let colon = location.lastIndex(of: ":") else { continue }
            frames[frames.count - 1] = GoFrame(function: last.function, file: location[..<colon].split(separator: "/").last.map(String.init),
                                               line: Int(location[location.index(after: colon)...]))
            continue
        }
        guard !line.hasPrefix("\t"), !line.hasPrefix("created by "), line.hasSuffix(")") else { continue }
        // "name(args)": the '(' that matches the final ')'.
        var depth = 0
        var index = line.endIndex
        while index > line.startIndex {
            index = line.index(before: index)
            if line[index] == ")" { depth += 1 } else if line[index] == "(" { depth -= 1 }
            if depth == 0 { break }
        }
        frames.append(GoFrame(function: String(line[..<index]), file: nil, line: nil))
    }
    return frames
}

/// The Go fixtures whose faulting goroutine runs on the crashed thread, with the function Go's traceback starts it at.
private let goroutineFixtures = ["go_nil": "main.crashHere", "go_asm": "main.crashAsm"]

@Suite(.serialized) struct RealToolchainTests {
    @Test("real-toolchain crash: same exit as bare, one valid report, the crashed thread's stack as gdb sees it, the root fault",
          arguments: toolchainFixtures)
    func report(_ name: String) throws {
        let fixture = Fixture(name, extensions: toolchainExtensions)
        let executable = try fixture.executable()
        let bare = try run(executable, fixture.arguments, environment: fixture.environment)
        #expect(bare.termination == fixture.expectedExit, "bare run: \(bare.stderr.suffix(2000))")
        let (result, reports, _) = try runCapturing(executable, fixture.arguments, environment: fixture.environment)
        let trail = "stderr: \(result.stderr.suffix(3000))"
        #expect(result.termination == bare.termination, "\(trail)")
        try #require(reports.count == 1, "\(reports.count) reports; \(trail)")
        let report = reports[0]

        // What every report must have, whatever the thread-group leader's state (main_exits_first: a zombie).
        let process = report.json["process"] as? [String: Any] ?? [:]
        #expect(!((process["executable"] as? String) ?? "").isEmpty, "process.executable: \(process["executable"] ?? "absent")")
        #expect(!((process["commandLine"] as? [String]) ?? []).isEmpty, "process.commandLine: \(process["commandLine"] ?? "absent")")
        #expect(!report.threads.isEmpty, "no threads")
        #expect(!report.images.isEmpty, "no images")
        #expect(report.images.contains { $0["isMainExecutable"] as? Bool == true }, "no main executable image")

        #expect(report.signal["name"] as? String == fixture.keys["CRASH-SIGNAL"])
        #expect(report.signal["codeName"] as? String == fixture.keys["CRASH-CODE"])
        if let address = fixture.keys["CRASH-ADDR"] { #expect(report.signal["faultAddress"] as? String == address) }

        try #require(report.crashedThreads.count == 1, "\(report.crashedThreads.count) threads marked crashed")
        let crashed = report.crashedThreads[0]
        let tid = crashed["tid"] as? Int
        #expect(!((crashed["registers"] as? [Any]) ?? []).isEmpty, "the crashed thread has no registers")
        switch fixture.keys["CRASH-THREAD"] {
        case "main": #expect(tid != nil && tid == process["pid"] as? Int, "crashed thread \(tid ?? -1), pid \(process["pid"] ?? "?")")
        case let threadName?: #expect(crashed["name"] as? String == threadName, "crashed thread \(tid ?? -1) is \(crashed["name"] ?? "unnamed")")
        case nil: break
        }

        // The crashed thread's functions begin with CRASH-STACK: as many frames, the same functions.
        let functions = report.frames(of: crashed).map { $0["function"] as? String }
        let expected = try #require(fixture.crashStack, "\(name) has no CRASH-STACK")
        let shown = functions.map { $0 ?? "?" }
        #expect(functions.count >= expected.count, "\(functions.count) frames, CRASH-STACK has \(expected.count): \(shown)")
        // The first difference only: past a missing frame every later one is shifted.
        if let index = Array(zip(functions, expected)).firstIndex(where: { !sameFunction($0.0, $0.1) }) {
            Issue.record("frame \(index) is \(functions[index] ?? "unnamed") where CRASH-STACK has \(expected[index]); frames: \(shown)")
        }

        // The root fault: the first handled crash signal whose handler was still running at the death, and the
        // thread marked crashed is the one that took it (kill_reraise: not the main thread the kill() reached).
        let original = report.signal["originalFault"] as? [String: Any]
        if let signal = fixture.keys["ORIGINAL-SIGNAL"] {
            let fault = try #require(original, "no signal.originalFault")
            #expect(fault["name"] as? String == signal)
            #expect(fault["codeName"] as? String == fixture.keys["ORIGINAL-CODE"])
            if let address = fixture.keys["ORIGINAL-ADDR"] { #expect(fault["faultAddress"] as? String == address) }
            #expect(fault["tid"] as? Int == tid, "the root fault was taken by thread \(fault["tid"] ?? "?"), the thread marked crashed is \(tid ?? -1)")
            if let function = fixture.keys["ORIGINAL-FUNCTION"] {
                // Like CRASH-FUNCTION: the innermost concrete frame (rust_oob: write_at, not the write_volatile inlined in it).
                let frames = fault["frames"] as? [[String: Any]] ?? []
                let concrete = frames.first { $0["inlined"] as? Bool == false }
                #expect(sameFunction(concrete?["function"] as? String, function),
                        "original fault frames: \(frames.map { $0["function"] as? String ?? "?" })")
            }
        } else {
            #expect(original == nil, "an original fault where the fixture has none: \(original ?? [:])")
        }
    }

    @Test("every thread's frames agree with gdb on the core dump of the same crash: address, function and source line",
          arguments: toolchainFixtures)
    func crossCheckWithGDB(_ name: String) throws {
        let fixture = Fixture(name, extensions: toolchainExtensions)
        let executable = try fixture.executable()
        try Cores.requireDumpedHere()
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"), "gdb is not installed; skip")

        let directory = try TemporaryDirectory("cw-gdb-\(name)")
        let (result, reports, _) = try runCapturing(executable, fixture.arguments, workingDirectory: directory.path,
                                                    shellPrefix: "ulimit -c unlimited", environment: fixture.environment)
        let report = try #require(reports.first, "no report; stderr: \(result.stderr.suffix(3000))")
        let cores = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("core") }
        let core = try #require(cores.first, "no core file was written")
        #expect(cores.count == 1, "crashwatch must not dump a core of its own: \(cores)")

        let script = "\(directory.path)/frames.py"
        try gdbFrameScript.write(toFile: script, atomically: true, encoding: .utf8)
        let gdb = try run("/usr/bin/gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-x", script, executable, "\(directory.path)/\(core)"],
                          environment: ["DEBUGINFOD_URLS": ""], timeout: 120)
        let reference = parseGDBFrames(gdb.stdout)
        let crashed = try #require(report.crashedThreads.first, "no crashed thread")
        let crashedTID = try #require(crashed["tid"] as? Int)
        try #require(reference[crashedTID] != nil, "gdb has no thread \(crashedTID) in the core; it has \(reference.keys.sorted()): \(gdb.stdout.suffix(2000)) \(gdb.stderr.suffix(2000))")
        // Every thread, the crashed one first.
        for thread in report.threads {
            // An exited thread-group leader (main_exits_first: a zombie) is listed without frames and is not in the core.
            if (thread["unwindStopReason"] as? String)?.hasPrefix("exited:") == true, report.frames(of: thread).isEmpty { continue }
            guard let tid = thread["tid"] as? Int, let all = reference[tid] else {
                Issue.record("gdb has no thread \(thread["tid"] ?? "?") of the report")
                continue
            }
            // gdb's tail-call frames are reconstructed from DWARF call-site data and are not on the stack; past the
            // first frame gdb cannot name, its unwind has lost its way (go_nil: Go's sigreturn trampoline has no CFI).
            var theirs: [GDBFrame] = []
            for frame in all where frame.kind != "tailcall" {
                if !theirs.isEmpty && frame.function == nil { break }
                theirs.append(frame)
            }
            let ours = report.frames(of: thread)
            let describe = { (frames: [[String: Any]]) in frames.map { "\($0["address"] as? String ?? "?") \($0["function"] as? String ?? "?")" } }
            #expect(ours.count >= theirs.count, "thread \(tid): crashwatch has \(ours.count) frames, gdb \(theirs.count): \(describe(ours)) vs gdb \(theirs)")
            // The first difference only (address or function): past a missing frame every later one is shifted.
            let differs = Array(zip(ours, theirs)).firstIndex { mine, frame in
                UInt64((mine["address"] as? String ?? "").dropFirst(2), radix: 16) != frame.pc
                    || !sameFunction(mine["function"] as? String, frame.function)
            }
            if let index = differs {
                Issue.record("thread \(tid) frame \(index): crashwatch \(describe([ours[index]])[0]), gdb \(theirs[index]); crashwatch: \(describe(ours)); gdb: \(theirs)")
            }
            // Source lines of the frames that agree, wherever gdb has one: the same file (by basename) and line.
            for (index, (mine, frame)) in zip(ours, theirs).enumerated() where index < (differs ?? .max) {
                guard let file = frame.file, let line = frame.line else { continue }
                let ourFile = (mine["file"] as? String)?.split(separator: "/").last.map(String.init)
                if ourFile != file || mine["line"] as? Int != line {
                    Issue.record("thread \(tid) frame \(index) \(frame.function ?? "??"): crashwatch's line is \(ourFile ?? "?"):\(mine["line"] as? Int ?? 0), gdb's \(file):\(line)")
                }
            }
        }
    }

    @Test("go_nil, go_asm: the crashed thread's frames reach the panicking goroutine, as Go's own traceback prints it: functions, files and lines",
          arguments: goroutineFixtures.keys.sorted())
    func goTracebackAgrees(_ name: String) throws {
        let fixture = Fixture(name, extensions: toolchainExtensions)
        let executable = try fixture.executable()
        let (result, reports, _) = try runCapturing(executable, fixture.arguments, environment: fixture.environment)
        let report = try #require(reports.first, "no report; stderr: \(result.stderr.suffix(3000))")
        let printed = goTraceback(result.stderr)
        // Go prints the panic path first (panic, runtime.panicmem, runtime.sigpanic); the faulting code follows.
        let sigpanic = try #require(printed.firstIndex { $0.function == "runtime.sigpanic" }, "Go's traceback: \(printed); stderr: \(result.stderr.prefix(3000))")
        let goroutine = Array(printed[(sigpanic + 1)...])
        try #require(goroutine.first?.function == goroutineFixtures[name] && goroutine.last?.function == "runtime.goexit", "Go's traceback: \(printed)")
        let crashed = try #require(report.crashedThreads.first, "no crashed thread")
        let frames = report.frames(of: crashed).map {
            GoFrame(function: $0["function"] as? String ?? "?", file: ($0["file"] as? String)?.split(separator: "/").last.map(String.init),
                    line: $0["line"] as? Int)
        }
        let start = frames.firstIndex { $0.function == goroutineFixtures[name] }
        #expect(start.map { Array(frames[$0...].prefix(goroutine.count)) } == goroutine,
                "the goroutine's frames \(goroutine) are not in the crashed thread's frames: \(frames)")
    }
}
