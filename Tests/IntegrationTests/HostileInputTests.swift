// HostileInputTests.swift — what an unprivileged crashing program can do to a root-run `crashwatch run`: FIFOs
// where its executable or its debug file should be, a corrupt unwind table, a debuginfod server that never answers,
// a symbol that demangles to tens of MiB, a garbled ELF header in memory, a deleted -O2 executable and a library
// replaced while it is mapped. Each fixture (Fixtures/<name>.c; its header says what it does and what a report
// must show) runs from a fresh copy under `crashwatch run --capture-timeout 2`. Whatever the attack, crashwatch
// must end within the capture timeout plus a second, exit as the bare program does, write exactly one report that
// validates against the schema, and leave nothing behind: no process of the run, no reader blocked on a FIFO, no
// open connection. Where processing cannot be stopped by the attack the report must say "complete" and show the
// frames; where it may legitimately stay minimal, its soft errors must name what failed.
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

/// The `--capture-timeout` every hostile run gets, in seconds.
private let captureTimeout = 2.0
/// How much longer than the capture timeout crashwatch may take in all (start, capture, processing, exit): a
/// guard against a hang (these inputs would block forever without their defence), not a speed target, so wide
/// enough for a machine with two busy loops beside the suite.
private let grace = 3.0
/// The longest demangled name (a frame's `function`) a report may carry. demangle_bomb's symbol demangles to
/// 65 MiB (libswiftCore's swift_demangle): anything near that size was not capped.
private let maxFunctionLength = 64 * 1024
/// A report larger than this is not parsed: it is the demangle bomb (or another attack) getting through.
private let maxReportBytes = 16 * 1024 * 1024

/// What processing must have achieved: `complete` where the attack must no longer stop it, `either` where
/// a minimal report (with soft errors naming what failed) is acceptable.
private enum Processing { case complete, either }

/// One supervised run: its outcome, wall time, and the reports its spool holds.
private struct HostileRun {
    let result: RunResult
    let seconds: Double
    /// Every `*.json` file in the spool, parsed or not.
    let reportFiles: [String]
    /// The reports small enough to parse, each validated against the schema.
    let reports: [WrittenReport]
    let spool: TemporaryDirectory
}

/// A fresh temporary directory holding a copy of fixture `name` and of `companions` (files of the build
/// directory, such as shared objects), then `setup(directory)`. Returns the directory and the copy's path.
private func stage(_ name: String, companions: [String] = [], setup: (String) throws -> Void = { _ in })
    throws -> (TemporaryDirectory, String)
{
    let directory = try TemporaryDirectory("cw-hostile-\(name)")
    for file in [name] + companions {
        try FileManager.default.copyItem(atPath: "\(Paths.fixtures)/\(file)", toPath: "\(directory.path)/\(file)")
    }
    try setup(directory.path)
    return (directory, "\(directory.path)/\(name)")
}

/// Runs `executable` under `crashwatch run --spool NEW --capture-timeout 2 OPTIONS -- executable ARGS`, timed,
/// and reads the spool: no temporary file left, reports mode 0640 and valid against the schema.
private func superviseHostile(_ executable: String, _ arguments: [String] = [], options: [String] = [],
                              environment: [String: String] = [:]) throws -> HostileRun
{
    let spool = try TemporaryDirectory("cw-hostile-spool")
    let clock = ContinuousClock()
    let start = clock.now
    // The kill timeout only bounds a broken build; the real bound is checked below.
    let result = try run(Paths.crashwatch,
                         ["run", "--spool", spool.path, "--capture-timeout", "\(captureTimeout)"] + options + ["--", executable] + arguments,
                         environment: environment, timeout: 30)
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18

    let names = (try? FileManager.default.contentsOfDirectory(atPath: spool.path)) ?? []
    #expect(!names.contains { $0.hasPrefix(".tmp-") }, "a temporary file was left in the spool: \(names)")
    let files = names.filter { $0.hasSuffix(".json") }.sorted()
    var reports: [WrittenReport] = []
    for name in files {
        let path = "\(spool.path)/\(name)"
        var status = stat()
        try #require(stat(path, &status) == 0, "cannot stat \(path)")
        #expect(status.st_mode & 0o777 == 0o640, "\(name) has mode \(String(status.st_mode & 0o777, radix: 8))")
        guard status.st_size <= maxReportBytes else {
            Issue.record("\(name) is \(status.st_size) bytes (more than \(maxReportBytes)): something was not capped")
            continue
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(name) is not a JSON object")
        let violations = try SchemaValidator().validate(reportJSON: data)
        #expect(violations.isEmpty, "\(name) violates the schema: \(violations)")
        reports.append(WrittenReport(path: path, data: data, json: json))
    }
    return HostileRun(result: result, seconds: seconds, reportFiles: files, reports: reports, spool: spool)
}

/// The bytes of a /proc file (their stat size is 0, so read to the end), or nil.
private func readProcFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fd, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[0..<count]
    }
    return bytes
}

