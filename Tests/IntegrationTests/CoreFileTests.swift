// CoreFileTests.swift — `crashwatch analyze-core` against the live capture of the same crash: every crash
// fixture whose signal dumps core runs under `crashwatch run` with core dumps on, and the report built from its core must agree with the
// live report thread by thread and frame by frame (address, function, file, line, inline), with the same
// signal, executable and build-ids, and validate against the schema with "source": "core".
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct CoreFileTests {
    /// Every crash fixture whose signal dumps core.
    static let crashFixtures = Fixture.all.filter { fixture in
        guard case .signaled(let number)? = fixture.expectedExit else { return false }
        return [SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL, SIGSYS, SIGTRAP, SIGQUIT].contains(number)
    }

    @Test("the report from a core dump equals the live report of the same crash, frame by frame", arguments: crashFixtures)
    func coreEqualsLive(_ fixture: Fixture) throws {
        let name = fixture.name
        try Cores.requireDumpedHere()
        let directory = try TemporaryDirectory("cw-core")
        var program = Paths.fixture(name)
        if name == "deleted_exe" {  // it unlinks its executable: run a copy
            program = "\(directory.path)/\(name)"
            try FileManager.default.copyItem(atPath: Paths.fixture(name), toPath: program)
        }
        let (result, reports, _) = try runCapturing(program, fixture.arguments, options: fixture.captureOptions,
                                                    workingDirectory: directory.path, shellPrefix: "ulimit -c unlimited",
                                                    environment: fixture.environment)
        let live = try #require(reports.first, "no live report: \(result.stderr)")
        let core = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("core") },
                                "no core file was written")
        let output = "\(directory.path)/from-core.json"
        // What a core cannot hold and a user supplies with --exe: the executable of a process whose file was
        // deleted (a package upgrade) or never on disk (a memfd), or whose headers in memory it overwrote, or whose
        // build-id note lies past the file's first 64 KiB the core stream keeps (10,000 notes before it).
        let executable = ["deleted_exe", "memfd_exec", "corrupt_elf_header", "annotations_hostile_notes"].contains(name) ? ["--exe", Paths.fixture(name)] : []
        let analyzed = try run(Paths.crashwatch, ["analyze-core", "-o", output] + fixture.captureOptions + executable + ["\(directory.path)/\(core)"])
        #expect(analyzed.termination == .exited(0), "\(analyzed.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let fromCore = WrittenReport(path: output, data: data, json: json)
        #expect(try SchemaValidator().validate(reportJSON: data).isEmpty)
        #expect(json["source"] as? String == "core" && json["kind"] as? String == "crash")

        if name == "seccomp_kill" {
            // A seccomp kill stops no tracer at its signal: the live report knows the signal, the core its siginfo.
            #expect(fromCore.signal["name"] as? String == "SIGSYS" && fromCore.signal["codeName"] as? String == "SYS_SECCOMP")
        } else {
            for key in ["name", "code", "codeName", "faultAddress"] {
                #expect("\(fromCore.signal[key] ?? "nil")" == "\(live.signal[key] ?? "nil")", "signal.\(key)")
            }
        }
        let process = { (report: WrittenReport) in report.json["process"] as? [String: Any] ?? [:] }
        #expect(process(fromCore)["executable"] as? String == process(live)["executable"] as? String)
        #expect(process(fromCore)["pid"] as? Int == process(live)["pid"] as? Int)
        // A frame larger than the stack window (frame_2m, frame_16m): both paths keep the stack's top beside the
        // window (StackWindow.top), so the unwind steps over the frame in both.
        let buildIDs = { (report: WrittenReport) in Set(report.images.compactMap { $0["buildID"] as? String }) }
        #expect(buildIDs(fromCore).isSuperset(of: buildIDs(live)), "build-ids: \(buildIDs(fromCore)) vs \(buildIDs(live))")

        let liveThreads = Dictionary(uniqueKeysWithValues: live.threads.map { ($0["tid"] as? Int ?? -1, $0) })
        // A thread-group leader that exited before the crash (main_exits_first) is listed live, not dumped in the core.
        let exitedLive = live.threads.filter { ($0["unwindStopReason"] as? String)?.hasPrefix("exited:") == true }.count
        #expect(fromCore.threads.count == live.threads.count - exitedLive)
        for thread in fromCore.threads {
            let tid = thread["tid"] as? Int ?? -1
            let theirs = try #require(liveThreads[tid], "the live report has no thread \(tid)")
            // A thread the live capture could not stop (vfork_wait's spawner, waiting in vfork()) has no
            // registers there; the kernel dumps it once the kill has ended its wait.
            if (theirs["registers"] as? [Any])?.isEmpty ?? true, live.frames(of: theirs).isEmpty {
                #expect(theirs["unwindStopReason"] is String, "thread \(tid): no registers and no reason")
                continue
            }
            let shape = { (frames: [[String: Any]]) in
                frames.map { "\($0["address"] ?? "") \($0["function"] ?? "?") \($0["file"] ?? "") \($0["line"] ?? "") \($0["inlined"] ?? "")" }
            }
            #expect(shape(fromCore.frames(of: thread)) == shape(live.frames(of: theirs)), "thread \(tid)")
        }
        // The thread that took the fatal signal is the core's first, and the crashed one.
        #expect(fromCore.crashedThreads.first?["tid"] as? Int == (live.signal["originalFault"] == nil
            ? live.crashedThreads.first?["tid"] as? Int : fromCore.crashedThreads.first?["tid"] as? Int))
    }

    @Test("an executable moved after the crash is found with --sysroot or --exe; the report keeps the crashed path")
    func movedExecutable() throws {
        try Cores.requireDumpedHere()
        let directory = try TemporaryDirectory("cw-core-moved")
        let program = "\(directory.path)/app/bin/server"
        try FileManager.default.createDirectory(atPath: "\(directory.path)/app/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.fixture("null_deref"), toPath: program)
        let (result, reports, _) = try runCapturing(program, workingDirectory: directory.path, shellPrefix: "ulimit -c unlimited")
        let live = try #require(reports.first, "no live report: \(result.stderr)")
        let core = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("core") })
        let sysroot = "\(directory.path)/sysroot"
        try FileManager.default.createDirectory(atPath: sysroot + "\(directory.path)/app/bin", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: program, toPath: sysroot + program)
        // The rest of the crashed machine's files, as a sysroot holds them: here, copies of this machine's.
        for path in live.images.compactMap({ $0["path"] as? String }) where path != program && path.hasPrefix("/") {
            let target = sysroot + path
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: path, toPath: target)
        }

        func analyze(_ options: [String]) throws -> WrittenReport {
            let output = "\(directory.path)/report-\(UUID().uuidString).json"
            let analyzed = try run(Paths.crashwatch, ["analyze-core", "-o", output] + options + ["\(directory.path)/\(core)"])
            #expect(analyzed.termination == .exited(0), "\(analyzed.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: output))
            return WrittenReport(path: output, data: data, json: try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
        }
        let functions = { (report: WrittenReport) in report.functions(of: report.crashedThreads[0]) }
        #expect(functions(live).starts(with: ["crash_here", "middle", "outer", "main"]))
        let without = try analyze([])
        #expect(!functions(without).starts(with: ["crash_here"]), "the moved executable was found anyway: \(functions(without))")
        for options in [["--sysroot", sysroot], ["--exe", sysroot + program]] {
            let found = try analyze(options)
            #expect(functions(found) == functions(live), "\(options): \(functions(found)) vs \(functions(live))")
            #expect((found.json["process"] as? [String: Any])?["executable"] as? String == program)
        }
    }

    @Test("core-handler: a core piped on stdin gives the live report's frames; a 1 GiB core costs a few MiB",
          .timeLimit(.minutes(2)))
    func coreHandler() throws {
        try Cores.requireDumpedHere()
        let directory = try TemporaryDirectory("cw-core-handler")
        let (result, reports, _) = try runCapturing(Paths.fixture("threads64"), workingDirectory: directory.path, shellPrefix: "ulimit -c unlimited")
        let live = try #require(reports.first, "no live report: \(result.stderr)")
        let core = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("core") })
        let pid = (live.json["process"] as? [String: Any])?["pid"] as? Int ?? 0
        let spool = "\(directory.path)/spool"
        let handled = try run("/bin/sh", ["-c", "exec '\(Paths.crashwatch)' core-handler --spool '\(spool)' \(pid) \(pid) 11 1796000000 < '\(directory.path)/\(core)'"])
        #expect(handled.termination == .exited(0), "\(handled.stderr)")
        let path = handled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let fromCore = WrittenReport(path: path, data: data, json: try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
        #expect(fromCore.json["source"] as? String == "core")
        let liveThreads = Dictionary(uniqueKeysWithValues: live.threads.map { ($0["tid"] as? Int ?? -1, $0) })
        #expect(fromCore.threads.count == 65)
        for thread in fromCore.threads {
            let theirs = try #require(liveThreads[thread["tid"] as? Int ?? -1])
            #expect(fromCore.functions(of: thread) == live.functions(of: theirs))
        }

        // A core that stops streaming after its first MiB (a dump that stalls, or one too big to read in
        // time): reading stops at 70% of --capture-timeout, the report has every thread from the notes and
        // says where reading stopped, nothing half-read is kept, and core-handler ends within the timeout.
        let stalled = "\(directory.path)/stalled"
        try FileManager.default.createDirectory(atPath: stalled, withIntermediateDirectories: true)
        let cut = try run("/bin/sh", ["-c", "{ head -c 1048576 '\(directory.path)/\(core)'; sleep 4; printf x; } | /usr/bin/time -f 'elapsed %e' '\(Paths.crashwatch)' core-handler --spool '\(stalled)' --keep-core '\(stalled)' --capture-timeout 2 \(pid) \(pid) 11 1796000000"])
        #expect(cut.termination == .exited(0), "\(cut.stderr)")
        let elapsed = Double(cut.stderr.split(separator: "\n").last { $0.hasPrefix("elapsed ") }?.dropFirst(8) ?? "") ?? .infinity
        #expect(elapsed <= 3, "core-handler took \(elapsed) s with --capture-timeout 2 on a stalled core")
        let cutPath = cut.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let cutData = try Data(contentsOf: URL(fileURLWithPath: cutPath))
        let cutReport = try #require(try JSONSerialization.jsonObject(with: cutData) as? [String: Any])
        #expect((cutReport["threads"] as? [[String: Any]])?.count == 65)
        let cutErrors = (cutReport["softErrors"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(cutErrors.contains { $0.hasPrefix("the core was read no further than byte 1048576:") }, "\(cutErrors)")
        #expect(cutErrors.contains { $0.contains("still streaming at the reading deadline; the core was not kept") }, "\(cutErrors)")
        #expect(cutReport["coreFile"] is NSNull)
        #expect(try FileManager.default.contentsOfDirectory(atPath: stalled).filter { $0.hasSuffix(".core.gz") || $0.hasPrefix(".tmp") }.isEmpty)

        // A process with 1 GiB of touched memory: its core is read through, a few MiB kept.
        let big = "\(directory.path)/big"
        try FileManager.default.createDirectory(atPath: big, withIntermediateDirectories: true)
        _ = try run("/bin/sh", ["-c", "ulimit -c unlimited; exec python3 -c 'import os; b = bytearray(1 << 30); b[::4096] = b\"x\" * (1 << 18); os.abort()'"],
                    workingDirectory: big)
        let bigCore = try #require(try FileManager.default.contentsOfDirectory(atPath: big).first { $0.hasPrefix("core") })
        let size = try #require(try FileManager.default.attributesOfItem(atPath: "\(big)/\(bigCore)")[.size] as? Int)
        #expect(size > 1 << 30, "the core has \(size) bytes")
        // Kept as well (--keep-core): compressed as it streams, in the same memory.
        let kept = "\(big)/kept"
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
        // The core is read and compressed within 70% of --capture-timeout: 60 s, so that a loaded machine keeps it too.
        let measured = try run("/bin/sh", ["-c", "exec /usr/bin/time -f 'maxrss %M' '\(Paths.crashwatch)' core-handler --capture-timeout 60 --spool '\(spool)' --keep-core '\(kept)' 1 1 6 1796000000 < '\(big)/\(bigCore)'"])
        #expect(measured.termination == .exited(0), "\(measured.stderr)")
        let kilobytes = Int(measured.stderr.split(separator: "\n").last { $0.hasPrefix("maxrss ") }?.dropFirst(7) ?? "") ?? .max
        #expect(kilobytes < 160 * 1024, "core-handler's peak RSS for a \(size)-byte core: \(kilobytes) KiB")
        #expect(try FileManager.default.contentsOfDirectory(atPath: kept).filter { $0.hasSuffix(".core.gz") }.count == 1)
        try? FileManager.default.removeItem(atPath: big)
    }

    @Test("core-handler --keep-core keeps the core itself, compressed, capped and pruned; the report says where or why not")
    func keptCore() throws {
        try Cores.requireDumpedHere()
        let directory = try TemporaryDirectory("cw-kept-core")
        _ = try run("/bin/sh", ["-c", "ulimit -c unlimited; exec '\(Paths.fixture("null_deref"))'"], workingDirectory: directory.path)
        let core = "\(directory.path)/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("core") }))
        let spool = "\(directory.path)/spool", kept = "\(directory.path)/kept"
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
        func handle(_ options: [String]) throws -> WrittenReport {
            let quoted = options.map { "'\($0)'" }.joined(separator: " ")
            let handled = try run("/bin/sh", ["-c", "exec '\(Paths.crashwatch)' core-handler --spool '\(spool)' \(quoted) 1 1 11 1796000000 < '\(core)'"])
            #expect(handled.termination == .exited(0), "\(handled.stderr)")
            let path = handled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(try SchemaValidator().validate(reportJSON: data).isEmpty)
            return WrittenReport(path: path, data: data, json: try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
        }
        func keptNames() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: kept).sorted() }
        let softErrors = { (report: WrittenReport) in (report.json["softErrors"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String } }

        // Kept: byte for byte the core, root-only, named as its report.
        let report = try handle(["--keep-core", kept])
        let path = try #require(report.json["coreFile"] as? String)
        #expect(path == "\(kept)/" + ((report.path as NSString).lastPathComponent as NSString).deletingPathExtension + ".core.gz")
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
        let same = try run("/usr/bin/python3", ["-c", "import gzip, sys; sys.exit(gzip.open(sys.argv[1]).read() != open(sys.argv[2], 'rb').read())", path, core])
        #expect(same.termination == .exited(0), "the kept core is not the core: \(same.stderr)")

        // Over the cap: not kept, nothing left behind, the report says why.
        try FileManager.default.removeItem(atPath: path)
        let capped = try handle(["--keep-core", kept, "--keep-core-max", "1K"])
        #expect(capped.json["coreFile"] is NSNull)
        #expect(softErrors(capped).contains { $0.contains("--keep-core-max") }, "\(softErrors(capped))")
        let left = try keptNames()
        #expect(left.isEmpty, "\(left)")

        // The newest --keep-cores stay; a file crashwatch did not name is never pruned.
        _ = FileManager.default.createFile(atPath: "\(kept)/someone-else.core.gz", contents: Data("x".utf8))
        for _ in 0..<3 { _ = try handle(["--keep-core", kept, "--keep-cores", "2"]) }
        let remaining = try keptNames().filter { $0 != "someone-else.core.gz" }
        #expect(remaining.count == 2 && remaining.allSatisfy { $0.hasSuffix(".core.gz") }, "\(remaining)")
        #expect(FileManager.default.fileExists(atPath: "\(kept)/someone-else.core.gz"))

        // Not a core at all: refused (65), and nothing is kept of it.
        let refused = try run("/bin/sh", ["-c", "echo not a core | exec '\(Paths.crashwatch)' core-handler --spool '\(spool)' --keep-core '\(kept)' 1 1 11 1796000000"])
        #expect(refused.termination == .exited(65), "\(refused.stderr)")
        let afterRefusal = try keptNames().filter { $0 != "someone-else.core.gz" }
        #expect(afterRefusal == remaining, "\(afterRefusal)")

        // A directory that cannot be used: the report is still written, saying so.
        let nowhere = try handle(["--keep-core", "\(directory.path)/missing"])
        #expect(nowhere.json["coreFile"] is NSNull)
        #expect(softErrors(nowhere).contains { $0.contains("missing") }, "\(softErrors(nowhere))")
        // Nor one anyone may write without the sticky bit (others could swap what is kept).
        let open = "\(directory.path)/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: open)
        let refusedDirectory = try handle(["--keep-core", open])
        #expect(refusedDirectory.json["coreFile"] is NSNull)
        #expect(softErrors(refusedDirectory).contains { $0.contains("sticky bit") }, "\(softErrors(refusedDirectory))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: open).isEmpty)
    }

    @Test("analyze-core refuses what is not a core dump, naming it")
    func notACore() throws {
        let analyzed = try run(Paths.crashwatch, ["analyze-core", "-o", "/dev/null", Paths.fixture("null_deref")])
        #expect(analyzed.termination == .exited(65))
        #expect(analyzed.stderr.contains("not a core dump"), "\(analyzed.stderr)")
        let missing = try run(Paths.crashwatch, ["analyze-core", "/nonexistent/core"])
        #expect(missing.termination == .exited(66), "\(missing.stderr)")
    }
}
