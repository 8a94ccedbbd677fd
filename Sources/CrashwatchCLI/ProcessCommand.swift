// ProcessCommand.swift — `crashwatch __process`, the processing worker `run` starts for each crash (not
// for people to call): reads the raw capture from fd 3, unwinds and symbolizes it, and writes the full
// report to fd 4 — and, once every thread is unwound and before symbols are looked up, that report
// without symbols to fd 5, which `run` keeps should the worker not finish. With `--debug-cache 1`, fd 6
// is the inflated debug-file cache directory. Image files the supervisor opened through /proc arrive
// as the next fds. With `--gate N`, fd N is a `WorkerGate`: `run` finishes writing fd 3 after it has let
// the crashed process go, while the worker starts, and the worker reads fd 3 only once the gate opens. It runs
// confined (see `spawnWorker`) and is killed at the capture deadline; `run` keeps the minimal report
// when it fails.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchModel
import CrashwatchSystem

enum ProcessCommand {
    static let name = "__process"

    /// The largest capture file a worker maps.
    static let captureByteLimit = 1 << 32

    /// The worker's whole environment: nothing of crashwatch's or the crashed program's beyond what
    /// processing needs. debuginfod only with servers crashwatch was told to use, and a client cache of the
    /// worker's own, passed as descriptor `debuginfodCache` (`debuginfodCache(uid:gid:)`; without one, no
    /// server is asked): reached through /proc/self/fd, it needs no path the worker's user could traverse
    /// or another user could swap.
    static func environment(debuginfodURLs: [String], deadline: Int64, debuginfodCache: Int32?) -> [String] {
        var environment = ["PATH=/usr/bin:/bin", "SWIFT_BACKTRACE=enable=no"]
        if !debuginfodURLs.isEmpty, let debuginfodCache {
            let seconds = max((deadline - Clock.monotonicNanoseconds()) / 2_000_000_000, 1)
            environment.append("DEBUGINFOD_URLS=\(debuginfodURLs.joined(separator: " "))")
            environment.append("DEBUGINFOD_TIMEOUT=\(min(seconds, 30))")
            environment.append("DEBUGINFOD_CACHE_PATH=/proc/self/fd/\(debuginfodCache)")
        }
        return environment
    }

    /// The debuginfod client cache of a worker reading files as `uid`: `<base>/<uid>`, owned by that user and
    /// closed to others (made by crashwatch when missing), under `$DEBUGINFOD_CACHE_PATH` of crashwatch's own
    /// environment, else /var/cache/crashwatch/debuginfod as root, else the user's cache directory — one per
    /// user, so a worker never reads what a worker of another user's crash left there. nil when none can be had.
    static func debuginfodCache(uid: UInt32, gid: UInt32) -> OwnedDescriptor? {
        let environment = ProcessEnvironment.current
        let base: String
        if let configured = environment["DEBUGINFOD_CACHE_PATH"], configured.hasPrefix("/") {
            base = configured
        } else if SelfProcess.isRoot {
            base = "/var/cache/crashwatch/debuginfod"
        } else if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            base = cache + "/crashwatch/debuginfod"
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = home + "/.cache/crashwatch/debuginfod"
        } else {
            return nil
        }
        let path = base + "/\(uid)"
        try? FileSystem.createDirectories(path, permissions: 0o700)
        return OwnedDescriptor.privateDirectory(path, owner: (uid, gid))
    }

    static func main(_ arguments: [String]) -> Int32 {
        var images = 0
        var debugCache = false
        var holdNanoseconds: Int64 = 0
        var gate: Int32?
        var identity: WorkerIdentity?
        var index = 0
        while index + 1 < arguments.count {
            switch arguments[index] {
            case "--identity":
                guard let parsed = WorkerIdentity(argument: arguments[index + 1]) else {
                    StandardStream.err("crashwatch: processing: bad --identity '\(arguments[index + 1])'\n")
                    return ExitCode.confinementFailed
                }
                identity = parsed
            case "--images": images = max(Int(arguments[index + 1]) ?? 0, 0)
            case "--hold-ns": holdNanoseconds = Int64(arguments[index + 1]) ?? 0
            case "--debug-cache": debugCache = arguments[index + 1] == "1"
            case "--gate": gate = Int32(arguments[index + 1]).flatMap { $0 >= 3 ? $0 : nil }
            default: break
            }
            index += 2
        }
        // Its identity before anything else, before a byte of input is read (README "Security model"); a
        // worker never processes as root.
        do {
            try identity?.assume()
        } catch {
            StandardStream.err("crashwatch: processing: \(error)\n")
            return ExitCode.confinementFailed
        }
        guard effectiveUserID != 0 else {
            StandardStream.err("crashwatch: processing: refusing to process as root (no --identity)\n")
            return ExitCode.confinementFailed
        }
        if let gate {
            let gateEnd = OwnedDescriptor(adopting: gate)
            guard WorkerGate.wait(fd: gateEnd.fd) else { return ExitCode.systemError }
        }
        // Processing is CPU-bound for tens of milliseconds: every quarter millisecond, the CPU goes to anything
        // waiting for it (the processes crashwatch traces). Not while it may wait on a debuginfod server.
        if (ProcessEnvironment.current["DEBUGINFOD_URLS"] ?? "").isEmpty { yieldCPU(everyMicroseconds: 250) }
        let input = OwnedDescriptor(adopting: 3)
        let output = OwnedDescriptor(adopting: 4)
        let checkpoint = OwnedDescriptor(adopting: 5)
        if debugCache { Symbolizer.useDebugCache(6) }
        let firstImage: Int32 = debugCache ? 7 : 6
        let passed = (0..<min(images, 1024)).map { OwnedDescriptor(adopting: firstImage + Int32($0)) }
        do {
            let file = try RawCaptureFile(input, limit: captureByteLimit)
            var capture = file.capture
            capture.holdDurationMs = Double(holdNanoseconds / 1_000) / 1_000
            let processor = try CaptureProcessor(source: file, passedFiles: passed)
            var builder = ReportBuilder(capture: capture, processor: processor)
            var report = builder.build(unwound: { interim in
                var interim = interim
                interim.crashwatchVersion = CLI.version
                if let bytes = try? ReportSizeLimit.encode(interim, limit: capture.options.reportByteLimit) {
                    try? checkpoint.write(bytes)
                }
            })
            report.crashwatchVersion = CLI.version
            let bytes = try ReportSizeLimit.encode(report, limit: capture.options.reportByteLimit)
            try output.write(bytes)
            // The report is out; inflate the compressed debug files it used for the next crash's sake.
            Symbolizer.fillDebugCache()
            return ExitCode.success
        } catch {
            StandardStream.err("crashwatch: processing failed: \(error)\n")
            return ExitCode.systemError
        }
    }
}
