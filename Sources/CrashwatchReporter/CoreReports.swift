// CoreReports.swift — the one way a core dump becomes a report, for `analyze-core` (here) and `core-handler`
// (CoreHandler): the core is read once as a stream, keeping only what a report needs, straight into the raw
// capture (StreamedCore: bounded memory, whatever the core's size), and processed by the confined worker
// `run` uses, whatever the source: the core's contents are what the crashed program controlled.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

public enum CoreReports {
    /// How long `analyze-core`'s processing may take.
    public static let analysisSeconds: Int64 = 60

    /// Where `analyze-core` writes a report: a file of the user's choosing, or the spool.
    public enum Destination: Sendable {
        case file(String)
        case spool(String)
        /// The caller's standard output: the bytes come back in `WrittenCoreReport.bytes` for the command to write.
        case standardOutput
    }

    /// The report of the core in `core` (`analyze-core`), written to `destination`: the core read as a stream
    /// like a piped one, keeping what a report needs whatever the core's size (mapping the file instead would
    /// hand the worker every dumped byte: the measurement is in the README, "System-wide"), then processed by
    /// the worker within `analysisSeconds`. Its time is the file's modification time (the kernel writes a core
    /// as the process dies). `executable` and `sysroot` as for `CoreContents.capture`. The report's path, and
    /// why it is not the worker's complete one (nil when it is).
    public static func analyze(_ core: OwnedDescriptor, executable: OwnedDescriptor?, sysroot: String?, options: CaptureOptions,
                               destination: Destination) throws(CoreReportFailure) -> WrittenCoreReport {
        let time = core.modificationNanoseconds() ?? Clock.realtimeNanoseconds()
        let deadline = Clock.monotonicNanoseconds() + analysisSeconds * 1_000_000_000
        let source: StreamedCore
        do {
            source = try StreamedCore(reading: InputStream(fd: core.fd), options: options, timeNanoseconds: time,
                                      deadlineNanoseconds: deadline, executable: executable, sysroot: sysroot)
        } catch {
            throw .notACore("\(error)")
        }
        var sighting: GroupSighting?
        let (bytes, failure) = process(source, imageFiles: executable.map { [$0] } ?? [], deadlineNanoseconds: deadline,
                                       crashwatchVersion: options.crashwatchVersion, sighting: { sighting = $0 })
        return try write(bytes, of: source.capture, to: destination, failure: failure, sighting: sighting)
    }

    /// Writes the report `bytes` of `capture` to `destination` (for `standardOutput`, hands them back): to the spool
    /// under its name, counted in its crash group (from `sighting` when given). `restricted`: the report of a
    /// process the kernel protects from its own user (`Spool.write(bytes:name:restricted:)`; a file is written
    /// 0600 then). `failure`: why the report is not the worker's complete one.
    static func write(_ bytes: [UInt8], of capture: RawCapture, to destination: Destination, failure: String?,
                      sighting: GroupSighting?, restricted: Bool = false) throws(CoreReportFailure) -> WrittenCoreReport {
        switch destination {
        case .standardOutput:
            return WrittenCoreReport(path: "-", failure: failure, bytes: bytes)
        case .file(let path):
            do {
                try FileSystem.writeAtomically(bytes, to: path, permissions: restricted ? 0o600 : 0o640)
            } catch {
                throw .cannotWrite("cannot write \(path): \(error)")
            }
            return WrittenCoreReport(path: path, failure: failure)
        case .spool(let path):
            let spool: Spool
            let written: String
            let name = fileName(capture)
            do throws(SpoolError) {
                spool = try Spool(path: path)
                written = try spool.write(bytes: bytes, name: name, restricted: restricted)
            } catch {
                throw .cannotWrite("\(error)")
            }
            return WrittenCoreReport(path: written, failure: failure,
                                     groupFailure: recordInGroups(spool, sighting: sighting, bytes: bytes, name: name))
        }
    }

