// Reporter.swift — the driver of a live crash from the supervisor's stop to the spool: at the stop, the raw
// capture and the minimal report (in the spool before the process is released, flushed right after); after the
// release, the capture handed to a confined worker (`WorkerLaunch`); when the worker ends, the final report — the
// worker's frames on the capture's facts — replacing the minimal one, retention, and the journal entry. The
// supervisor calls it through `SupervisorObserver`; `crashwatch run` makes one and prints nothing else of a crash.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSupervisor
import CrashwatchSystem
import Dispatch
import FoundationEssentials
import Synchronization

/// What the reporter was asked to do: where reports go and how crashes are captured and processed.
public struct ReporterConfiguration: Sendable {
    public var capture: CaptureOptions
    public var spool: String
    public var retention: RetentionPolicy
    /// Where processing keeps inflated debug files; nil: no cache.
    public var debugCache: String?
    /// The version recorded in reports.
    public var crashwatchVersion: String

    public init(capture: CaptureOptions, spool: String, retention: RetentionPolicy, debugCache: String?, crashwatchVersion: String) {
        self.capture = capture
        self.spool = spool
        self.retention = retention
        self.debugCache = debugCache
        self.crashwatchVersion = crashwatchVersion
    }
}

/// Captures each crash: the raw capture and a minimal report while the process is held, then the full
/// report from a confined worker; prints what happened to stderr.
public final class CrashReporter: SupervisorObserver, @unchecked Sendable {
    /// Final reports are checked and written on a background thread (`BackgroundWork`), off the tracer thread,
    /// which must keep answering every traced process's stops; so is a worker's input, once the process is
    /// released. Only the minimal report is written on the tracer thread: it must be in the spool before the
    /// crashed process is released (its flushes wait for the release, on this thread).
    private let writer = BackgroundWork()
    /// crashwatch's stderr lines once the command runs. The stream may be the program's too, and a write to
    /// it can wait for ever (a pipe it filled that nobody reads, a stopped terminal): neither the tracer
    /// thread, which may be holding a crashed process, nor the writer waits on it.
    public let lines = LineOutput(fd: 2)
    /// Journal entries queued on `writer` and not sent yet.
    private let journalEntries = DispatchGroup()
    private let configuration: ReporterConfiguration
    /// The hang report taken of each process, by pid, so that the crash that ends the hang links to it
    /// (tracer thread only).
    private var hangReports: [Int32: String] = [:]
    /// Each memory cgroup's OOM-kill count when last read (tracer thread only): a SIGKILL death after
    /// which it rose was the OOM killer's.
    private var oomKillCounts: [String: UInt64] = [:]
    /// The /proc reads started for the crash whose threads are being stopped (tracer thread only).
    private var readAhead: CaptureReadAhead?
    /// Why each process whose threads are being captured at their SIGKILL exit was killed (tracer thread only).
    private var abnormalExits: [Int32: ExitRecord] = [:]

    public init(configuration: ReporterConfiguration) {
        self.configuration = configuration
        // The code and constants loading and start-up touched leave the resident set; the crash path is warmed
        // up next (and on the helper thread once the command runs), for its first-use costs.
        SelfProcess.releaseStartupPages()
        // A crash's capture, reports and journal entry take megabytes for a moment (tens for a thousand
        // threads); a supervisor that lives on after it (a forking server's worker crashed) gives them back.
        SelfProcess.returnFreedMemoryPromptly()
        LiveCapture.prepare()
        // Under root, the workers' dedicated user is looked up once (getpwnam: 0.1–0.15 ms): now, not in the first
        // crash's hold.
        _ = WorkerLaunch.identity(for: nil)
        if let count = CgroupMemory.oomKills(of: SelfProcess.pid) { oomKillCounts[count.cgroup] = count.kills }
    }

