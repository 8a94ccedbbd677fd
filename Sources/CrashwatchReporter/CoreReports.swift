// CoreReports.swift — the one way a core dump becomes a report, for `analyze-core` and `core-handler`: the core
// is read once as a stream, keeping only what a report needs (CoreStream: bounded memory, whatever the
// core's size), and processed by the confined worker `run` uses, whatever the source: the core's contents
// are what the crashed program controlled.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

public enum CoreReports {
    /// The core on `input` as a capture source, its memory kept within `options.captureBytes`.
    /// `executable`, `sysroot` and `process` as for `CoreFile`.
    public static func source(_ input: InputStream, options: CaptureOptions, timeNanoseconds: Int64, deadlineNanoseconds: Int64,
                       executable: OwnedDescriptor? = nil, sysroot: String? = nil, process: ProcessRecord? = nil) throws -> CoreFile {
        let compact = try CoreStream.compact(input, stackBytesPerThread: options.stackBytesPerThread, limit: options.captureBytes)
        // The compact core: its headers, then notes and memory within the limit (the notes' own headers aside).
        let core = try CoreFile(compact.core, limit: options.captureBytes + CoreStream.headerBytes + (1 << 20), timeNanoseconds: timeNanoseconds,
                                options: options, deadlineNanoseconds: deadlineNanoseconds, executable: executable,
                                sysroot: sysroot, process: process)
        core.capture.softErrors = compact.problems.map { SoftError(stage: "core", message: $0) } + core.capture.softErrors
        return core
    }

    /// The minimal report of `capture` (registers and each thread's pc, no processing) within the report size
    /// limit, with `why` processing did not give the full one as a soft error when it failed.
    public static func minimalReport(_ capture: RawCapture, crashwatchVersion: String, processingFailure why: String? = nil) throws -> [UInt8] {
        try ReportSizeLimit.encodeMinimal(capture, crashwatchVersion: crashwatchVersion,
                                          extraSoftErrors: why.map { [SoftError(stage: "processing", message: $0)] } ?? [],
                                          limit: capture.options.reportByteLimit)
    }

    /// The spool name of a capture's report.
    public static func fileName(_ capture: RawCapture) -> ReportFileName {
        ReportFileName(timeNanoseconds: capture.timeNanoseconds, pid: capture.pid, executable: capture.process.executable,
                       id: UUID(uuidString: capture.reportID) ?? UUID())
    }

    /// The report of `source`, processed by the confined worker `run` uses (`WorkerLaunch`): its frames on the
    /// core's facts; when the worker fails or runs out of time, its report from before symbols or the minimal
    /// one, with a soft error — and `failure` says why. A core's own notes never pick the worker's identity: as
    /// root it processes as the dedicated user. `imageFiles` are the files `RawImage.descriptor` indexes.
    /// `sighting` receives the worker's final report as the group index counts it (not called for a minimal
    /// one), so the caller need not decode the bytes again.
    public static func process(_ source: CoreFile, imageFiles: [OwnedDescriptor], deadlineNanoseconds: Int64,
                               crashwatchVersion: String, sighting: ((GroupSighting) -> Void)? = nil) -> (report: [UInt8], failure: String?) {
        let capture = source.capture
        let limit = capture.options.reportByteLimit
        func minimal(_ why: String) -> (report: [UInt8], failure: String?) {
            ((try? minimalReport(capture, crashwatchVersion: crashwatchVersion, processingFailure: why)) ?? [], why)
        }
        let launch: WorkerLaunch
        let pid: Int32
        do {
            let file = try MemoryFile.create(name: "crashwatch-capture-core")
            var writer = RawCaptureWriter(file: file)
            for region in source.regions { try writer.appendRegion(address: region.address, bytes: region.bytes) }
            try writer.finish(capture)
            try MemoryFile.seal(file)
            let identity = WorkerLaunch.identity(for: nil)
            launch = try WorkerLaunch(input: file, imageFiles: imageFiles, capture: capture, identity: identity,
                                      deadlineNanoseconds: deadlineNanoseconds, debuginfodURLs: [], cache: nil, gate: nil)
            pid = try spawnWorker(arguments: launch.arguments, environment: launch.environment, descriptors: launch.descriptors.map(\.fd),
                                  standardError: launch.errors.fd, limits: launch.limits)
        } catch {
            return minimal("the processing worker could not start: \(error)")
        }
        let outcome: WorkerOutcome
        switch waitForChild(pid, deadlineNanoseconds: deadlineNanoseconds) {
        case .exited(let code)?: outcome = .exited(code)
        case .signaled(let signal, _)?: outcome = .killed(Signal(signal))
        case nil: outcome = .deadlinePassed
        default: outcome = .exited(-1)
        }
        let (report, failure) = launch.finalReport(capture: capture, table: nil, failure: WorkerLaunch.failure(of: outcome),
                                                   deadlineExceeded: outcome == .deadlinePassed, crashwatchVersion: crashwatchVersion)
        guard let bytes = try? ReportSizeLimit.encode(report, limit: limit), bytes.count <= limit else {
            return minimal((failure.map { $0 + "; " } ?? "") + "the report could not be encoded within \(limit) bytes")
        }
        sighting?(GroupSighting(report, reportName: fileName(capture).text))
        return (bytes, failure)
    }
}