    /// The minimal report of `capture` (registers and each thread's pc, no processing) within the report size
    /// limit, with `why` processing did not give the full one as a soft error when it failed.
    static func minimalReport(_ capture: RawCapture, crashwatchVersion: String, processingFailure why: String? = nil) throws -> [UInt8] {
        try ReportSizeLimit.encodeMinimal(capture, crashwatchVersion: crashwatchVersion,
                                          extraSoftErrors: why.map { [SoftError(stage: "processing", message: $0)] } ?? [],
                                          limit: capture.options.reportByteLimit)
    }

    /// The spool name of a capture's report.
    static func fileName(_ capture: RawCapture) -> ReportFileName {
        ReportFileName(timeNanoseconds: capture.timeNanoseconds, pid: capture.pid, executable: capture.process.executable,
                       id: UUID(uuidString: capture.reportID) ?? UUID())
    }

    /// The report of `source`, processed by the confined worker `run` uses (`WorkerLaunch`): its frames on the
    /// core's facts; when the worker fails or runs out of time, its report from before symbols or the minimal
    /// one, with a soft error — and `failure` says why. A core's own notes never pick the worker's identity: as
    /// root it processes as the dedicated user. `imageFiles` are the files `RawImage.descriptor` indexes.
    /// `sighting` receives the worker's final report as the group index counts it (not called for a minimal
    /// one), so the caller need not decode the bytes again.
    static func process(_ source: StreamedCore, imageFiles: [OwnedDescriptor], deadlineNanoseconds: Int64,
                        crashwatchVersion: String, sighting: ((GroupSighting) -> Void)? = nil) -> (report: [UInt8], failure: String?) {
        process(source.capture, file: { () throws(SystemError) in try source.captureFile() }, imageFiles: imageFiles,
                identity: WorkerLaunch.identity(for: nil), debuginfodURLs: [], cache: nil, deadlineNanoseconds: deadlineNanoseconds,
                crashwatchVersion: crashwatchVersion, sighting: sighting)
    }

    /// The report of `capture`, whose capture file `file` gives (complete and sealed), processed by a worker
    /// running as `identity` (`WorkerLaunch.identity`), as `process(_:imageFiles:…)` describes: every source
    /// processed in one place (a core file, a snapshot). `debuginfodURLs`: the servers the worker may ask; `cache`:
    /// the debug-file cache directory (`WorkerLaunch.debugCache`), nil for none.
    static func process(_ capture: RawCapture, file: () throws(SystemError) -> OwnedDescriptor, imageFiles: [OwnedDescriptor],
                        identity: WorkerIdentity?, debuginfodURLs: [String], cache: OwnedDescriptor?, deadlineNanoseconds: Int64, crashwatchVersion: String,
                        sighting: ((GroupSighting) -> Void)? = nil) -> (report: [UInt8], failure: String?) {
        let limit = capture.options.reportByteLimit
        func minimal(_ why: String) -> (report: [UInt8], failure: String?) {
            ((try? minimalReport(capture, crashwatchVersion: crashwatchVersion, processingFailure: why)) ?? [], why)
        }
        let launch: WorkerLaunch
        let pid: Int32
        do {
            let input = try file()
            launch = try WorkerLaunch(input: input, imageFiles: imageFiles, capture: capture, identity: identity,
                                      deadlineNanoseconds: deadlineNanoseconds, debuginfodURLs: debuginfodURLs,
                                      cache: cache, gate: nil)
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

    /// Counts the report `name` just written in its crash group (from the worker's report when there was one,
    /// else from its bytes); why it could not, or nil. A group index that cannot be updated never unwrites a report.
    static func recordInGroups(_ spool: Spool, sighting: GroupSighting?, bytes: [UInt8], name: ReportFileName) -> String? {
        do throws(SpoolError) {
            if let sighting { try spool.recordInGroups(sighting) } else { try spool.recordInGroups(reportBytes: bytes, name: name) }
            return nil
        } catch {
            return "\(error)"
        }
    }
}

/// A core's report as written: where, why it is not the worker's complete one (nil when it is), and why it
/// could not be counted in its crash group (nil when it was, or when written outside a spool).
public struct WrittenCoreReport: Sendable {
    public let path: String
    public let failure: String?
    public var groupFailure: String? = nil
    /// The report itself, when it was not written but handed back (`Destination.standardOutput`).
    public var bytes: [UInt8]? = nil
}
