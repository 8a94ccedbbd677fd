// ReportTests.swift — the report a real crash produces, field by field: every crash fixture run under
// `crashwatch run --spool DIR`, its report validated against the JSON Schema and checked against the
// fixture's header, `readelf -n` and, for the crashed thread, eu-stack on the core dump of the same crash.
import CrashwatchTestSupport
import Foundation
import Testing

/// A report written by a supervised run, parsed loosely (JSONSerialization) to check it from outside.
struct WrittenReport {
    let path: String
    let data: Data
    let json: [String: Any]

    var signal: [String: Any] { json["signal"] as? [String: Any] ?? [:] }
    var threads: [[String: Any]] { json["threads"] as? [[String: Any]] ?? [] }
    var images: [[String: Any]] { json["images"] as? [[String: Any]] ?? [] }
    var crashedThreads: [[String: Any]] { threads.filter { $0["crashed"] as? Bool == true } }

    func frames(of thread: [String: Any]) -> [[String: Any]] { thread["frames"] as? [[String: Any]] ?? [] }

    /// The image record a frame points at.
    func image(of frame: [String: Any]) -> [String: Any]? {
        guard let index = frame["imageIndex"] as? Int, index < images.count else { return nil }
        return images[index]
    }

    /// Function names of a thread's frames, innermost first.
    func functions(of thread: [String: Any]) -> [String] { frames(of: thread).map { $0["function"] as? String ?? "?" } }
}

/// Runs `executable` under crashwatch with a fresh spool and returns the run and the reports it wrote.
func runCapturing(_ executable: String, _ arguments: [String] = [], options: [String] = [], workingDirectory: String? = nil,
                  spool: TemporaryDirectory? = nil, shellPrefix: String? = nil, environment: [String: String] = [:])
    throws -> (RunResult, [WrittenReport], TemporaryDirectory)
{
    let spool = try spool ?? TemporaryDirectory("cw-spool")
    let result: RunResult
    if let shellPrefix {
        let command = ([Paths.crashwatch, "run", "--spool", spool.path] + options + ["--", executable] + arguments)
            .map { "'\($0)'" }.joined(separator: " ")
        result = try run("/bin/sh", ["-c", "\(shellPrefix); exec \(command)"], workingDirectory: workingDirectory,
                         environment: environment)
    } else {
        result = try run(Paths.crashwatch, ["run", "--spool", spool.path] + options + ["--", executable] + arguments,
                         workingDirectory: workingDirectory, environment: environment)
    }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: spool.path)) ?? []
    #expect(!names.contains { $0.hasPrefix(".tmp-") }, "a temporary file was left in the spool")
    let reports = try names.filter { $0.hasSuffix(".json") }.sorted().map { name -> WrittenReport in
        let path = "\(spool.path)/\(name)"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(name) is not a JSON object")
        let mode = ((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o640, "\(name) has mode \(String(mode, radix: 8))")
        // Every report a test produces is checked against the schema.
        let violations = try SchemaValidator().validate(reportJSON: data)
        #expect(violations.isEmpty, "\(name) violates the schema: \(violations)")
        // No report comes back empty: every one has threads, images and its executable.
        #expect((json["threads"] as? [Any])?.isEmpty == false, "\(name) has no threads")
        #expect((json["images"] as? [Any])?.isEmpty == false, "\(name) has no images")
        #expect(((json["process"] as? [String: Any])?["executable"] as? String)?.isEmpty == false, "\(name) has no executable")
        return WrittenReport(path: path, data: data, json: json)
    }
    return (result, reports, spool)
}

@Suite struct ReportTests {
    static let crashing = Fixture.all.filter { $0.expectedCrashes >= 1 && $0.name != "deleted_exe" }

    @Test("each crash fixture yields one valid report that says what its header promises", arguments: crashing)
    func reportMatchesFixture(_ fixture: Fixture) throws {
        let (result, reports, _) = try runCapturing(Paths.fixture(fixture.name), fixture.arguments, options: fixture.captureOptions,
                                                    environment: fixture.environment)
        #expect(result.termination == fixture.expectedExit, "\(result.stderr)")
        try #require(reports.count == fixture.expectedCrashes, "stderr: \(result.stderr)")
        #expect(result.crashwatchLines.filter { $0.hasPrefix("crashwatch: report written to ") }.count == fixture.expectedCrashes)
        try check(reports[0], against: fixture, executable: Paths.fixture(fixture.name), result: result)
    }