    public func supervisorStarted() {
        // Not before: a thread started then would un-ignore signal 33 for the command (TransparencyTests).
        LiveCapture.startHelper()
        writer.start()
        lines.start()
        // Once the helper's warm-up is done (queued before this), the code pages the warm-up touched leave the
        // resident set too: what the warm-up made — type metadata, conformances, the helper's stack — is
        // anonymous memory and stays, and the code faults back in from the page cache (kept there by the
        // warm-up) when a crash runs it. Idle RSS 10.7–11.3 MB → 4.4–5.7 MB; the first crash's hold pays the
        // minor faults, about 0.1–0.25 ms (BENCHMARKS.md "Memory").
        _ = HelperComputation(on: LiveCapture.helper) { SelfProcess.releaseStartupPages() }
    }

    public func supervisorStopping(_ crash: DetectedCrash) {
        readAhead = LiveCapture.readAhead(crash, options: configuration.capture)
    }

    public func supervisorWarning(_ line: String) {
        lines.write(line + "\n")
    }

    public func supervisorNotice(_ line: String) {
        lines.write(line + "\n")
        JournalRecord.sendNotice(line)
    }

    /// What the reporter keeps for a job: the capture, where its report goes, and the worker's files.
    private final class JobState: @unchecked Sendable {
        let capture: RawCapture
        let table: ImageTable
        let name: ReportFileName
        let launch: WorkerLaunch
        /// The line printed when the minimal report could not be written: not printed twice.
        let minimalFailure: String?
        /// The minimal report, which readers leave be until the final report replaces it.
        let pending: PendingReport?
        /// Why the worker's input could not be finished (then the worker ends without reading it).
        let inputFailure = Mutex<String?>(nil)

        init(capture: RawCapture, table: ImageTable, name: ReportFileName, launch: WorkerLaunch, minimalFailure: String?,
             pending: PendingReport?) {
            self.capture = capture
            self.table = table
            self.name = name
            self.launch = launch
            self.minimalFailure = minimalFailure
            self.pending = pending
        }
    }

    public func supervisorDetected(_ crash: DetectedCrash, stopped: StoppedProcess) -> AfterRelease? {
        // A SIGKILL death seen at the exit stops had its line from `supervisorSawAbnormalExit`.
        let exit = crash.seenAtExit ? abnormalExits.removeValue(forKey: crash.pid) : nil
        if exit == nil {
            let line = crash.isSnapshot ? CrashLine.snapshot(crash) : crash.hang.map { CrashLine.hung(crash, $0) } ?? CrashLine.crashed(crash)
            lines.write(line + "\n")
        }
        let deadline = stopped.deadlineNanoseconds
        let inProgress: CaptureInProgress
        // A process that dies at the release keeps its threads, and their names, until they are reaped: they are
        // named after it. A snapshot's or a hang's threads run on: they are named while held.
        let namesAfterRelease = !crash.isLiveLook
        do {
            let ahead = readAhead
            readAhead = nil
            inProgress = try LiveCapture.begin(crash, stopped: stopped, options: configuration.capture, deadlineNanoseconds: deadline,
                                               hangReportID: crash.hang == nil ? hangReports[crash.pid] : nil, exit: exit,
                                               readAhead: ahead, namesAfterRelease: namesAfterRelease)
        } catch {
            lines.write("crashwatch: cannot capture \(crash.executable)[\(crash.pid)]: \(error)\n")
            return nil
        }
        let essentials = inProgress.capture
        let table = inProgress.table
        if crash.hang != nil { hangReports[crash.pid] = essentials.reportID }
        let name = ReportFileName(timeNanoseconds: crash.timeNanoseconds, pid: crash.pid, executable: essentials.process.executable,
                                  id: UUID(uuidString: essentials.reportID) ?? UUID())
        // The names and the memory on the helper thread; meanwhile here the minimal report, which has neither:
        // in the spool before the process is released, so that whatever happens to processing or to crashwatch, this
        // crash is reported (flushed to the device after the release: `synchronize`).
        let helper = inProgress.helper
        let memory = inProgress.copyMemory(on: helper)
        let restricted = essentials.credentials?.isPrivileged ?? false
        // The crashed thread's registers only (every thread's pc is there): the report that replaces it has all of
        // them, and should this one stay — crashwatch killed meanwhile — the crashed thread's are what it needs.
        let written = write(ReportBuilder.minimal(essentials, crashwatchVersion: configuration.crashwatchVersion, table: table,
                                                  crashedThreadRegistersOnly: true),
                            name: name, final: false, restricted: restricted)
        if !written.ok { lines.write(written.line + "\n") }
        // At the deadline the process is released whatever happens.
        let copied = memory.wait(until: deadline) ?? nil
        // The rest needs nothing of the process: it comes after the release.
        return AfterRelease { [self] in
            // Without the memory (or a way to hand it over) there is nothing to process: the minimal report is
            // the last one, and says why.
            func endMinimal(_ why: String) -> ProcessingJob? {
                let final = write(bytes: minimalBytes(essentials, why: why), name: name, restricted: restricted)
                lines.write((final.ok ? "crashwatch: \(crash.executable)[\(crash.pid)]: \(why); its report stays minimal" : final.line) + "\n")
                return nil
            }
            guard var captured = copied else { return endMinimal("the process's memory was not copied before the capture deadline") }
            // Before the supervisor reaps them.
            if namesAfterRelease { captured.nameThreads() }
            do {
                return try startProcessing(captured, table: table, name: name, minimal: written, deadline: deadline)
            } catch {
                return endMinimal("no file for the processing worker's report: \(error)")
            }
        }
    }

