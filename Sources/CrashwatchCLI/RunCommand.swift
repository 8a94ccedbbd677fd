// RunCommand.swift — `crashwatch run`: options, the supervisor, a report in the spool and one stderr
// line per crash, and an exit status identical to the command's.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import Dispatch
import FoundationEssentials
import Synchronization

/// `crashwatch run [options] [--] COMMAND [ARG...]`.
enum RunCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + SpoolSettings.retentionSpecs + [
        OptionSpec("app-root", value: "DIR", repeatable: true, help: "images under DIR are in-app (default: the executable's directory, or its parent when that is bin, sbin or libexec)"),
        OptionSpec("env-allow", value: "NAME", repeatable: true, help: "record environment variable NAME in reports (none are recorded otherwise)"),
        OptionSpec("redact-args", help: "record only argv[0] of the command line; later arguments become <redacted> (a command line joined into one string keeps its first word)"),
        OptionSpec("app-name", value: "NAME", help: "app name for reports (default: $CRASHWATCH_APP_NAME of the crashed process)"),
        OptionSpec("app-version", value: "VERSION", help: "app version for reports (default: $CRASHWATCH_APP_VERSION)"),
        OptionSpec("app-release", value: "RELEASE", help: "app release for reports (default: $CRASHWATCH_APP_RELEASE)"),
        OptionSpec("max-frames", value: "N", help: "unwind at most N frames per thread (default 256)"),
        OptionSpec("capture-timeout", value: "SECONDS", help: "finish each crash's report within this long of the crash (hold and processing); past it, the report keeps what was done (default 10)"),
        OptionSpec("symbolicate", value: "MODE", help: "processing adds: full (functions, file:line, inline frames; default), functions, or none"),
        OptionSpec("debug-dir", value: "DIR", repeatable: true, help: "also look for separate debug info under DIR (DIR/.build-id/xx/rest.debug)"),
        OptionSpec("debuginfod", value: "URL", repeatable: true, help: "let processing ask this debuginfod server for missing debug info (none by default; $DEBUGINFOD_URLS is not used)"),
        OptionSpec("debug-cache", value: "DIR", help: "keep inflated copies of compressed debug files here, by build-id, so later crashes skip inflating them (default /var/cache/crashwatch/debug as root, else $XDG_CACHE_HOME/crashwatch/debug; 'none' turns it off)"),
        OptionSpec("max-stack-bytes", value: "SIZE", help: "capture at most SIZE bytes of each thread's stack (default 1M)"),
        OptionSpec("max-capture-bytes", value: "SIZE", help: "capture at most SIZE bytes of stacks and image copies per crash (default 64M)"),
        OptionSpec("no-follow-forks", help: "do not trace forked children (their crashes go unreported; a program that traces its own children, such as a debugger, needs this)"),
        OptionSpec("pid-file", value: "FILE", help: "for a daemon that forks and exits (systemd Type=forking with PIDFile=FILE): crashwatch returns when the command's first process exits, as it did, and a crashwatch process that goes on supervising what it left running writes its pid to FILE; it ends as the last of them does"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]

    static let usage = "crashwatch run [OPTIONS] [--] COMMAND [ARG...]"

    static let help = """
        Usage: \(usage)

        Runs COMMAND (looked up in PATH) as a traced child and reports its crashes. The child inherits
        stdin, stdout, stderr, the working directory, the environment, rlimits and the process group.
        TERM, INT, HUP, QUIT, ABRT, USR1, USR2, WINCH, ALRM, CONT, TSTP, TTIN and TTOU sent to crashwatch
        are passed on once: a signal sent to the whole group, by the terminal or by a process, is not sent
        again when the child already has it (one from pid 1, which signals the whole service, waits 100 ms
        for the child's own copy). Threads, forks, vforks and execs are followed.

        Under systemd: the child gets crashwatch's own NOTIFY_SOCKET, and what it sends there (READY=1,
        STATUS=, WATCHDOG=1, FDSTORE=1 with its fds; never MAINPID= or MAINPIDFD=) goes on to systemd from
        crashwatch, the service's main process; LISTEN_PID and WATCHDOG_PID naming crashwatch name the
        child. When the child's watchdog pings stop for half of WATCHDOG_USEC, its threads are captured as
        a hang report and it is left running; the crash that follows (the watchdog's SIGABRT) links to it.
        A SIGKILL death (the OOM killer, kill -9) becomes an abnormal-exit report, with every thread's
        stack taken at its exit (none after an OOM kill). If ptrace is refused (a seccomp filter, Yama),
        crashwatch says so in one line and runs COMMAND unsupervised.

        A crash is a core-dumping signal (SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS, QUIT, XCPU, XFSZ)
        delivered with its default action; a signal the program handles and recovers from is not one.
        For each crash crashwatch stops every thread and copies what only the live process has
        (registers, the used part of every stack, maps, build-ids, the bytes of deleted images), writes
        a minimal JSON report (schema version 1) into the spool and lets the program die as it would
        have. A confined worker process then unwinds every stack and adds symbols, and the full report
        replaces the minimal one. crashwatch prints one line naming the crash and one naming the report
        to stderr.

        Options:
        \(renderOptions(specs))

        Spool:
          --spool, else $CRASHWATCH_SPOOL, else the settings file's spool, else
          /var/lib/crashwatch/reports as root, else $XDG_STATE_HOME/crashwatch/reports
          (~/.local/state/crashwatch/reports). Reports are named
          <UTC time>-<pid>-<executable tag>-<report id>.json, written atomically with mode 0640; the
          full report replaces the minimal one under the same name.

        Exit status:
          the command's own: its exit code, or death by the same signal (128+N in a shell); as PID 1
          of a PID namespace, where a process cannot kill itself, 128+N
          64   usage error
          71   supervision could not be set up (fork or ptrace failed)
          126  COMMAND found but not executable
          127  COMMAND not found

        """

    /// Everything `run` was asked to do, validated.
    struct Configuration {
        var supervisor: SupervisorOptions
        var capture: CaptureOptions
        var spool: String
        var retention: RetentionPolicy
        /// Where processing keeps inflated debug files; nil: no cache.
        var debugCache: String?
        /// `--pid-file`: where the supervisor that outlives the command's first process writes its pid.
        var pidFile: String?
    }

    /// The inflated debug-file cache's default place.
    static func defaultDebugCache(environment: [String: String], isRoot: Bool) -> String? {
        if isRoot { return "/var/cache/crashwatch/debug" }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/crashwatch/debug" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/crashwatch/debug" }
        return nil
    }

    /// The options of processing every report source shares (`run`, `analyze-core`): `--symbolicate`,
    /// `--debug-dir`, `--app-root`, `--redact-args`.
    static let processingOptionNames: Set<String> = ["symbolicate", "debug-dir", "app-root", "redact-args"]

    /// Applies `processingOptionNames` from the command line to `capture`.
    static func applyProcessingOptions(_ parsed: ParsedArguments, to capture: inout CaptureOptions) throws(UsageError) {
        if let text = parsed.value("symbolicate") {
            guard let level = Symbolication(rawValue: text) else {
                throw UsageError("--symbolicate takes full, functions or none, not '\(text)'")
            }
            capture.symbolication = level
        }
        capture.debugDirectories = try DebugDirectories.validated(parsed.all("debug-dir"))
        for root in parsed.all("app-root") where !root.hasPrefix("/") {
            throw UsageError("--app-root needs an absolute directory, not '\(root)'")
        }
        capture.appRoots = parsed.all("app-root")
        capture.redactArguments = parsed.has("redact-args")
    }

    static func configuration(_ parsed: ParsedArguments) throws(UsageError) -> Configuration
    {
        guard !parsed.operands.isEmpty, !parsed.operands[0].isEmpty else { throw UsageError("no command given") }
        var supervisor = SupervisorOptions(command: parsed.operands)
        // The command as the kernel gave it to crashwatch: the last operands of its own argv, as bytes.
        let own = rawArguments()
        if own.count >= parsed.operands.count {
            let raw = Array(own.suffix(parsed.operands.count))
            if raw.map({ String(decoding: $0, as: UTF8.self) }) == parsed.operands { supervisor.rawCommand = raw }
        }
        supervisor.followForks = !parsed.has("no-follow-forks")
        // Under systemd: relay the program's sd_notify messages, and watch its watchdog pings.
        let environment = ProcessEnvironment.current
        supervisor.notifySocket = environment["NOTIFY_SOCKET"].flatMap { $0.hasPrefix("/") || $0.hasPrefix("@") ? $0 : nil }
        if let usec = environment["WATCHDOG_USEC"].flatMap({ Int64($0) }), usec > 0, usec < Int64.max / 1_000,
           environment["WATCHDOG_PID"].map({ $0 == String(SelfProcess.pid) }) ?? true {
            supervisor.watchdogTimeoutNanoseconds = usec * 1_000
        }
        if let text = parsed.value("capture-timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                throw UsageError("--capture-timeout needs a number of seconds between 0 and 3600, not '\(text)'")
            }
            supervisor.captureTimeoutNanoseconds = Int64(seconds * 1e9)
        }

        var capture = CaptureOptions(crashwatchVersion: CLI.version)
        capture.runID = CrashReport.newID()
        if let text = parsed.value("max-frames") {
            guard let frames = Int(text), frames >= 1, frames <= 100_000 else {
                throw UsageError("--max-frames needs a whole number from 1 to 100000, not '\(text)'")
            }
            capture.maxFrames = frames
        }
        try applyProcessingOptions(parsed, to: &capture)
        for (option, apply) in [("max-stack-bytes", { (value: Int) in capture.stackBytesPerThread = value }),
                                ("max-capture-bytes", { (value: Int) in capture.captureBytes = value })] {
            guard let text = parsed.value(option) else { continue }
            guard let bytes = try? ByteSize.parse(text), bytes >= 4096, bytes <= 1 << 32 else {
                throw UsageError("--\(option) needs a size from 4K to 4G (e.g. 512K, 8M), not '\(text)'")
            }
            apply(Int(bytes))
        }
        for name in parsed.all("env-allow") where name.isEmpty || name.contains("=") {
            throw UsageError("--env-allow needs a variable name, not '\(name)'")
        }
        capture.environmentAllowList = parsed.all("env-allow")
        capture.app = AppRecord(name: parsed.value("app-name"), version: parsed.value("app-version"),
                                release: parsed.value("app-release"))

        let settings = try SpoolSettings(parsed)
        var urls = parsed.all("debuginfod")
        if urls.isEmpty, let configured = settings.config.value("debuginfod", overriddenBy: parsed) {
            urls = configured.split(separator: " ").map(String.init)
        }
        for url in urls where !(url.hasPrefix("http://") || url.hasPrefix("https://")) || url.contains(" ") {
            throw UsageError("--debuginfod needs an http:// or https:// URL, not '\(url)'")
        }
        capture.debuginfodURLs = urls
        var debugCache = defaultDebugCache(environment: environment, isRoot: SelfProcess.isRoot)
        if let text = parsed.value("debug-cache") {
            guard text == "none" || text.hasPrefix("/") else {
                throw UsageError("--debug-cache needs an absolute directory or 'none', not '\(text)'")
            }
            debugCache = text == "none" ? nil : text
        }
        if let pidFile = parsed.value("pid-file"), !pidFile.hasPrefix("/") {
            throw UsageError("--pid-file needs an absolute path, not '\(pidFile)'")
        }
        return Configuration(supervisor: supervisor, capture: capture, spool: settings.spool,
                             retention: try settings.retention(parsed), debugCache: debugCache,
                             pidFile: parsed.value("pid-file"))
    }

    static func main(_ arguments: [String]) -> Int32 {
        var configuration: Configuration
        do {
            let parsed = try parseArguments(arguments, specs: specs, operandsEndOptions: true)
            if parsed.has("help") {
                StandardStream.out(help)
                return ExitCode.success
            }
            configuration = try self.configuration(parsed)
        } catch {
            return CLI.usageFailure(error, usage: usage, helpCommand: "crashwatch run --help")
        }

        if let pidFile = configuration.pidFile {
            // Before any thread exists: the foreground process waits in C for the word from this one.
            let statusPipe: Int32
            do {
                statusPipe = try SupervisorSplit.split()
                try FileSystem.writeAtomically(Array("\(SelfProcess.pid)\n".utf8), to: pidFile, permissions: 0o644)
            } catch {
                StandardStream.err("crashwatch: --pid-file \(pidFile): \(error)\n")
                return ExitCode.systemError
            }
            configuration.supervisor.outlivesMainChild = true
            configuration.supervisor.mainChildExited = { status in SupervisorSplit.report(status, on: statusPipe) }
        }
        let reporter = CrashReporter(configuration: configuration)
        let status: WaitStatus
        do throws(SupervisorError) {
            let supervisor = try Supervisor(options: configuration.supervisor, observer: reporter)
            do throws(SupervisorError) {
                status = try supervisor.run()
            } catch .supervisionBlocked(let reason) {
                // A service must not fail because its crash reporter cannot work: run the program as if
                // crashwatch were not there, and say once why its crashes go unreported.
                StandardStream.err("crashwatch: cannot supervise: \(reason); running \(configuration.supervisor.command[0]) unsupervised, its crashes will not be reported\n")
                throw supervisor.execUnsupervised()
            }
            reporter.finishWriting()
        } catch {
            reporter.flushLines()
            switch error {
            case .supervisionBlocked(let reason):
                StandardStream.err("crashwatch: \(reason)\n")
                return ExitCode.systemError
            case .commandNotFound(let command):
                StandardStream.err("crashwatch: \(command): command not found\n")
                return ExitCode.notFound
            case .commandNotExecutable(let command, let failure):
                StandardStream.err("crashwatch: cannot execute '\(command)': \(failure.reason)\n")
                return ExitCode.notExecutable
            case .system(let systemError):
                StandardStream.err("crashwatch: \(systemError)\n")
                return ExitCode.systemError
            }
        }
        reporter.flushLines()
        SelfProcess.terminate(like: status)
    }
}