/// A process's state letter from /proc/PID/stat (R, S, D, T, t, Z, ...), nil when there is no such process.
private func processState(_ pid: Int32) -> Character? {
    guard let bytes = readProcFile("/proc/\(pid)/stat"), let state = ProcStat(bytes[...])?.state else { return nil }
    return Character(Unicode.Scalar(state))
}

/// Live processes (zombies aside) whose command line mentions any of `markers`, as "PID [state] command line".
private func processesMentioning(_ markers: [String]) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    var found: [String] = []
    for entry in entries where entry.allSatisfy(\.isNumber) {
        guard let pid = Int32(entry), pid != getpid(), let bytes = readProcFile("/proc/\(entry)/cmdline"), !bytes.isEmpty else { continue }
        let commandLine = String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        guard markers.contains(where: { commandLine.contains($0) }) else { continue }
        let state = processState(pid)
        guard let state, state != "Z" else { continue }
        found.append("\(pid) [\(state)] \(commandLine)")
    }
    return found
}

/// Whether some process holds the FIFO at `path` open for reading (or waits in open(2) for a writer). Opening it
/// for writing without blocking succeeds only then; the open is closed at once, which also lets such a reader go.
private func fifoHasReader(_ path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return false } // ENXIO: no reader
    close(fd)
    return true
}

/// The checks every hostile run must pass; returns the one report when there is one.
/// - `bare`: the same fixture run bare from an identically prepared copy.
/// - `markers`: text only this run's processes carry in their command line (its temporary directory).
/// - `fifos`: FIFOs nobody may still have open when crashwatch is done.
/// - `bareSeconds`: how long the process took to die bare, when that is longer than the capture may take.
@discardableResult
private func expectContained(_ supervised: HostileRun, bare: RunResult, fixture: Fixture, processing: Processing,
                             markers: [String], fifos: [String] = [], bareSeconds: Double = 0) -> WrittenReport?
{
    let result = supervised.result
    let trail = "stderr: \(result.stderr.prefix(4000))"
    #expect(bare.termination == fixture.expectedExit, "bare run: \(bare.stderr)")
    #expect(result.termination == bare.termination, "\(trail)")
    #expect(result.stdout == bare.stdout)
    #expect(supervised.seconds <= max(captureTimeout, bareSeconds) + grace,
            "crashwatch took \(String(format: "%.2f", supervised.seconds)) s with --capture-timeout \(captureTimeout); \(trail)")
    #expect(supervised.reportFiles.count == 1, "reports: \(supervised.reportFiles); \(trail)")
    #expect(result.crashLines.count == 1, "\(trail)")
    #expect(result.crashwatchLines.filter { $0.hasPrefix("crashwatch: report written to ") }.count == 1, "\(trail)")

    // Nothing left behind: the crashed process is gone (crashwatch reaps it before exiting as it did), no process
    // of this run lives on (a worker included), no reader waits on a FIFO.
    let report = supervised.reports.first
    let process = report?.json["process"] as? [String: Any]
    let pid = result.crashLines.first?.pid ?? (process?["pid"] as? Int).map { Int32($0) }
    let deadline = Date().addingTimeInterval(grace)
    var leftovers: [String] = []
    var crashedState: Character?
    repeat {
        crashedState = pid.flatMap(processState)
        leftovers = processesMentioning(markers + [supervised.spool.path])
        if crashedState == nil && leftovers.isEmpty { break }
        usleep(20_000)
    } while Date() < deadline
    #expect(crashedState == nil, "the crashed process \(pid ?? -1) is still there, state \(crashedState.map(String.init) ?? "?")")
    #expect(leftovers.isEmpty, "left running after crashwatch ended: \(leftovers)")
    for fifo in fifos {
        #expect(!fifoHasReader(fifo), "a process still has \(fifo) open for reading (blocked on it)")
    }

    guard let report else { return nil }
    let diagnostics = report.json["diagnostics"] as? [String: Any] ?? [:]
    let state = diagnostics["processing"] as? String
    let softErrors = report.json["softErrors"] as? [[String: Any]] ?? []
    switch processing {
    case .complete:
        #expect(state == "complete", "diagnostics.processing is \(state ?? "absent"); soft errors: \(softErrors)")
    case .either:
        #expect(state == "complete" || state == "unwound" || state == "minimal", "diagnostics.processing is \(state ?? "absent")")
    }
    if state == "minimal" || state == "unwound" {
        #expect(!softErrors.isEmpty, "a minimal report must say what failed")
    }
    for error in softErrors {
        #expect(!(error["stage"] as? String ?? "").isEmpty && !(error["message"] as? String ?? "").isEmpty,
                "a soft error without a stage or message: \(error)")
    }
    let hold = (report.json["holdDurationMs"] as? NSNumber)?.doubleValue
    #expect(hold.map { $0 >= 0 && $0 <= captureTimeout * 1000 } == true,
            "holdDurationMs is \(hold.map { "\($0)" } ?? "absent"): the process may be held at most the capture timeout")
    #expect(report.crashedThreads.count == 1)
    return report
}