    /// The job that processes `captured` once the process is released: a worker (`WorkerLaunch`) whose input
    /// the writer finishes and seals meanwhile. `minimal`: how the minimal report's write went.
    private func startProcessing(_ captured: CapturedCrash, table: ImageTable, name: ReportFileName, minimal written: WriteOutcome,
                                 deadline: Int64) throws(SystemError) -> ProcessingJob {
        let capture = captured.capture
        let identity = WorkerLaunch.identity(for: capture.credentials)
        let gate = try WorkerGate()
        let launch = try WorkerLaunch(input: captured.file, imageFiles: captured.imageFiles, capture: capture, identity: identity,
                                      deadlineNanoseconds: deadline, debuginfodURLs: configuration.capture.debuginfodURLs,
                                      cache: WorkerLaunch.debugCache(configuration.debugCache, for: identity),
                                      gate: gate.workerEnd)
        var limits = launch.limits
        // Beside the programs crashwatch traces: their stops must not wait on processing. Not under a seccomp
        // filter, which might kill the worker for the `sched_setscheduler`.
        limits.background = SelfProcess.hasNoSeccompFilter
        let state = JobState(capture: capture, table: table, name: name, launch: launch,
                             minimalFailure: written.ok ? nil : written.line, pending: written.pending)
        // The capture's metadata needs nothing of the process: the writer encodes it into the worker's input
        // while the process is let go and the worker starts, seals it (the worker can change nothing of it)
        // and opens the worker's gate once it is there; this thread goes back to the other processes.
        let finishInput: @Sendable () -> Void = {
            do {
                try captured.complete()
                try MemoryFile.seal(captured.file)
                gate.open(proceed: true)
            } catch {
                state.inputFailure.withLock { $0 = "cannot write the capture for the worker: \(error)" }
                gate.open(proceed: false)
            }
        }
        writer.async(finishInput)
        // The minimal report has been in the spool, whole, since before the release; its flushes, which guard only
        // against a crash of the kernel (that the held process would not have survived either), come now, on the
        // writer behind the worker's input, rather than while the process was held.
        if let pending = written.pending { writer.async { self.synchronize(pending) } }
        return ProcessingJob(arguments: launch.arguments, descriptors: launch.descriptors, standardError: launch.errors,
                             environment: launch.environment, limits: limits, deadlineNanoseconds: deadline, context: state)
    }

    public func supervisorFinished(_ job: ProcessingJob, outcome: WorkerOutcome) {
        guard let state = job.context as? JobState else { return }
        let holdNanoseconds = job.holdNanoseconds
        let reportWritten = job.reportWritten
        writer.async {
            let written = self.finish(state, outcome: outcome, holdNanoseconds: holdNanoseconds)
            reportWritten?(written.path.map { .success($0) } ?? .failure(ReportProblem(written.line)))
        }
    }