/// Captures each crash: the raw capture and a minimal report while the process is held, then the full
/// report from a confined worker; prints what happened to stderr.
final class CrashReporter: SupervisorObserver, @unchecked Sendable {
    /// Final reports are checked and written on a background thread (`BackgroundWork`), off the tracer thread,
    /// which must keep answering every traced process's stops; so is a worker's input, once the process is
    /// released. Only the minimal report is written on the tracer thread: it must be durable before the
    /// crashed process is released.
    private let writer = BackgroundWork()
    /// crashwatch's stderr lines once the command runs. The stream may be the program's too, and a write to
    /// it can wait for ever (a pipe it filled that nobody reads, a stopped terminal): neither the tracer
    /// thread, which may be holding a crashed process, nor the writer waits on it.
    let lines = LineOutput(fd: 2)
    /// Journal entries queued on `writer` and not sent yet.
    private let journalEntries = DispatchGroup()
    private let configuration: RunCommand.Configuration
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

    init(configuration: RunCommand.Configuration) {
        self.configuration = configuration
        // The code and constants loading and start-up touched leave the resident set; the crash path, warmed
        // up next (and on the helper thread once the command runs), and the event loop bring back what they
        // use (idle RSS 10.4 -> 9.0 MB).
        SelfProcess.releaseStartupPages()
        // A crash's capture, reports and journal entry take megabytes for a moment (tens for a thousand
        // threads); a supervisor that lives on after it (a forking server's worker crashed) gives them back.
        SelfProcess.returnFreedMemoryPromptly()
        LiveCapture.prepare()
        if let count = CgroupMemory.oomKills(of: SelfProcess.pid) { oomKillCounts[count.cgroup] = count.kills }
    }