/// The fixture's `CRASH-STACK` key: the crashed thread's functions, innermost first.
private func crashStack(_ fixture: Fixture) throws -> [String] {
    try #require(fixture.keys["CRASH-STACK"], "\(fixture.name) has no CRASH-STACK key").split(separator: ",").map(String.init)
}

/// The crashed thread of a report, or a failure.
private func crashedThread(_ report: WrittenReport) throws -> [String: Any] {
    try #require(report.crashedThreads.first, "no crashed thread")
}

/// The build-id `readelf -n` gives for a file of the build directory.
private func builtBuildID(_ file: String) throws -> String {
    try #require(try Readelf.buildID(of: "\(Paths.fixtures)/\(file)"), "\(file) has no build-id")
}

/// A TCP server on 127.0.0.1 that accepts every connection and never answers: a debuginfod server that hangs.
final class SilentServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var connections: [Int32] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, listen(fd, 64) == 0, named == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func acceptLoop() {
        defer { finished.signal() }
        while !isStopping {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            if connection >= 0 { lock.withLock { connections.append(connection) } }
        }
    }

    /// How many connections were accepted.
    var accepted: Int { lock.withLock { connections.count } }

    /// How many accepted connections the client has not closed (what it sent is read and dropped).
    var stillOpen: Int {
        lock.withLock {
            connections.filter { fd in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    if count > 0 { continue }
                    if count == 0 { return false }
                    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
                }
            }.count
        }
    }

    /// Stops accepting and closes every socket.
    func stop() {
        lock.withLock { stopping = true }
        finished.wait()
        lock.withLock {
            for fd in connections { close(fd) }
            connections = []
        }
        close(listener)
    }
}

/// Aborts the FUSE connections of the mounts of type `type` any process sees (through the fusectl file system,
/// mounted when it is not): every request waiting on their servers then fails at once.
func abortFuseConnections(named type: String) {
    let control = "/sys/fs/fuse/connections"
    if ((try? FileManager.default.contentsOfDirectory(atPath: control)) ?? []).isEmpty {
        _ = try? run("/bin/mount", ["-t", "fusectl", "none", control])
    }
    var minors = Set<String>()
    for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter({ Int($0) != nil }) ?? [] {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/mountinfo", encoding: .utf8) else { continue }
        for line in text.split(separator: "\n") where line.contains(" - \(type) ") {
            let device = line.split(separator: " ")[2].split(separator: ":")
            if device.count == 2 { minors.insert(String(device[1])) }
        }
    }
    for minor in minors { try? "1".write(toFile: "\(control)/\(minor)/abort", atomically: false, encoding: .utf8) }
}