    /// How long crashwatch, about to exit, waits for its stderr lines to be written: a stream nobody reads
    /// must not keep it (and the service it runs) from ending as the program did.
    public static let linesFlushNanoseconds: Int64 = 2_000_000_000

    /// Writes what is left of crashwatch's stderr lines, waiting at most `linesFlushNanoseconds`.
    public func flushLines() {
        lines.flush(until: Clock.monotonicNanoseconds() + Self.linesFlushNanoseconds)
    }

    /// Waits until every final report is written and its journal entry sent (before crashwatch exits).
    public func finishWriting() {
        // Every final write has run once the queue is empty up to here, and each entered `journalEntries`
        // for the entry it queued behind itself.
        writer.drain()
        journalEntries.wait()
    }

    /// The final report: the worker's frames on the capture's facts, or what is left when it failed.
    @discardableResult
    private func finish(_ state: JobState, outcome: WorkerOutcome, holdNanoseconds: Int64) -> WriteOutcome {
        var capture = state.capture
        capture.holdDurationMs = Double(holdNanoseconds / 1_000) / 1_000
        let failure = state.inputFailure.withLock { $0 }.map { "the processing worker could not start: \($0)" }
            ?? WorkerLaunch.failure(of: outcome)
        let (report, _) = state.launch.finalReport(capture: capture, table: state.table, failure: failure,
                                                   deadlineExceeded: outcome == .deadlinePassed,
                                                   crashwatchVersion: configuration.crashwatchVersion)
        let written = write(report, name: state.name, final: true, restricted: capture.credentials?.isPrivileged ?? false)
        if written.line != state.minimalFailure { lines.write(written.line + "\n") }
        return written
    }


    /// A SIGKILL death becomes an `abnormalExit` report: with its threads' stacks when they are stopped at their
    /// exit (returns true: the capture follows), else without threads. When the OOM killer did it, nothing
    /// more is read before the process is let go: its memory cgroup is full, and crashwatch runs in it too.
    public func supervisorSawAbnormalExit(_ exit: AbnormalExit) -> Bool {
        let oom = CgroupMemory.oomKills(of: exit.pid)
        var record = ExitRecord(reason: "signal", source: "inferred", evidence: nil)
        if let oom {
            let before = oomKillCounts[oom.cgroup] ?? 0
            oomKillCounts[oom.cgroup] = oom.kills
            if oom.kills > before {
                record = ExitRecord(reason: "memory", source: "platform",
                                    evidence: "memory cgroup \(oom.cgroup): oom_kill \(before) -> \(oom.kills)")
            }
        }
        lines.write(CrashLine.abnormalExit(exit, reason: record) + "\n")
        if exit.threadsStopped && record.reason != "memory" {
            abnormalExits[exit.pid] = record
            return true
        }
        var process: ProcessRecord
        if record.reason == "memory" {
            // One small read of /proc/PID/status for who it was (retention trusts reports by their uid).
            let cgroup = oom?.info
            let status = try? ProcFS.threadStatus(exit.pid)
            process = ProcessRecord(pid: exit.pid, ppid: status?.ppid ?? 0, executable: exit.executable, commandLine: [],
                                    uid: status?.uids.first ?? 0, gid: status?.gids.first ?? 0,
                                    comm: status?.name ?? "", cgroup: cgroup?.path, systemdUnit: cgroup?.unit)
        } else {
            process = LiveCapture.processRecord(pid: exit.pid, through: exit.pid, options: configuration.capture)
            if process.executable.isEmpty { process.executable = exit.executable }
        }
        let report = AbnormalExitReport.build(pid: exit.pid, timeNanoseconds: exit.timeNanoseconds, signal: exit.signal,
                                              process: process, exit: record, crashwatchVersion: configuration.crashwatchVersion,
                                              runID: configuration.capture.runID)
        let name = ReportFileName(timeNanoseconds: exit.timeNanoseconds, pid: exit.pid, executable: process.executable,
                                  id: UUID(uuidString: report.id) ?? UUID())
        writer.async { self.lines.write(self.write(report, name: name, final: true).line + "\n") }
        return false
    }

