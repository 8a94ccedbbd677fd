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
import CrashwatchReporter
import CrashwatchSystem

enum ProcessCommand {
    static let name = WorkerLaunch.commandName

    /// The largest capture file a worker maps.
    static let captureByteLimit = 1 << 32

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
            var processor = try CaptureProcessor(source: file, passedFiles: passed)
            // Symbols load on a second thread while the stacks are unwound on this one.
            if let helper = HelperThread.start() { processor.startWarmingSymbols(on: helper) }
            var builder = ReportBuilder(capture: capture, processor: processor)
            builder.appAnnotations = AnnotationDecoder.decode(file)
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