    func supervisorStarted() {
        // Not before: a thread started then would un-ignore signal 33 for the command (TransparencyTests).
        LiveCapture.startHelper()
        writer.start()
        lines.start()
    }

    func supervisorStopping(_ crash: DetectedCrash) {
        readAhead = LiveCapture.readAhead(crash, options: configuration.capture)
    }

    func supervisorWarning(_ line: String) {
        lines.write(line + "\n")
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

    func supervisorDetected(_ crash: DetectedCrash, stopped: StoppedProcess) -> ProcessingJob? {
        // A SIGKILL death seen at the exit stops had its line from `supervisorSawAbnormalExit`.
        let exit = crash.seenAtExit ? abnormalExits.removeValue(forKey: crash.pid) : nil
        if exit == nil { lines.write((crash.hang.map { CrashLine.hung(crash, $0) } ?? CrashLine.crashed(crash)) + "\n") }
        let deadline = stopped.deadlineNanoseconds
        let inProgress: CaptureInProgress
        do {
            let ahead = readAhead
            readAhead = nil
            inProgress = try LiveCapture.begin(crash, stopped: stopped, options: configuration.capture, deadlineNanoseconds: deadline,
                                               hangReportID: crash.hang == nil ? hangReports[crash.pid] : nil, exit: exit,
                                               readAhead: ahead)
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
        // durable before the process is released, so that whatever happens to processing, this crash is on disk.
        let helper = inProgress.helper
        let memory = inProgress.copyMemory(on: helper)
        let restricted = essentials.credentials?.isPrivileged ?? false
        let written = write(ReportBuilder.minimal(essentials, crashwatchVersion: CLI.version, table: table), name: name, final: false,
                            restricted: restricted)
        if !written.ok { lines.write(written.line + "\n") }
        // Without the memory (or a way to hand it over) there is nothing to process: the minimal report is the
        // last one, and says why.
        func endMinimal(_ why: String) -> ProcessingJob? {
            let final = write(bytes: minimalBytes(essentials, why: why), name: name, restricted: restricted)
            lines.write((final.ok ? "crashwatch: \(crash.executable)[\(crash.pid)]: \(why); its report stays minimal" : final.line) + "\n")
            return nil
        }
        // At the deadline the process is released whatever happens.
        guard let copied = memory.wait(until: deadline), let captured = copied else {
            return endMinimal("the process's memory was not copied before the capture deadline")
        }
        let capture = captured.capture
        let identity = WorkerLaunch.identity(for: capture.credentials)
        let launch: WorkerLaunch
        let gate: WorkerGate
        do {
            gate = try WorkerGate()
            launch = try WorkerLaunch(input: captured.file, imageFiles: captured.imageFiles, capture: capture, identity: identity,
                                      deadlineNanoseconds: deadline, debuginfodURLs: configuration.capture.debuginfodURLs,
                                      cache: WorkerLaunch.mayUseDebugCache(identity) ? debugCacheDirectory(for: identity) : nil,
                                      gate: gate.workerEnd)
        } catch {
            return endMinimal("no file for the processing worker's report: \(error)")
        }
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
        return ProcessingJob(arguments: launch.arguments, descriptors: launch.descriptors, standardError: launch.errors,
                             environment: launch.environment, limits: limits, deadlineNanoseconds: deadline, context: state)
    }

    func supervisorFinished(_ job: ProcessingJob, outcome: WorkerOutcome) {
        guard let state = job.context as? JobState else { return }
        let holdNanoseconds = job.holdNanoseconds
        writer.async { self.finish(state, outcome: outcome, holdNanoseconds: holdNanoseconds) }
    }

    /// How long crashwatch, about to exit, waits for its stderr lines to be written: a stream nobody reads
    /// must not keep it (and the service it runs) from ending as the program did.
    static let linesFlushNanoseconds: Int64 = 2_000_000_000

    /// Writes what is left of crashwatch's stderr lines, waiting at most `linesFlushNanoseconds`.
    func flushLines() {
        lines.flush(until: Clock.monotonicNanoseconds() + Self.linesFlushNanoseconds)
    }

    /// Waits until every final report is written and its journal entry sent (before crashwatch exits).
    func finishWriting() {
        // Every final write has run once the queue is empty up to here, and each entered `journalEntries`
        // for the entry it queued behind itself.
        writer.drain()
        journalEntries.wait()
    }

    /// The final report: the worker's frames on the capture's facts, or what is left when it failed.
    private func finish(_ state: JobState, outcome: WorkerOutcome, holdNanoseconds: Int64) {
        var capture = state.capture
        capture.holdDurationMs = Double(holdNanoseconds / 1_000) / 1_000
        let failure = state.inputFailure.withLock { $0 }.map { "the processing worker could not start: \($0)" }
            ?? WorkerLaunch.failure(of: outcome)
        let (report, _) = state.launch.finalReport(capture: capture, table: state.table, failure: failure,
                                                   deadlineExceeded: outcome == .deadlinePassed)
        let written = write(report, name: state.name, final: true, restricted: capture.credentials?.isPrivileged ?? false)
        if written.line != state.minimalFailure { lines.write(written.line + "\n") }
    }

    /// The debug-file cache directory, created (0700) on first use; nil when off or not crashwatch's own.
    /// Under root it belongs to the dedicated user, whose workers (crashes of root's processes) fill it.
    private func debugCacheDirectory(for identity: WorkerIdentity?) -> OwnedDescriptor? {
        guard let path = configuration.debugCache else { return nil }
        let owner = identity.map { ($0.ownerUID, $0.ownerGID) } ?? (effectiveUserID, effectiveGroupID)
        if let directory = OwnedDescriptor.privateDirectory(path, owner: owner) { return directory }
        try? FileSystem.createDirectories(path, permissions: 0o700)
        return OwnedDescriptor.privateDirectory(path, owner: owner)
    }

    /// A SIGKILL death becomes an `abnormalExit` report: with its threads' stacks when they are stopped at their
    /// exit (returns true: the capture follows), else without threads. When the OOM killer did it, nothing
    /// more is read before the process is let go: its memory cgroup is full, and crashwatch runs in it too.
    func supervisorSawAbnormalExit(_ exit: AbnormalExit) -> Bool {
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
                                              process: process, exit: record, crashwatchVersion: CLI.version,
                                              runID: configuration.capture.runID)
        let name = ReportFileName(timeNanoseconds: exit.timeNanoseconds, pid: exit.pid, executable: process.executable,
                                  id: UUID(uuidString: report.id) ?? UUID())
        writer.async { self.lines.write(self.write(report, name: name, final: true).line + "\n") }
        return false
    }

    private func minimalBytes(_ capture: RawCapture, why: String) -> [UInt8] {
        (try? ReportSizeLimit.encodeMinimal(capture, crashwatchVersion: CLI.version,
                                            extraSoftErrors: [SoftError(stage: "processing", message: why)],
                                            limit: capture.options.reportByteLimit)) ?? []
    }

    /// What a report write did: whether it worked, the line to print, and for a minimal report that its full
    /// report will replace, what keeps readers from claiming it meanwhile (`Spool.writePending`).
    struct WriteOutcome {
        let ok: Bool
        let line: String
        var pending: PendingReport?
    }

    /// Encodes and writes `report`: a minimal one while its process is held (`final` false: pending, no
    /// retention), or the last version of a report (see `write(bytes:name:final:restricted:)`).
    private func write(_ report: CrashReport, name: ReportFileName, final: Bool, restricted: Bool = false) -> WriteOutcome {
        do {
            return write(bytes: try ReportSizeLimit.encode(report, limit: configuration.capture.reportByteLimit), name: name,
                         final: final, restricted: restricted)
        } catch {
            return WriteOutcome(ok: false, line: "crashwatch: cannot encode report for spool \(configuration.spool): \(error)")
        }
    }

    /// Writes (or replaces: same name, same report id) the report. A `final` one gets retention and, after it,
    /// the journal entry (not while the crashed process is held); any other is pending: readers leave it be
    /// until the final one replaces it, or crashwatch dies. `restricted`: the report of a process the kernel
    /// protects from its own user (`Spool.write(bytes:name:restricted:)`).
    private func write(bytes: [UInt8], name: ReportFileName, final: Bool = true, restricted: Bool = false) -> WriteOutcome {
        do {
            let spool = try Spool(path: configuration.spool)
            guard final else {
                let pending = try spool.writePending(bytes: bytes, name: name, restricted: restricted)
                return WriteOutcome(ok: true, line: "crashwatch: report written to \(pending.path)", pending: pending)
            }
            let path = try spool.write(bytes: bytes, name: name, restricted: restricted)
            _ = try? spool.prune(policy: configuration.retention, protecting: name)
            // One structured journal entry per final report (none for the minimal one it replaces); without a
            // journal the stderr lines are the record. Queued behind this write (final reports are written on
            // `writer`), so decoding the report's headline for it does not delay the line saying it is written.
            journalEntries.enter()
            writer.async {
                _ = JournalRecord.send(reportBytes: bytes, path: path)
                // The last of a report's work: what its capture, worker output and decode left free goes back.
                SelfProcess.returnFreePages()
                self.journalEntries.leave()
            }
            return WriteOutcome(ok: true, line: "crashwatch: report written to \(path)")
        } catch {
            return WriteOutcome(ok: false, line: "crashwatch: \(error)")
        }
    }
}

/// A line saying why something failed.
struct ReporterFailure: Error, ExpressibleByStringLiteral, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
    init(stringLiteral text: String) { description = text }
}