/// Watches, from another thread, for the processing worker whose environment holds `marker` and samples its
/// scheduling policy (field 41 of /proc/PID/stat: 0 SCHED_OTHER, 3 SCHED_BATCH) and how long it has waited
/// on a run queue (field 2 of /proc/PID/schedstat, nanoseconds) until it is gone.
final class WorkerPolicyWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [(seconds: Double, policy: Int, runQueueWait: Int64)] = []
    private let finished = DispatchSemaphore(value: 0)

    init(marker: String) {
        let start = Date()
        Thread.detachNewThread { [self] in
            defer { finished.signal() }
            var worker: String?
            while worker == nil, Date().timeIntervalSince(start) < 30 {
                let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
                worker = pids.first { pid in
                    guard let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                          let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
                    return String(decoding: cmdline, as: UTF8.self).contains("__process")
                        && String(decoding: environ, as: UTF8.self).contains(marker)
                }
                if worker == nil { usleep(2_000) }
            }
            guard let worker else { return }
            while let bytes = readProcFile("/proc/\(worker)/stat"), let stat = ProcStat(bytes[...]) {
                guard let policy = stat.number(41), stat.state != UInt8(ascii: "Z") else { return }
                let schedstat = (try? String(contentsOfFile: "/proc/\(worker)/schedstat", encoding: .utf8)) ?? ""
                let wait = schedstat.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? 0
                lock.withLock { samples.append((Date().timeIntervalSince(start), Int(policy), wait)) }
                usleep(5_000)
            }
        }
    }

    /// The samples, once the worker is gone.
    func result() -> [(seconds: Double, policy: Int, runQueueWait: Int64)] {
        finished.wait()
        return lock.withLock { samples }
    }
}

@Suite(.serialized) struct HostileInputTests {
    /// Environment for every supervised run: no debuginfod unless a test asks for one with `--debuginfod`.
    private let quiet = ["DEBUGINFOD_URLS": ""]

