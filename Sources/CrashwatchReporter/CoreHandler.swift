// CoreHandler.swift — what `crashwatch core-handler` does with the core the kernel pipes to it, in order: read
// the core once within its reading deadline (StreamedCore: what a report needs goes into the raw capture as
// it streams past) while `CoreKeeper` keeps a compressed copy of it; /proc/PID, still there while the kernel
// dumps, gives the process record; the minimal report made durable; the confined worker (`CoreReports.process`);
// the full report over the minimal one; retention. The CLI parses the arguments and chooses the exit status.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

/// A core the kernel dumps into `core-handler`, and what its options allow.
public struct DumpedCore: Sendable {
    /// The crashed process and thread (`%P %i`) and the crash's time (`%t`, whole seconds).
    public var pid: Int32
    public var tid: Int32
    public var timeNanoseconds: Int64
    /// The most bytes kept of the core's notes and memory (`--max-memory`).
    public var memoryLimit = 64 << 20
    /// Where the core itself is kept (`--keep-core`), nil when it is not; its compressed cap and how many are kept.
    public var keepDirectory: String?
    public var keptCoreBytes: UInt64 = 1 << 30
    public var keptCores = 10
    /// How long reading and processing may take (`--capture-timeout`); reading gets `CoreHandler.readingShare` of it.
    public var timeoutSeconds: Double
    public var spool: String
    public var retention: RetentionPolicy
    public var crashwatchVersion: String

    public init(pid: Int32, tid: Int32, timeNanoseconds: Int64, timeoutSeconds: Double, spool: String, retention: RetentionPolicy,
                crashwatchVersion: String) {
        self.pid = pid
        self.tid = tid
        self.timeNanoseconds = timeNanoseconds
        self.timeoutSeconds = timeoutSeconds
        self.spool = spool
        self.retention = retention
        self.crashwatchVersion = crashwatchVersion
    }
}

/// Why a core gave no report: the input is no core dump, or the report could not be written.
public enum CoreReportFailure: Error, CustomStringConvertible {
    case notACore(String)
    case cannotWrite(String)

    public var description: String {
        switch self {
        case .notACore(let message), .cannotWrite(let message): message
        }
    }
}

/// The report of a core piped in by the kernel (`core-handler`).
public enum CoreHandler {
    /// The part of `--capture-timeout` reading the core may take: processing gets the rest.
    public static let readingShare = 0.7

    /// Reads the core on `input` and writes its report to the spool: the minimal one first, then the worker's
    /// over it; prunes the spool. The report's path, and why it is not the worker's complete one (nil when it is).
    public static func handle(_ input: InputStream, _ core: DumpedCore) throws(CoreReportFailure) -> WrittenCoreReport {
        let started = Clock.monotonicNanoseconds()
        let deadline = started + Int64(core.timeoutSeconds * 1e9)
        input.deadlineNanoseconds = started + Int64(core.timeoutSeconds * readingShare * 1e9)
        let (source, name) = try read(input, core, deadline: deadline)
        return try writeReports(source, name: name, core, deadline: deadline)
    }

    /// Reads the core from `input` into a capture source and its report's name, keeping the core itself when
    /// asked; what the reading deadline or the keeper cost is a soft error of the capture.
    private static func read(_ input: InputStream, _ core: DumpedCore, deadline: Int64) throws(CoreReportFailure)
        -> (StreamedCore, ReportFileName)
    {
        var options = CaptureOptions(crashwatchVersion: core.crashwatchVersion)
        options.captureBytes = core.memoryLimit
        var keeper: CoreKeeper?
        var keeperFailure: String?
        if let directory = core.keepDirectory {
            do { keeper = try CoreKeeper(directory: directory, limit: core.keptCoreBytes, count: core.keptCores, pid: core.pid) } catch {
                keeperFailure = "--keep-core \(directory): \(error); the core was not kept"
            }
            keeper?.attach(to: input)
        }
        let source: StreamedCore
        do {
            let (pid, tid) = (core.pid, core.tid)
            let live = ProcFS.exists(pid) ? LiveCapture.processRecord(pid: pid, through: ProcFS.exists(tid) ? tid : pid, options: options) : nil
            source = try StreamedCore(reading: input, options: options, timeNanoseconds: core.timeNanoseconds,
                                      deadlineNanoseconds: deadline, process: live)
        } catch {
            keeper?.discard()
            throw .notACore("pid \(core.pid): \(error)")
        }
        let name = CoreReports.fileName(source.capture)
        // The rest of the core through the keeper, before the reports say where it is.
        if let keeper {
            // Once the keeper gave up (over its cap), the rest need not be read: the kernel stops dumping.
            do { try input.drain(while: { keeper.failure == nil }) } catch { keeper.abandon("reading the rest of the core: \(error)") }
            if input.stoppedAtDeadline { keeper.abandon("the core was still streaming at the reading deadline") }
            switch keeper.finish(name: name) {
            case .success(let path): source.capture.coreFile = path
            case .failure(let error): keeperFailure = error.description
            }
        }
        if input.stoppedAtDeadline {
            let tenths = Int((core.timeoutSeconds * readingShare * 10).rounded())
            source.capture.softErrors.append(SoftError(stage: "deadline", message:
                "the core was read no further than byte \(input.position): \(tenths / 10).\(tenths % 10) s (70% of --capture-timeout) had passed; what it held after that is not in the report"))
        }
        if let keeperFailure { source.capture.softErrors.append(SoftError(stage: "core", message: keeperFailure)) }
        return (source, name)
    }

    /// Writes the minimal report, then the worker's full one over it, and prunes the spool.
    private static func writeReports(_ source: StreamedCore, name: ReportFileName, _ core: DumpedCore, deadline: Int64)
        throws(CoreReportFailure) -> WrittenCoreReport
    {
        // The minimal report first: whatever happens to processing, this crash is on disk.
        let minimal: [UInt8]
        do { minimal = try CoreReports.minimalReport(source.capture, crashwatchVersion: core.crashwatchVersion) } catch {
            throw .cannotWrite("encode the minimal report: \(error)")
        }
        let spool: Spool
        do throws(SpoolError) {
            spool = try Spool(path: core.spool)
            _ = try spool.write(bytes: minimal, name: name)
        } catch {
            throw .cannotWrite("\(error)")
        }
        // Processing reads what the crashed program controlled: in the confined worker `run` uses, as the
        // dedicated worker user (the core's own notes never choose it), with limits and a deadline.
        var sighting: GroupSighting?
        let (full, failure) = CoreReports.process(source, imageFiles: [], deadlineNanoseconds: deadline,
                                                  crashwatchVersion: core.crashwatchVersion, sighting: { sighting = $0 })
        do throws(SpoolError) { _ = try spool.write(bytes: full, name: name) } catch {
            throw .cannotWrite("\(error)")
        }
        let groupFailure = CoreReports.recordInGroups(spool, sighting: sighting, bytes: full, name: name)
        _ = try? spool.prune(policy: core.retention, protecting: name)
        return WrittenCoreReport(path: spool.path(of: name), failure: failure, groupFailure: groupFailure)
    }
}