/// The one-line summaries crashwatch prints to stderr.
enum CrashLine {
    /// `crashwatch: ./app[1234] crashed: SIGSEGV (SEGV_MAPERR) at 0x0, thread 1236 "worker"`.
    static func crashed(_ crash: DetectedCrash) -> String {
        var line = "crashwatch: \(crash.executable)[\(crash.pid)] crashed: \(faultText(crash.signal)), thread \(crash.crashedThreadID)"
        if let name = crash.crashedThreadName { line += " \"\(name)\"" }
        if let original = crash.originalFault {
            line += "; original fault: \(faultText(original.signal)), thread \(original.tid)"
        }
        return line
    }

    /// `crashwatch: ./app[1234] killed by SIGKILL (abnormal exit, not a crash; the OOM killer: memory cgroup …)`.
    static func abnormalExit(_ exit: AbnormalExit, reason: ExitRecord) -> String {
        let why = reason.reason == "memory" ? "; the OOM killer: \(reason.evidence ?? "memory")" : ""
        return "crashwatch: \(exit.executable)[\(exit.pid)] killed by \(exit.signal.name) (abnormal exit, not a crash\(why))"
    }

    /// `crashwatch: ./app[1234] hung: no watchdog ping for 1.0 s (timeout 2.0 s); capturing its threads, leaving it running`.
    static func hung(_ crash: DetectedCrash, _ hang: DetectedHang) -> String {
        func seconds(_ nanoseconds: Int64) -> String {
            let tenths = nanoseconds / 100_000_000
            return "\(tenths / 10).\(tenths % 10) s"
        }
        let timeout = hang.watchdogTimeoutNanoseconds.map { " (watchdog timeout \(seconds($0)))" } ?? ""
        return "crashwatch: \(crash.executable)[\(crash.pid)] hung: no watchdog ping for \(seconds(hang.silenceNanoseconds))\(timeout); capturing its threads, leaving it running"
    }

    private static func faultText(_ info: SignalInfo) -> String {
        var text = info.typeName
        if let address = info.faultAddress { text += " at \(hex(address))" }
        if let sender = info.senderPID { text += " from pid \(sender)" }
        return text
    }
}
