// WorkerLaunch.swift — the one way a capture goes to a processing worker (`crashwatch __process`) and its
// report comes back, for every report source: `run`'s crashes, `analyze-core` and `core-handler`. Here are
// decided the worker's files, arguments, environment, limits and identity (README "Security model"), and
// what of its report is kept: the frames and names it found, on the supervisor's own capture
// (`WorkerReport.accept`); when it fails, its report from before symbols, else the capture's minimal report,
// with a soft error saying why.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSystem

/// One worker's launch: what it is handed and how it is confined.
public struct WorkerLaunch {
    /// The worker's command: crashwatch's own executable run as `crashwatch __process` (not for people to call).
    public static let commandName = "__process"

    /// Where the worker writes its full report, and its report without symbols before it looks them up.
    let output: OwnedDescriptor
    let checkpoint: OwnedDescriptor
    /// Its standard error: what it said joins the soft error when it fails.
    let errors: OwnedDescriptor
    let arguments: [String]
    /// fds 3, 4, …: the capture, `output`, `checkpoint`, the debug-file cache when given, the image files,
    /// the debuginfod client cache when servers are configured, and last the gate's end when there is one.
    let descriptors: [OwnedDescriptor]
    let environment: [String]
    var limits: WorkerLimits
    /// Who it runs as; nil: crashwatch's own user (an unprivileged crashwatch).
    let identity: WorkerIdentity?
    /// The largest report taken from it: the report cap plus slack for what is appended after capping.
    let reportBytes: Int

    /// The dedicated user workers run as under a root crashwatch, looked up once.
    public static let dedicatedUser: (uid: UInt32, gid: UInt32, name: String) = WorkerIdentity.dedicatedUser()

    /// The identity of the worker for a crash with these credentials (nil for a core file: its own notes
    /// are not believed, and it is processed as the dedicated user alone).
    static func identity(for credentials: ProcessCredentials?) -> WorkerIdentity? {
        WorkerIdentity.forCrash(of: credentials, dedicated: { (dedicatedUser.uid, dedicatedUser.gid) })
    }

    /// Whether a worker of `identity` may have the inflated debug-file cache: one that is crashwatch's own
    /// user, or the dedicated user alone (who owns the cache under root). A worker that reads as a crashed
    /// user is not given it: what one crash's worker leaves there, another crash's would read.
    static func mayUseDebugCache(_ identity: WorkerIdentity?) -> Bool {
        guard let identity else { return true }
        return identity.uid == identity.ownerUID && identity.gid == identity.ownerGID && identity.groups.isEmpty
    }

    /// The debug-file cache directory at `path` for a worker of `identity`, created (0700) on first use; nil when
    /// off (`path` nil), when the worker may not have it (`mayUseDebugCache`), or when it is not crashwatch's own.
    /// Under root it belongs to the dedicated user, whose workers (crashes of root's processes) fill it.
    public static func debugCache(_ path: String?, for identity: WorkerIdentity?) -> OwnedDescriptor? {
        guard let path, mayUseDebugCache(identity) else { return nil }
        let owner = identity.map { ($0.ownerUID, $0.ownerGID) } ?? (effectiveUserID, effectiveGroupID)
        if let directory = OwnedDescriptor.privateDirectory(path, owner: owner) { return directory }
        try? FileSystem.createDirectories(path, permissions: 0o700)
        return OwnedDescriptor.privateDirectory(path, owner: owner)
    }

    /// The worker for `capture` (the capture file `input`, sealed before the worker reads it; `imageFiles`
    /// as `RawImage.descriptor` indexes them). `cache`: the debug-file cache directory, when
    /// `mayUseDebugCache`; `gate`: the end the worker waits on until `input` is complete.
    init(input: OwnedDescriptor, imageFiles: [OwnedDescriptor], capture: RawCapture, identity: WorkerIdentity?,
         deadlineNanoseconds: Int64, debuginfodURLs: [String], cache: OwnedDescriptor?, gate: OwnedDescriptor?) throws(SystemError) {
        output = try MemoryFile.create(name: "crashwatch-report")
        checkpoint = try MemoryFile.create(name: "crashwatch-unwound")
        errors = try MemoryFile.create(name: "crashwatch-worker-stderr")
        self.identity = identity
        reportBytes = capture.options.reportByteLimit + (1 << 20)
        var descriptors = [input, output, checkpoint] + (cache.map { [$0] } ?? []) + imageFiles
        var arguments = [Self.commandName]
        if let identity { arguments += ["--identity", identity.argument] }
        arguments += ["--images", String(imageFiles.count), "--debug-cache", cache == nil ? "0" : "1"]
        var debuginfodCache: Int32?
        if !debuginfodURLs.isEmpty, let directory = Self.debuginfodCache(uid: identity?.uid ?? effectiveUserID,
                                                                                   gid: identity?.gid ?? effectiveGroupID) {
            debuginfodCache = Int32(3 + descriptors.count)
            descriptors.append(directory)
        }
        if let gate {
            arguments += ["--gate", String(3 + descriptors.count)]
            descriptors.append(gate)
        }
        self.arguments = arguments
        self.descriptors = descriptors
        let seconds = max((deadlineNanoseconds - Clock.monotonicNanoseconds()) / 1_000_000_000, 0)
        limits = WorkerLimits(addressSpaceBytes: 4 << 30, cpuSeconds: UInt64(seconds) + 1, fileSizeBytes: UInt64(reportBytes))
        if cache != nil { limits.fileSizeHardBytes = 1 << 30 }
        environment = Self.environment(debuginfodURLs: debuginfodURLs, deadline: deadlineNanoseconds,
                                                 debuginfodCache: debuginfodCache)
    }

