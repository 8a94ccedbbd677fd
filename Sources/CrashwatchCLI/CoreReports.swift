// CoreReports.swift — the one way a core dump becomes a report, for `analyze-core` and `core-handler`: the core
// is read once as a stream, keeping only what a report needs (CoreStream: bounded memory, whatever the
// core's size), and processed by the confined worker `run` uses, whatever the source: the core's contents
// are what the crashed program controlled.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

enum CoreReports {
    /// The core on `input` as a capture source, its memory kept within `options.captureBytes`.
    /// `executable`, `sysroot` and `process` as for `CoreFile`.
    static func source(_ input: InputStream, options: CaptureOptions, timeNanoseconds: Int64, deadlineNanoseconds: Int64,
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
    static func minimalReport(_ capture: RawCapture, processingFailure why: String? = nil) throws -> [UInt8] {
        try ReportSizeLimit.encodeMinimal(capture, crashwatchVersion: CLI.version,
                                          extraSoftErrors: why.map { [SoftError(stage: "processing", message: $0)] } ?? [],
                                          limit: capture.options.reportByteLimit)
    }

    /// The spool name of a capture's report.
    static func fileName(_ capture: RawCapture) -> ReportFileName {
        ReportFileName(timeNanoseconds: capture.timeNanoseconds, pid: capture.pid, executable: capture.process.executable,
                       id: UUID(uuidString: capture.reportID) ?? UUID())
    }

    /// The full report of `source`, processed by the confined worker (`crashwatch __process`: the crashed
    /// user's identity when crashwatch is root, RLIMIT_AS and RLIMIT_CPU, killed at the deadline);
    /// `imageFiles` are the files `RawImage.descriptor` indexes. The reason when it failed.
    static func process(_ source: CoreFile, imageFiles: [OwnedDescriptor], deadlineNanoseconds: Int64) -> Result<[UInt8], CoreFileError> {
        let capture = source.capture
        do {
            let file = try MemoryFile.create(name: "crashwatch-capture-core")
            var writer = RawCaptureWriter(file: file)
            for region in source.regions { try writer.appendRegion(address: region.address, bytes: region.bytes) }
            try writer.finish(capture)
            let output = try MemoryFile.create(name: "crashwatch-report")
            let checkpoint = try MemoryFile.create(name: "crashwatch-unwound")
            let seconds = max((deadlineNanoseconds - Clock.monotonicNanoseconds()) / 1_000_000_000, 1)
            var limits = WorkerLimits(addressSpaceBytes: 4 << 30, cpuSeconds: UInt64(seconds) + 1,
                                      fileSizeBytes: UInt64(capture.options.reportByteLimit) * 2, identity: nil)
            if effectiveUserID == 0 && capture.process.uid != 0 {
                limits.identity = (capture.process.uid, capture.process.gid, [capture.process.gid])
            }
            let pid = try spawnWorker(arguments: [ProcessCommand.name, "--images", String(imageFiles.count), "--debug-cache", "0"],
                                      environment: ProcessCommand.environment(debuginfodURLs: [], deadline: deadlineNanoseconds,
                                                                              uid: limits.identity?.uid ?? effectiveUserID),
                                      descriptors: [file.fd, output.fd, checkpoint.fd] + imageFiles.map(\.fd), limits: limits)
            guard case .exited(0)? = waitForChild(pid, deadlineNanoseconds: deadlineNanoseconds) else {
                return .failure(CoreFileError("the processing worker failed or ran out of time"))
            }
            let bytes = try output.read(at: 0, count: Int(output.size() ?? 0))
            _ = try CrashReport.decode(bytes)
            return .success(bytes)
        } catch {
            return .failure(CoreFileError("processing: \(error)"))
        }
    }
}
