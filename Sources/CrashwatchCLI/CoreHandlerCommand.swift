// CoreHandlerCommand.swift — `crashwatch core-handler`, a `core_pattern` helper: the kernel pipes every
// dumped core into it (`kernel.core_pattern = |/usr/bin/crashwatch core-handler %P %i %s %t`), and it
// writes the crash's report to the spool — system-wide capture with no supervisor in any service. The core
// is read once from stdin and only what the report needs is kept (CoreStream); /proc/PID, still there
// while the kernel dumps, gives the full command line, cgroup, systemd unit and app identity.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchReporter
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

enum CoreHandlerCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch core-handler [OPTIONS] PID TID SIGNAL TIME",
        options: SpoolSettings.locationSpecs + SpoolSettings.retentionSpecs + [
            OptionSpec("max-memory", value: "SIZE", help: "keep at most SIZE of the core's memory (stacks, image headers; default 64M)"),
            OptionSpec("keep-core", value: "DIR", help: "also keep the core dump itself in DIR, gzip-compressed, readable by root only, named as its report with .core.gz"),
            OptionSpec("keep-core-max", value: "SIZE", help: "keep no core whose compressed size passes SIZE (default 1G); the report says why it was not kept"),
            OptionSpec("keep-cores", value: "N", help: "keep the newest N cores in the --keep-core directory, removing older ones (default 10)"),
            OptionSpec("capture-timeout", value: "SECONDS", help: "finish the report within this long (default 10): the core is read for at most 70% of it, and what came later is not in the report"),
        ],
        about: """
            A core_pattern helper: reads a core dump on standard input, as the kernel pipes it, and writes the
            crash's report to the spool. Install with
              sysctl kernel.core_pattern='|/usr/bin/crashwatch core-handler %P %i %s %t'
            (%P the pid and %i the thread id in the initial pid namespace, %s the signal, %t the time). The
            core is read once and only what the report needs is kept — each thread's stack from its stack
            pointer up (1 MiB at most), the first 64 KiB of each file mapping, the vdso — at most --max-memory
            in all, so a core of any size costs a few MiB; its notes are capped (4,096 threads, the notes at
            most half of --max-memory) and what a cap drops is a soft error. With --keep-core DIR the core
            itself is also kept, gzip-compressed as it streams past (mode 0600, capped by --keep-core-max, the
            newest --keep-cores of crashwatch's own there; other users' files are never counted or removed),
            and the report's "coreFile" says where. A core still streaming when 70% of
            --capture-timeout has passed (a huge, mostly empty one) is read no further: the report keeps what
            came before and says so, and closing the pipe ends the kernel's dump. While the kernel dumps,
            /proc/PID still shows the process: its whole command line, cwd, cgroup, systemd unit and
            invocation id and CRASHWATCH_APP_* go into the report. It replaces systemd-coredump's own
            core_pattern; to keep both, have systemd-coredump store cores and run 'crashwatch analyze-core' on
            them instead. Processes under 'crashwatch run' are reported by run (it waits for the kernel's dump
            like any parent): use one or the other for a service.
            """,
        after: """
            The minimal report is written first; when the processing worker fails, it stays, with a soft
            error saying why.

            Exit status: 0 written, 64 usage error, 65 not a core dump, 73 the report cannot be written.
            """)

    /// How long reading and processing may take, by default (`--capture-timeout`).
    static let defaultTimeoutSeconds = 10.0
    /// The part of it reading the core may take: processing gets the rest.
    static let readingShare = 0.7

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 4...4, arguments) { parsed, settings throws(CommandFailure) in
            let crash = try checkingUsage { () throws(UsageError) in try DumpedCrash(parsed.operands) }
            let limits = try checkingUsage { () throws(UsageError) in try Limits(parsed, settings: settings) }
            let started = Clock.monotonicNanoseconds()
            let deadline = started + Int64(limits.timeoutSeconds * 1e9)
            let input = InputStream(fd: 0)
            input.deadlineNanoseconds = started + Int64(limits.timeoutSeconds * readingShare * 1e9)
            let (source, name) = try readCore(input, crash: crash, limits: limits, keepIn: parsed.value("keep-core"), deadline: deadline)
            try writeReports(source, name: name, spool: settings.spool, pid: crash.pid, deadline: deadline, retention: limits.retention)
            return ExitCode.success
        }
    }

    /// The crash the kernel names in the operands (`%P %i %s %t`).
    struct DumpedCrash {
        let pid: Int32
        let tid: Int32
        /// The time of the crash, in seconds since the epoch.
        let seconds: Int64

        init(_ operands: [String]) throws(UsageError) {
            let numbers = operands.map { Int64($0) }
            guard let pid = numbers[0].flatMap(Int32.init(exactly:)), pid > 0, let tid = numbers[1].flatMap(Int32.init(exactly:)),
                  numbers[2] != nil, let seconds = numbers[3], seconds >= 0, seconds < Int64.max / 1_000_000_000
            else {
                throw UsageError("PID, TID, SIGNAL and TIME must be numbers (%P %i %s %t)")
            }
            self.pid = pid
            self.tid = tid
            self.seconds = seconds
        }
    }

    /// What the options allow: memory kept from the core, the kept cores' cap and count, the time limit,
    /// the spool's retention.
    struct Limits {
        var memory = 64 << 20
        var keptCoreBytes: UInt64 = 1 << 30
        var keptCores = 10
        var timeoutSeconds = CoreHandlerCommand.defaultTimeoutSeconds
        let retention: RetentionPolicy

        init(_ parsed: ParsedArguments, settings: SpoolSettings) throws(UsageError) {
            if let bytes = try parsed.value("max-memory", OptionValue.byteSize) { memory = Int(clamping: bytes) }
            if let bytes = try parsed.value("keep-core-max", OptionValue.byteSize) { keptCoreBytes = UInt64(clamping: bytes) }
            if let count = try parsed.value("keep-cores", OptionValue.count) { keptCores = count }
            retention = try settings.retention(parsed)
            if let seconds = try parsed.value("capture-timeout", OptionValue.seconds) { timeoutSeconds = seconds }
        }
    }

    /// Reads the core from `input` into a capture source and its report's name, keeping the core itself in
    /// `directory` when asked; what the reading deadline or the keeper cost is a soft error of the capture.
    private static func readCore(_ input: InputStream, crash: DumpedCrash, limits: Limits, keepIn directory: String?,
                                 deadline: Int64) throws(CommandFailure) -> (CoreFile, ReportFileName)
    {
        var options = CaptureOptions(crashwatchVersion: CLI.version)
        options.captureBytes = limits.memory
        var keeper: CoreKeeper?
        var keeperFailure: String?
        if let directory {
            do { keeper = try CoreKeeper(directory: directory, limit: limits.keptCoreBytes, count: limits.keptCores, pid: crash.pid) } catch {
                keeperFailure = "--keep-core \(directory): \(error); the core was not kept"
            }
            keeper?.attach(to: input)
        }
        let source: CoreFile
        do {
            let (pid, tid) = (crash.pid, crash.tid)
            let live = ProcFS.exists(pid) ? LiveCapture.processRecord(pid: pid, through: ProcFS.exists(tid) ? tid : pid, options: options) : nil
            source = try CoreReports.source(input, options: options, timeNanoseconds: crash.seconds * 1_000_000_000,
                                            deadlineNanoseconds: deadline, process: live)
        } catch {
            keeper?.discard()
            throw CommandFailure("core-handler: pid \(crash.pid): \(error)", status: ExitCode.dataError)
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
            let tenths = Int((limits.timeoutSeconds * readingShare * 10).rounded())
            source.capture.softErrors.append(SoftError(stage: "deadline", message:
                "the core was read no further than byte \(input.position): \(tenths / 10).\(tenths % 10) s (70% of --capture-timeout) had passed; what it held after that is not in the report"))
        }
        if let keeperFailure { source.capture.softErrors.append(SoftError(stage: "core", message: keeperFailure)) }
        return (source, name)
    }

    /// Writes the minimal report, then the worker's full one over it, prints its path and prunes the spool.
    private static func writeReports(_ source: CoreFile, name: ReportFileName, spool path: String, pid: Int32, deadline: Int64,
                                     retention: RetentionPolicy) throws(CommandFailure)
    {
        // The minimal report first: whatever happens to processing, this crash is on disk.
        let minimal: [UInt8]
        do { minimal = try CoreReports.minimalReport(source.capture, crashwatchVersion: CLI.version) } catch {
            throw CommandFailure("core-handler: encode the minimal report: \(error)", status: ExitCode.cannotCreate)
        }
        let spool: Spool
        do throws(SpoolError) {
            spool = try Spool(path: path)
            _ = try spool.write(bytes: minimal, name: name)
        } catch {
            throw CommandFailure("core-handler: \(error)", status: ExitCode.cannotCreate)
        }
        // Processing reads what the crashed program controlled: in the confined worker `run` uses, as the
        // dedicated worker user (the core's own notes never choose it), with limits and a deadline.
        var sighting: GroupSighting?
        let (full, failure) = CoreReports.process(source, imageFiles: [], deadlineNanoseconds: deadline, crashwatchVersion: CLI.version,
                                                  sighting: { sighting = $0 })
        do throws(SpoolError) { _ = try spool.write(bytes: full, name: name) } catch {
            throw CommandFailure("core-handler: \(error)", status: ExitCode.cannotCreate)
        }
        if let failure { StandardStream.err("crashwatch: core-handler: pid \(pid): \(failure); the report is not complete\n") }
        do throws(SpoolError) {
            if let sighting { try spool.recordInGroups(sighting) } else { try spool.recordInGroups(reportBytes: full, name: name) }
        } catch {
            StandardStream.err("crashwatch: core-handler: \(error)\n")
        }
        StandardStream.out(spool.path(of: name) + "\n")
        _ = try? spool.prune(policy: retention, protecting: name)
    }
}