    /// The report to keep once the worker is done: its full report when it exited well (`failure` nil), else
    /// its report from before symbols, else the capture's minimal report — with why as a soft error. Its
    /// facts are the capture's whatever the worker wrote. `deadlineExceeded`: it was killed at the deadline.
    /// `failure` in the result: why the report is not the worker's complete one (nil when it is).
    func finalReport(capture: RawCapture, table: ImageTable?, failure: String?, deadlineExceeded: Bool,
                     crashwatchVersion: String) -> (report: CrashReport, failure: String?) {
        var why = failure
        if why == nil {
            do throws(WorkerReportError) {
                return (try WorkerReport.accept(read(output), capture: capture, table: table, state: .complete,
                                                crashwatchVersion: crashwatchVersion), nil)
            } catch {
                why = error.description
            }
        }
        var text = why ?? "the processing worker failed"
        if let said = lastWords() { text += " (it said: \(said))" }
        let softError = SoftError(stage: "processing", message: text)
        if let unwound = try? WorkerReport.accept(read(checkpoint), capture: capture, table: table, state: .unwound,
                                                  crashwatchVersion: crashwatchVersion, extraSoftErrors: [softError],
                                                  deadlineExceeded: deadlineExceeded) {
            return (unwound, text)
        }
        var minimal = ReportBuilder.minimal(capture, crashwatchVersion: crashwatchVersion, extraSoftErrors: [softError], table: table)
        minimal.diagnostics.deadlineExceeded = minimal.diagnostics.deadlineExceeded || deadlineExceeded
        return (minimal, text)
    }

    /// The whole of a file the worker wrote, refused past `reportBytes`.
    private func read(_ file: OwnedDescriptor) throws(WorkerReportError) -> [UInt8] {
        guard let size = file.size(), size > 0 else { throw WorkerReportError("the processing worker wrote no report") }
        guard size <= Int64(reportBytes) else {
            throw WorkerReportError("the processing worker's report is \(size) bytes, over the limit (\(reportBytes))")
        }
        guard let bytes = try? file.read(at: 0, count: Int(size)), bytes.count == Int(size) else {
            throw WorkerReportError("the processing worker's report could not be read back")
        }
        return bytes
    }

    /// The end of what the worker wrote to its standard error (its last 1 KiB, on one line), if anything.
    func lastWords() -> String? {
        guard let size = errors.size(), size > 0 else { return nil }
        let count = Int(min(size, 1024))
        guard let bytes = try? errors.read(at: UInt64(size) - UInt64(count), count: count) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .filter { !$0.allSatisfy(\.isWhitespace) }.joined(separator: " / ")
        return text.isEmpty ? nil : (size > 1024 ? "…" : "") + text
    }

    /// Why a worker that ended so did not leave a complete report; nil when it exited well.
    static func failure(of outcome: WorkerOutcome) -> String? {
        switch outcome {
        case .exited(0): nil
        case .exited(let code):
            "the processing worker exited with status \(code)\(code == 126 ? " (its confinement could not be set up)" : "")"
        case .killed(let signal) where signal == .sys:
            "the processing worker died of SIGSYS: a seccomp filter refuses a system call it needs (systemd: allow `mincore`, which libunwind calls, in SystemCallFilter=)"
        case .killed(let signal): "the processing worker died of \(signal.name)"
        case .deadlinePassed: "the processing worker did not finish before the capture deadline and was killed"
        case .notStarted(let reason): "the processing worker could not start: \(reason)"
        case .skipped: "too many crashes were being processed at once; this one was not"
        }
    }
}

extension WorkerLaunch {
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
}