    @Test("a thread waiting in vfork() for a slow child is not waited for: listed without registers, and the process let go at once")
    func threadInVfork() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("vfork_wait"))
        #expect(result.termination == .signaled(SIGSEGV), "stderr: \(result.stderr)")
        let report = try #require(reports.first, "stderr: \(result.stderr)")
        // Its child execs only after 5 s: waiting for the thread would hold the process that long.
        let hold = try #require(report.json["holdDurationMs"] as? Double)
        #expect(hold < 1_000, "held \(hold) ms")
        #expect(report.threads.count == 2)
        let spawner = try #require(report.threads.first { $0["name"] as? String == "spawner" }, "\(report.threads)")
        #expect((spawner["registers"] as? [Any])?.isEmpty ?? true)
        #expect((spawner["unwindStopReason"] as? String)?.contains("vfork()") == true, "\(spawner)")
        let softErrors = report.json["softErrors"] as? [[String: Any]] ?? []
        #expect(softErrors.contains { $0["stage"] as? String == "stop" && ($0["message"] as? String)?.contains("vfork()") == true }, "\(softErrors)")
    }

    @Test("a deleted executable still gets its frames, names and build-id")
    func deletedExecutable() throws {
        let directory = try TemporaryDirectory("cw-deleted")
        let copy = "\(directory.path)/deleted_exe"
        try FileManager.default.copyItem(atPath: Paths.fixture("deleted_exe"), toPath: copy)
        let expectedBuildID = try Readelf.buildID(of: copy)
        let (result, reports, _) = try runCapturing(copy)
        let report = try #require(reports.first, "stderr: \(result.stderr)")
        try check(report, against: Fixture("deleted_exe"), executable: copy, result: result, buildID: expectedBuildID)
        let main = try #require(report.images.first { $0["isMainExecutable"] as? Bool == true })
        #expect(main["deleted"] as? Bool == true)
        #expect(main["path"] as? String == copy)
    }

    @Test("64 threads: every thread's frames are its documented recursion")
    func sixtyFourThreads() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("threads64"))
        let report = try #require(reports.first, "stderr: \(result.stderr)")
        #expect(report.threads.count == 65)
        let parked = report.threads.filter { ($0["name"] as? String)?.wholeMatch(of: #/t\d\d/#) != nil }
        #expect(parked.count == 64)
        for thread in parked {
            let name = thread["name"] as! String
            let index = try #require(Int(name.dropFirst()))
            let functions = report.functions(of: thread)
            #expect(functions.filter { $0 == "park_level" }.count == index % 8 + 4, "\(name): \(functions)")
            #expect(functions.contains("park_bottom") && functions.contains("thread_main"), "\(name): \(functions)")
            #expect(thread["crashed"] as? Bool == false)
        }
    }

    @Test("a pid namespace's init that crashes is reported and dies as it does bare (traced, the kernel spares it its fatal signal)")
    func pidNamespaceInit() throws {
        try #require(getuid() == 0, "needs root for a pid namespace; skip")
        let arguments = ["-pf", "--mount-proc", Paths.fixture("threads64")]
        let bare = try run("/usr/bin/unshare", arguments, timeout: 30)
        let spool = try TemporaryDirectory("cw-spool")
        // Before the fix the init's fault came back for ever and the run never ended: the timeout fails it.
        let result = try run(Paths.crashwatch, ["run", "--spool", spool.path, "--", "/usr/bin/unshare"] + arguments, timeout: 30)
        // unshare dies of its child's signal, by sending it to itself: SIGSEGV either way.
        #expect(bare.termination == .signaled(SIGSEGV))
        #expect(result.termination == bare.termination, "stderr: \(result.stderr)")
        let line = try #require(result.crashLines.first { $0.executable.hasSuffix("/threads64") }, "stderr: \(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: spool.path).filter { $0.contains("-\(line.pid)-threads64-") }
        let name = try #require(names.first, "no report of threads64[\(line.pid)]: \(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(spool.path)/\(name)"))) as? [String: Any])
        #expect((report["threads"] as? [Any])?.count == 65)
        #expect((report["diagnostics"] as? [String: Any])?["processing"] as? String == "complete")
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(line.pid)"), "threads64[\(line.pid)] is still there")
    }

    @Test("1,000 threads are all stopped and unwound")
    func thousandThreads() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("threads1000"))
        let report = try #require(reports.first, "stderr: \(result.stderr)")
        #expect(report.threads.count == 1001)
        #expect(report.threads.allSatisfy { !report.frames(of: $0).isEmpty })
        #expect((report.json["softErrors"] as? [Any])?.isEmpty == true, "\(report.json["softErrors"] ?? "")")
    }

    @Test("a corrupted stack gives the trustworthy frames and a reason, never a hang")
    func corruptedStack() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("corrupt_stack"))
        let report = try #require(reports.first, "stderr: \(result.stderr)")
        let crashed = try #require(report.crashedThreads.first)
        #expect(report.functions(of: crashed).first == "crash_here")
        #expect(report.frames(of: crashed).count < 256)
        #expect(crashed["unwindStopReason"] is String)
    }

    @Test("every thread's frames agree with eu-stack -s -i on the core dump of the same crash: address, function, file:line:column",
          arguments: ["null_deref", "omit_fp_o2", "threads64", "dlopen_crash", "segv_reraise", "abort_in_handler", "inline_o2",
                      "cxx_throw", "abort", "spin_threads"])
    func crossCheckWithCoreDump(_ name: String) throws {
        try Cores.requireDumpedHere()
        let directory = try TemporaryDirectory("cw-core")
        let executable = Paths.fixture(name)
        let (result, reports, _) = try runCapturing(executable, workingDirectory: directory.path, shellPrefix: "ulimit -c unlimited")
        let report = try #require(reports.first, "stderr: \(result.stderr)")
        let cores = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("core") }
        let core = try #require(cores.first, "no core file was written")
        #expect(cores.count == 1, "crashwatch must not dump a core of its own: \(cores)")
        let stack = try run("/usr/bin/eu-stack", ["-s", "-i", "--core", "\(directory.path)/\(core)", "-e", executable])
        let reference = EuStack.parse(stack.stdout)
        try #require(reference.count == report.threads.count, "eu-stack saw \(reference.count) threads: \(stack.stdout) \(stack.stderr)")
        for thread in report.threads {
            let tid = thread["tid"] as? Int ?? -1
            let theirs = try #require(reference[tid], "eu-stack has no thread \(tid)")
            let ours = report.frames(of: thread)
            // libunwind and libdw may differ in how far they go past the entry point; the rest must agree.
            #expect(ours.count >= theirs.count - 1, "thread \(tid): \(report.functions(of: thread)) vs \(theirs.map(\.function))")
            for (index, frame) in theirs.prefix(ours.count).enumerated() {
                let mine = ours[index]
                let address = UInt64((mine["address"] as? String ?? "").dropFirst(2), radix: 16)
                #expect(address == frame.address, "thread \(tid) frame \(index): \(mine) vs eu-stack \(frame)")
                #expect(mine["function"] as? String == frame.function, "thread \(tid) frame \(index): \(mine) vs eu-stack \(frame)")
                if let file = frame.file {
                    #expect(mine["file"] as? String == file && mine["line"] as? Int == frame.line && mine["column"] as? Int == frame.column,
                            "thread \(tid) frame \(index): \(mine) vs eu-stack \(frame)")
                }
            }
        }
    }

    private func check(_ report: WrittenReport, against fixture: Fixture, executable: String, result: RunResult,
                       buildID: String?? = nil) throws
    {
        #expect(report.json["schemaVersion"] as? Int == 1)
        #expect(report.json["kind"] as? String == "crash")
        #expect(report.signal["name"] as? String == fixture.keys["CRASH-SIGNAL"])
        #expect(report.signal["codeName"] as? String == fixture.keys["CRASH-CODE"])
        if let address = fixture.keys["CRASH-ADDR"] { #expect(report.signal["faultAddress"] as? String == address) }
        let original = report.signal["originalFault"] as? [String: Any]
        #expect(original?["name"] as? String == fixture.keys["ORIGINAL-SIGNAL"])
        #expect(original?["codeName"] as? String == fixture.keys["ORIGINAL-CODE"])
        if let function = fixture.keys["ORIGINAL-FUNCTION"] {
            // The original fault's own stack, unwound from the registers saved when it was delivered.
            let frames = original?["frames"] as? [[String: Any]] ?? []
            #expect(frames.first?["function"] as? String == function, "original fault frames: \(frames.map { $0["function"] ?? "?" })")
            #expect((original?["registers"] as? [Any])?.isEmpty == false)
        }

        // Exactly one crashed thread, the one the crash line named.
        try #require(report.crashedThreads.count == 1)
        let crashed = report.crashedThreads[0]
        let line = try #require(result.crashLines.first)
        #expect(crashed["tid"] as? Int == Int(line.tid))
        let process = report.json["process"] as? [String: Any] ?? [:]
        #expect(process["pid"] as? Int == Int(line.pid))
        switch fixture.keys["CRASH-THREAD"] {
        case "main": #expect(crashed["tid"] as? Int == process["pid"] as? Int)
        case let name?: #expect(crashed["name"] as? String == name)
        case nil: break
        }
        #expect(report.threads.first?["crashed"] as? Bool == true, "the crashed thread comes first")

        // The innermost frames in the fixture's own code: the first record (perhaps an inlined call) has
        // the documented file and line, the first concrete one the documented function.
        let ownImage = fixture.keys["CRASH-IMAGE"] ?? (executable as NSString).lastPathComponent
        let ownFrames = report.frames(of: crashed).filter { (report.image(of: $0)?["name"] as? String) == ownImage }
        let concrete = ownFrames.first { $0["inlined"] as? Bool == false }
        let trail = "frames: \(report.functions(of: crashed))"
        if let function = fixture.keys["CRASH-FUNCTION"] { #expect(concrete?["function"] as? String == function, "\(trail)") }
        if let symbol = fixture.keys["CRASH-SYMBOL"] { #expect(concrete?["symbol"] as? String == symbol, "\(trail)") }
        if let demangled = fixture.keys["CRASH-DEMANGLED"] { #expect(concrete?["function"] as? String == demangled, "\(trail)") }
        if let file = fixture.keys["CRASH-FILE"] {
            #expect((ownFrames.first?["file"] as? String).map { ($0 as NSString).lastPathComponent } == file, "\(trail)")
        }
        if let line = fixture.keys["CRASH-LINE"] { #expect(ownFrames.first?["line"] as? Int == Int(line), "\(trail)") }
        if let chain = fixture.keys["CRASH-INLINE-CHAIN"] {
            let expected = chain.split(separator: ",").map(String.init)
            let got = ownFrames.prefix(expected.count).map { $0["function"] as? String ?? "?" }
            #expect(got == expected)
            #expect(ownFrames.prefix(expected.count - 1).allSatisfy { $0["inlined"] as? Bool == true })
        }
        #expect(report.frames(of: crashed).first?["how"] as? String == "context")

        // Images: the main executable is present and in-app, system libraries are not, build-ids match readelf.
        let main = try #require(report.images.first { $0["isMainExecutable"] as? Bool == true }, "no main executable image")
        if fixture.name != "memfd_exec" {
            #expect(main["inApp"] as? Bool == true)
        }
        for image in report.images {
            let path = image["path"] as? String ?? ""
            if path.hasPrefix("/usr/lib") || path.hasPrefix("/lib") { #expect(image["inApp"] as? Bool == false, "\(path)") }
            if (path == ownImage || path.hasSuffix("/\(ownImage)")) && !path.hasPrefix("/memfd:") { #expect(image["inApp"] as? Bool == true, "\(path)") }
            guard FileManager.default.fileExists(atPath: path) else { continue }
            #expect(image["buildID"] as? String == (try Readelf.buildID(of: path)), "\(path)")
        }
        if let buildID { #expect(main["buildID"] as? String == buildID) }
        if let package = fixture.keys["PACKAGE"] {
            let fields = package.split(separator: " ").map(String.init)
            let record = main["package"] as? [String: Any]
            #expect([record?["type"], record?["name"], record?["version"], record?["architecture"]].map { $0 as? String } == fields)
        } else {
            #expect(main["package"] is NSNull, "\(main)")
        }
    }
}

/// `eu-stack -s -i` output: threads by tid, each a list of frames (address, function, optional file:line:column).
enum EuStack {
    struct Frame: CustomStringConvertible {
        let address: UInt64
        let function: String?
        var file: String?
        var line: Int?
        var column: Int?
        var description: String { "\(String(address, radix: 16)) \(function ?? "?") \(file ?? ""):\(line ?? 0):\(column ?? 0)" }
    }

    static func parse(_ text: String) -> [Int: [Frame]] {
        var threads: [Int: [Frame]] = [:]
        var current: Int?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("TID "), let tid = Int(line.dropFirst(4).prefix { $0.isNumber }) {
                current = tid
                threads[tid] = []
            } else if let tid = current, line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
                guard parts.count >= 2, let address = UInt64(parts[1].dropFirst(2), radix: 16) else { continue }
                threads[tid]?.append(Frame(address: address, function: parts.count > 2 ? String(parts[2]) : nil))
            } else if let tid = current, line.hasPrefix("    "), var frame = threads[tid]?.popLast() {
                // "    /path/file.c:39:18": split from the right, the path may hold colons.
                let fields = line.trimmingCharacters(in: .whitespaces).split(separator: ":")
                if fields.count >= 3, let lineNumber = Int(fields[fields.count - 2]), let column = Int(fields[fields.count - 1]) {
                    frame.file = fields.dropLast(2).joined(separator: ":")
                    frame.line = lineNumber
                    frame.column = column
                } else if fields.count >= 2, let lineNumber = Int(fields[fields.count - 1]) {
                    frame.file = fields.dropLast().joined(separator: ":")
                    frame.line = lineNumber
                }
                threads[tid]?.append(frame)
            }
        }
        return threads
    }
}