    @Test("a deleted executable whose path text names FIFOs (or links to one) is still reported in full",
          arguments: ["fifo", "symlink"])
    func fifoDeletedExecutable(_ mode: String) throws {
        let fixture = Fixture("fifo_deleted_exe")
        let (bareDirectory, bareCopy) = try stage(fixture.name)
        let bare = try run(bareCopy, [mode])
        withExtendedLifetime(bareDirectory) {}
        let (directory, copy) = try stage(fixture.name)
        let supervised = try superviseHostile(copy, [mode], environment: quiet)
        let fifos = mode == "fifo" ? ["\(copy) (deleted)", copy] : ["\(copy).fifo"]
        #expect(fifos.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "the fixture did not plant its FIFOs")
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path], fifos: fifos) else { return }
        let functions = report.functions(of: try crashedThread(report))
        let expected = try crashStack(fixture)
        #expect(Array(functions.prefix(expected.count)) == expected, "frames: \(functions)")
        let main = try #require(report.images.first { $0["isMainExecutable"] as? Bool == true })
        #expect(main["deleted"] as? Bool == true, "\(main)")
        #expect(main["path"] as? String == copy, "\(main)")
        #expect(main["buildID"] as? String == (try builtBuildID(fixture.name)), "\(main)")
    }

    @Test("FIFOs where the .gnu_debuglink file should be are refused; the report is complete")
    func fifoDebuglink() throws {
        let fixture = Fixture("fifo_debuglink")
        func plantFIFOs(_ directory: String) throws {
            try FileManager.default.createDirectory(atPath: "\(directory)/.debug", withIntermediateDirectories: false)
            for path in ["\(directory)/fifo_debuglink.debug", "\(directory)/.debug/fifo_debuglink.debug"] {
                try #require(mkfifo(path, 0o600) == 0, "mkfifo \(path): \(String(cString: strerror(errno)))")
            }
        }
        let (bareDirectory, bareCopy) = try stage(fixture.name, setup: plantFIFOs)
        let bare = try run(bareCopy)
        withExtendedLifetime(bareDirectory) {}
        let (directory, copy) = try stage(fixture.name, setup: plantFIFOs)
        let supervised = try superviseHostile(copy, environment: quiet)
        let fifos = ["\(directory.path)/fifo_debuglink.debug", "\(directory.path)/.debug/fifo_debuglink.debug"]
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path], fifos: fifos) else { return }
        // Stripped and its debug file refused: its own frames have no names, but .eh_frame still unwinds them
        // (crash_here, middle, outer, main) down into libc.
        let crashed = try crashedThread(report)
        let own = report.frames(of: crashed).filter { report.image(of: $0)?["name"] as? String == fixture.name }
        #expect(own.count >= 4, "frames: \(report.functions(of: crashed))")
        #expect(report.functions(of: crashed).contains("__libc_start_call_main"), "frames: \(report.functions(of: crashed))")
    }

    @Test("a corrupt .eh_frame_hdr table encoding: never an abort; .eh_frame is indexed instead and the whole stack found")
    func corruptEhFrameHdr() throws {
        let fixture = Fixture("corrupt_eh_frame_hdr")
        let bare = try run(Paths.fixture(fixture.name))
        let (directory, copy) = try stage(fixture.name)
        let supervised = try superviseHostile(copy, environment: quiet)
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path]) else { return }
        let frames = report.frames(of: try crashedThread(report))
        let functions = frames.map { $0["function"] as? String ?? "?" }
        // The table is refused before libunwind could abort on it, and .eh_frame is indexed instead: the
        // whole stack, as gdb finds it, with a soft error naming the damage.
        let expected = try crashStack(fixture)
        #expect(Array(functions.prefix(expected.count)) == expected, "frames: \(functions)")
        let errors = report.json["softErrors"] as? [[String: Any]] ?? []
        #expect(errors.contains { ($0["message"] as? String)?.contains(".eh_frame was indexed instead") == true }, "\(errors)")
    }

    @Test("a debuginfod server that accepts and never answers cannot hold crashwatch past its deadline")
    func debuginfodHang() throws {
        let fixture = Fixture("debuginfod_hang")
        let server = try SilentServer()
        defer { server.stop() }
        let bare = try run(Paths.fixture(fixture.name))
        let (directory, copy) = try stage(fixture.name)
        let cache = try TemporaryDirectory("cw-debuginfod-cache")
        // The worker waits on the server: it starts SCHED_BATCH and is moved to SCHED_OTHER halfway to the deadline
        // (or before, should a busy machine keep it waiting 50 ms on a run queue: then it is starved).
        let watch = WorkerPolicyWatch(marker: "DEBUGINFOD_URLS=http://127.0.0.1:\(server.port)")
        // A fresh client cache: a miss cached by an earlier run would spare the server the request.
        let supervised = try superviseHostile(copy, options: ["--debuginfod", "http://127.0.0.1:\(server.port)"],
                                              environment: ["DEBUGINFOD_URLS": "", "DEBUGINFOD_CACHE_PATH": cache.path])
        let policies = watch.result()
        // It starts SCHED_BATCH. On a loaded machine the supervisor may find it starved (50 ms on a run queue) and
        // promote it before the first sample: a first sample already SCHED_OTHER counts when its run-queue wait
        // shows the starvation.
        let starved: Int64 = 50_000_000
        #expect(policies.first.map { $0.policy == 3 || ($0.policy == 0 && $0.runQueueWait >= starved) } == true,
                "the worker did not start SCHED_BATCH (nor was it promoted as starved before the first sample): \(policies.prefix(3))")
        let promoted = policies.first { $0.policy == 0 }
        #expect(promoted != nil, "the starved worker was never moved to SCHED_OTHER: \(policies.map(\.policy).suffix(5))")
        if let first = policies.first, let promoted {
            // Halfway to the deadline (the worker starts a few ms after the crash; sampling every 5 ms), unless starved.
            let after = promoted.seconds - first.seconds
            #expect(after >= captureTimeout / 2 - 0.2 || promoted.runQueueWait >= starved,
                    "promoted after \(after) s, having waited \(promoted.runQueueWait) ns on a run queue")
            #expect(after <= captureTimeout / 2 + 0.5, "promoted after \(after) s")
        }
        // The request died with the worker (or its own timeout): no connection outlives crashwatch by more than the
        // grace period (the server accepts every 50 ms, so wait for the backlog too).
        let deadline = Date().addingTimeInterval(grace)
        while (server.accepted == 0 || server.stillOpen > 0) && Date() < deadline { usleep(20_000) }
        #expect(server.accepted >= 1, "crashwatch never asked the --debuginfod server for the stripped program's debug file")
        #expect(server.stillOpen == 0, "\(server.stillOpen) of \(server.accepted) connections to the server are still open")
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .either,
                                           markers: [directory.path]) else { return }
        let diagnostics = report.json["diagnostics"] as? [String: Any] ?? [:]
        if diagnostics["processing"] as? String == "minimal" {
            let errors = report.json["softErrors"] as? [[String: Any]] ?? []
            #expect(errors.contains { error in
                let text = "\(error["stage"] as? String ?? "") \(error["message"] as? String ?? "")".lowercased()
                return text.contains("debuginfod") || text.contains("deadline")
            }, "a minimal report must say debuginfod or the deadline stopped processing: \(errors)")
        }
        #expect(!report.frames(of: try crashedThread(report)).isEmpty)
    }

    @Test("memory under a userfaultfd nobody serves is not waited for: crashwatch reads /proc/PID/mem, which refuses the page at once",
          .timeLimit(.minutes(1)))
    func unservedUserfaultfd() throws {
        let fixture = Fixture("uffd_stall")
        let bare = try run(Paths.fixture(fixture.name))
        let (directory, copy) = try stage(fixture.name)
        let supervised = try superviseHostile(copy, environment: quiet)
        if !supervised.result.stderr.contains("uffd_stall: unserved userfaultfd mapping in place") {
            try Test.cancel("no userfaultfd here (needs root): \(supervised.result.stderr.prefix(300))")
        }
        // With process_vm_readv the tracer thread waited for ever on the image's first page.
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path]) else { return }
        let hold = report.json["holdDurationMs"] as? Double ?? .infinity
        #expect(hold < 500, "held \(hold) ms")
        #expect(!report.frames(of: try crashedThread(report)).isEmpty)
    }

    /// crashwatch's stderr is the program's too. A crashing program whose stream nobody reads (a pipe it
    /// filled, a stopped terminal, a stalled journald stream) made crashwatch's crash line wait, and with it
    /// the tracer thread, holding the crashed process (3.8 s of a 4 s stall, before the fix).
    @Test("a stderr nobody reads holds neither the crashed process nor crashwatch's exit: lines wait, or are given up after 2 s",
          arguments: [1, 5])
    func stderrNobodyReads(readerDelaySeconds: Int) throws {
        let directory = try TemporaryDirectory("cw-stderr")
        let spool = "\(directory.path)/spool"
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let script = """
            cd '\(directory.path)' && mkfifo fifo
            ( exec 3<fifo; sleep \(readerDelaySeconds); cat <&3 > stderr.txt ) &
            start=$(date +%s%N)
            '\(Paths.crashwatch)' run --spool '\(spool)' -- '\(Paths.fixture("stderr_fill"))' 1048576 2>fifo
            status=$?
            echo "$status $(( ($(date +%s%N) - start) / 1000000 ))" > result
            wait
            """
        // bash, not dash: dash reports the signal death with fd 2 still pointing at the stream nobody reads.
        let shell = try run("/bin/bash", ["-c", script], timeout: 60)
        #expect(shell.termination == .exited(0), "\(shell.stderr)")
        let result = try String(contentsOfFile: "\(directory.path)/result", encoding: .utf8).split(separator: " ")
        let status = Int(result.first ?? ""), milliseconds = Int(result.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
        #expect(status == 128 + Int(SIGSEGV), "crashwatch's status: \(result)")
        let names = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".json") }
        let name = try #require(names.first, "no report")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(spool)/\(name)"))) as? [String: Any])
        let hold = report["holdDurationMs"] as? Double ?? .infinity
        #expect(hold < 500, "held \(hold) ms while stderr was not read")
        let stderr = (try? String(contentsOfFile: "\(directory.path)/stderr.txt", encoding: .utf8)) ?? ""
        if readerDelaySeconds < 2 {
            // Read in time: every line arrives, in order.
            let crashed = stderr.range(of: "stderr_fill["), written = stderr.range(of: "crashwatch: report written to ")
            #expect(crashed != nil && written != nil && crashed!.lowerBound < written!.lowerBound, "stderr: \(stderr.suffix(500))")
        } else {
            // Never read while crashwatch lives: it ends 2 s after the program rather than wait.
            #expect(milliseconds < Int(readerDelaySeconds) * 1000 - 500, "crashwatch ran \(milliseconds) ms")
        }
    }

    /// With `extraMounts`, the FUSE mount comes after a mount table longer than crashwatch reads (1,600 mounts
    /// on a 3,000-character path: about 5 MiB of /proc/PID/mountinfo): what the part read does not list is
    /// not read either. (Before, the FUSE mount went unseen, and crashwatch and the process froze for good.)
    @Test("memory on a FUSE file system whose server never answers (an image, the command line, the environment) is not read: crashwatch ends in time",
          .timeLimit(.minutes(2)), arguments: [0, 1600])
    func fuseStall(extraMounts: Int) throws {
        let fixture = Fixture("fuse_stall")
        let environment = quiet.merging(["FUSE_STALL_MOUNTS": String(extraMounts)]) { $1 }
        // Its "stuck" thread keeps the process from dying until the server ends (6 s), bare or not.
        let bareStarted = Date()
        let bare = try run(Paths.fixture(fixture.name), environment: environment)
        let bareSeconds = Date().timeIntervalSince(bareStarted)
        let (directory, copy) = try stage(fixture.name)
        // Should crashwatch wait on the server after all (the bug this guards against: an uninterruptible sleep no
        // signal ends), the fixture's FUSE connections are aborted after a while so that the test fails, not hangs.
        let stop = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            guard stop.wait(timeout: .now() + 15) == .timedOut else { return }
            abortFuseConnections(named: "fuse.fuse_stall")
        }
        let supervised = try superviseHostile(copy, environment: environment)
        stop.signal()
        if !supervised.result.stderr.contains("fuse_stall: FUSE mapping in place") {
            try Test.cancel("no FUSE here (needs root and /dev/fuse): \(supervised.result.stderr.prefix(300))")
        }
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path], bareSeconds: bareSeconds) else { return }
        let messages = (report.json["softErrors"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(messages.contains("the image's memory not read: a file on a FUSE file system, whose server could stall the read for ever"),
                "\(messages)")
        #expect(messages.contains { $0.hasPrefix("the command line and environment were not read:") }, "\(messages)")
        let process = report.json["process"] as? [String: Any] ?? [:]
        #expect((process["commandLine"] as? [String]) == [])
        #expect((process["executable"] as? String)?.hasSuffix("/fuse_stall") == true)
        #expect(!report.frames(of: try crashedThread(report)).isEmpty)
        // The thread waiting on the server cannot stop: it is left out after a quarter of the capture's time
        // (0.5 s here), and the rest goes to processing, which completes (checked above).
        let stuck = try #require(report.threads.first { $0["name"] as? String == "stuck" }, "\(report.threads)")
        #expect(report.frames(of: stuck).isEmpty)
        #expect((stuck["unwindStopReason"] as? String)?.hasPrefix("the thread did not stop within a quarter") == true, "\(stuck)")
        let hold = report.json["holdDurationMs"] as? Double ?? .infinity
        #expect(hold >= 450 && hold < 1_000, "held \(hold) ms")
    }

    @Test("a symbol that demangles to tens of MiB, 200 frames deep: left mangled after 100 ms, said so, report complete")
    func demangleBomb() throws {
        let fixture = Fixture("demangle_bomb")
        let symbol = try #require(fixture.keys["CRASH-SYMBOL"])
        let bare = try run(Paths.fixture(fixture.name))
        let (directory, copy) = try stage(fixture.name)
        let supervised = try superviseHostile(copy, environment: quiet)
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path]) else { return }
        let frames = report.frames(of: try crashedThread(report))
        #expect(frames.first?["symbol"] as? String == symbol)
        #expect(frames.count >= 200, "\(frames.count) frames: the unwind did not go through the recursion")
        // Every name found is the raw symbol, whole, and so is its function: swift_demangle spends over a second
        // on it (65 MiB), so the demangling is given up after 100 ms of CPU time, once, and the report says so.
        // All 200 (and main's) unless the 2-second deadline came first — a loaded machine — which the report
        // then says; the bomb itself no longer costs the deadline (idle: the whole run ≈ 0.3 s, from 1.5 s).
        let named = frames.filter { $0["symbol"] is String }
        #expect(named.prefix(while: { $0["function"] as? String != "main" })
            .allSatisfy { $0["symbol"] as? String == symbol && $0["function"] as? String == symbol })
        let softErrors = report.json["softErrors"] as? [[String: Any]] ?? []
        let givenUp = softErrors.filter { ($0["message"] as? String)?.hasSuffix("left mangled: its demangling passed 100 ms of CPU time") == true }
        #expect(givenUp.count == 1 && givenUp.first?["stage"] as? String == "symbols", "\(softErrors)")
        #expect((givenUp.first?["message"] as? String)?.hasPrefix(symbol) == true)
        if !softErrors.contains(where: { $0["stage"] as? String == "deadline" }) {
            #expect(frames.filter { $0["symbol"] as? String == symbol }.count == 200, "\(frames.count) frames")
            #expect(frames.contains { $0["function"] as? String == "main" }, "the unwind went past the recursion")
        }
        for thread in report.threads {
            for frame in report.frames(of: thread) {
                let length = (frame["function"] as? String)?.utf8.count ?? 0
                #expect(length <= maxFunctionLength, "a \(length)-byte demangled name")
            }
        }
    }

    @Test("an ELF header garbled in memory (program header or section header fields, class) changes nothing",
          arguments: [[], ["class"]])
    func corruptElfHeader(_ arguments: [String]) throws {
        let fixture = Fixture("corrupt_elf_header")
        let bare = try run(Paths.fixture(fixture.name), arguments)
        let (directory, copy) = try stage(fixture.name)
        let supervised = try superviseHostile(copy, arguments, environment: quiet)
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path]) else { return }
        let functions = report.functions(of: try crashedThread(report))
        let expected = try crashStack(fixture)
        #expect(Array(functions.prefix(expected.count)) == expected, "frames: \(functions)")
        let main = try #require(report.images.first { $0["isMainExecutable"] as? Bool == true })
        #expect(main["buildID"] as? String == (try builtBuildID(fixture.name)), "\(main)")
    }

    @Test("a deleted -O2 executable without frame pointers gives the same full stack as when it is not deleted")
    func deletedExecutableO2() throws {
        let fixture = Fixture("deleted_exe_o2")
        let (bareDirectory, bareCopy) = try stage(fixture.name)
        let bare = try run(bareCopy, ["unlink"])
        withExtendedLifetime(bareDirectory) {}

        // The same binary twice: left in place (the control), then unlinking itself.
        let (controlDirectory, controlCopy) = try stage(fixture.name)
        let control = try superviseHostile(controlCopy, environment: quiet)
        let controlReport = expectContained(control, bare: bare, fixture: fixture, processing: .complete,
                                            markers: [controlDirectory.path])
        let (directory, copy) = try stage(fixture.name)
        let supervised = try superviseHostile(copy, ["unlink"], environment: quiet)
        #expect(!FileManager.default.fileExists(atPath: copy), "the fixture should have deleted itself")
        let deletedReport = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                            markers: [directory.path])
        guard let controlReport, let report = deletedReport else { return }

        let expected = try crashStack(fixture)
        let controlFunctions = controlReport.functions(of: try crashedThread(controlReport))
        #expect(Array(controlFunctions.prefix(expected.count)) == expected, "not deleted: \(controlFunctions)")
        // Frame for frame: the same function at the same offset in the same image.
        func frames(_ report: WrittenReport) throws -> [String] {
            report.frames(of: try crashedThread(report)).map { frame in
                "\(frame["function"] as? String ?? "?") \(report.image(of: frame)?["name"] as? String ?? "?")+\(frame["imageOffset"] as? String ?? "?")"
            }
        }
        #expect(try frames(report) == frames(controlReport))
        let main = try #require(report.images.first { $0["isMainExecutable"] as? Bool == true })
        #expect(main["deleted"] as? Bool == true, "\(main)")
        #expect(main["buildID"] as? String == (try builtBuildID(fixture.name)), "\(main)")
    }

    @Test("a library replaced by rename while mapped is unwound and named from what was mapped, not from the new file")
    func replacedLibrary() throws {
        let fixture = Fixture("replaced_library")
        let libraries = ["libreplaced.so", "libreplaced_other.so"]
        let (bareDirectory, bareCopy) = try stage(fixture.name, companions: libraries)
        let bare = try run(bareCopy, ["replace"])
        withExtendedLifetime(bareDirectory) {}
        let (directory, copy) = try stage(fixture.name, companions: libraries)
        let supervised = try superviseHostile(copy, ["replace"], environment: quiet)
        let library = "\(directory.path)/libreplaced.so"
        #expect(try Readelf.buildID(of: library) == (try builtBuildID("libreplaced_other.so")), "the fixture did not replace its library")
        guard let report = expectContained(supervised, bare: bare, fixture: fixture, processing: .complete,
                                           markers: [directory.path]) else { return }

        let crashed = try crashedThread(report)
        let functions = report.functions(of: crashed)
        let expected = try crashStack(fixture)
        #expect(Array(functions.prefix(expected.count)) == expected, "frames: \(functions)")
        #expect(!functions.contains("other_build_padding"), "names came from the replacing file: \(functions)")
        let image = try #require(report.frames(of: crashed).first.flatMap { report.image(of: $0) }, "the crashed frame has no image")
        #expect(image["path"] as? String == library, "\(image)")
        #expect(image["deleted"] as? Bool == true, "\(image)")
        #expect(image["buildID"] as? String == (try builtBuildID("libreplaced.so")), "the mapped build's id: \(image)")
    }
}
