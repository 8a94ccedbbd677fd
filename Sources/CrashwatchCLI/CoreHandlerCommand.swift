// CoreHandlerCommand.swift — `crashwatch core-handler`, a `core_pattern` helper: the kernel pipes every
// dumped core into it (`kernel.core_pattern = |/usr/bin/crashwatch core-handler %P %i %s %t`), and it
// writes the crash's report to the spool — system-wide capture with no supervisor in any service. Here: the
// arguments, the messages and the exit status; the Reporter's `CoreHandler` reads the core and writes the reports.
import CrashwatchReporter
import CrashwatchSpool
import CrashwatchSystem

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

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 4...4, arguments) { parsed, settings throws(CommandFailure) in
            let core = try checkingUsage { () throws(UsageError) in try dumpedCore(parsed, settings: settings) }
            let written: WrittenCoreReport
            do throws(CoreReportFailure) { written = try CoreHandler.handle(InputStream(fd: 0), core) } catch {
                switch error {
                case .notACore(let message): throw CommandFailure("core-handler: \(message)", status: ExitCode.dataError)
                case .cannotWrite(let message): throw CommandFailure("core-handler: \(message)", status: ExitCode.cannotCreate)
                }
            }
            if let failure = written.failure {
                StandardStream.err("crashwatch: core-handler: pid \(core.pid): \(failure); the report is not complete\n")
            }
            if let failure = written.groupFailure { StandardStream.err("crashwatch: core-handler: \(failure)\n") }
            StandardStream.out(written.path + "\n")
            return ExitCode.success
        }
    }

    /// The crash the kernel names in the operands (`%P %i %s %t`), with what the options allow: memory kept
    /// from the core, the kept cores' directory, cap and count, the time limit, the spool's retention.
    static func dumpedCore(_ parsed: ParsedArguments, settings: SpoolSettings) throws(UsageError) -> DumpedCore {
        let numbers = parsed.operands.map { Int64($0) }
        guard let pid = numbers[0].flatMap(Int32.init(exactly:)), pid > 0, let tid = numbers[1].flatMap(Int32.init(exactly:)),
              numbers[2] != nil, let seconds = numbers[3], seconds >= 0, seconds < Int64.max / 1_000_000_000
        else {
            throw UsageError("PID, TID, SIGNAL and TIME must be numbers (%P %i %s %t)")
        }
        let memory = try parsed.value("max-memory", OptionValue.byteSize)
        let keptCoreBytes = try parsed.value("keep-core-max", OptionValue.byteSize)
        let keptCores = try parsed.value("keep-cores", OptionValue.count)
        let retention = try settings.retention(parsed)
        let timeout = try parsed.value("capture-timeout", OptionValue.seconds)
        var core = DumpedCore(pid: pid, tid: tid, timeNanoseconds: seconds * 1_000_000_000, timeoutSeconds: timeout ?? defaultTimeoutSeconds,
                              spool: settings.spool, retention: retention, crashwatchVersion: CLI.version)
        if let memory { core.memoryLimit = Int(clamping: memory) }
        core.keepDirectory = parsed.value("keep-core")
        if let keptCoreBytes { core.keptCoreBytes = UInt64(clamping: keptCoreBytes) }
        if let keptCores { core.keptCores = keptCores }
        return core
    }
}