    /// Flushes a minimal report written while its process was held (`Spool.writePending`) to the device.
    private func synchronize(_ pending: PendingReport) {
        do throws(SpoolError) { try Spool(path: configuration.spool).synchronize(pending) } catch {
            lines.write("crashwatch: \(error)\n")
        }
    }

    private func minimalBytes(_ capture: RawCapture, why: String) -> [UInt8] {
        (try? ReportSizeLimit.encodeMinimal(capture, crashwatchVersion: configuration.crashwatchVersion,
                                            extraSoftErrors: [SoftError(stage: "processing", message: why)],
                                            limit: capture.options.reportByteLimit)) ?? []
    }

    /// What a report write did: whether it worked, the line to print, and for a minimal report that its full
    /// report will replace, what keeps readers from claiming it meanwhile (`Spool.writePending`).
    struct WriteOutcome {
        let ok: Bool
        let line: String
        var pending: PendingReport?
        /// Where the report was written.
        var path: String?
    }

    /// Encodes and writes `report`: a minimal one while its process is held (`final` false: pending, no
    /// retention), or the last version of a report (see `write(bytes:name:final:restricted:)`).
    private func write(_ report: CrashReport, name: ReportFileName, final: Bool, restricted: Bool = false) -> WriteOutcome {
        do {
            return write(bytes: try ReportSizeLimit.encode(report, limit: configuration.capture.reportByteLimit), name: name,
                         final: final, restricted: restricted,
                         sighting: final ? GroupSighting(report, reportName: name.text, restricted: restricted) : nil)
        } catch {
            return WriteOutcome(ok: false, line: "crashwatch: cannot encode report for spool \(configuration.spool): \(error)")
        }
    }

    /// Writes (or replaces: same name, same report id) the report. A `final` one gets retention and, after it,
    /// the journal entry (not while the crashed process is held); any other is pending: readers leave it be
    /// until the final one replaces it, or crashwatch dies. `restricted`: the report of a process the kernel
    /// protects from its own user (`Spool.write(bytes:name:restricted:)`).
    /// `sighting`: the report as the group index counts it, when the caller has the report (else the bytes are
    /// decoded for it).
    private func write(bytes: [UInt8], name: ReportFileName, final: Bool = true, restricted: Bool = false,
                       sighting: GroupSighting? = nil) -> WriteOutcome {
        do {
            let spool = try Spool(path: configuration.spool)
            guard final else {
                let pending = try spool.writePending(bytes: bytes, name: name, restricted: restricted)
                return WriteOutcome(ok: true, line: "crashwatch: report written to \(pending.path)", pending: pending)
            }
            let path = try spool.write(bytes: bytes, name: name, restricted: restricted)
            // The report is durable: the line says so now. The bookkeeping after it — its group's count, retention,
            // the journal entry — is queued behind this write (final reports are written on `writer`), and
            // `finishWriting` waits for it before crashwatch exits.
            journalEntries.enter()
            writer.async {
                // Counted in its group before retention, which keeps each group's newest report longest.
                do throws(SpoolError) {
                    if let sighting { try spool.recordInGroups(sighting) } else {
                        try spool.recordInGroups(reportBytes: bytes, name: name, restricted: restricted)
                    }
                } catch {
                    self.lines.write("crashwatch: \(error)\n")
                }
                _ = try? spool.prune(policy: self.configuration.retention, protecting: name)
                // One structured journal entry per final report (none for the minimal one it replaces); without a
                // journal the stderr lines are the record.
                _ = JournalRecord.send(reportBytes: bytes, path: path)
                // The last of a report's work: what its capture, worker output and decode left free goes back.
                SelfProcess.returnFreePages()
                self.journalEntries.leave()
            }
            return WriteOutcome(ok: true, line: "crashwatch: report written to \(path)", path: path)
        } catch {
            return WriteOutcome(ok: false, line: "crashwatch: \(error)")
        }
    }
}
