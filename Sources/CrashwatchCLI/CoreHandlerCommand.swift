// CoreHandlerCommand.swift — `crashwatch core-handler`, a `core_pattern` helper: the kernel pipes every
// dumped core into it (`kernel.core_pattern = |/usr/bin/crashwatch core-handler %P %i %s %t`), and it
// writes the crash's report to the spool — system-wide capture with no supervisor in any service. The core
// is read once from stdin and only what the report needs is kept (CoreStream); /proc/PID, still there
// while the kernel dumps, gives the full command line, cgroup, systemd unit and app identity.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

enum CoreHandlerCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + SpoolSettings.retentionSpecs + [
        OptionSpec("max-memory", value: "SIZE", help: "keep at most SIZE of the core's memory (stacks, image headers; default 64M)"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]
    static let usage = "crashwatch core-handler [OPTIONS] PID TID SIGNAL TIME"
    static let help = """
        Usage: \(usage)

        A core_pattern helper: reads a core dump on standard input, as the kernel pipes it, and writes the
        crash's report to the spool. Install with
          sysctl kernel.core_pattern='|/usr/bin/crashwatch core-handler %P %i %s %t'
        (%P the pid and %i the thread id in the initial pid namespace, %s the signal, %t the time). The
        core is read once and only what the report needs is kept — each thread's stack from its stack
        pointer up (1 MiB at most), the first 64 KiB of each file mapping, the vdso — at most --max-memory
        in all, so a core of any size costs a few MiB; the core itself is not kept. While the kernel dumps,
        /proc/PID still shows the process: its whole command line, cwd, cgroup, systemd unit and
        invocation id and CRASHWATCH_APP_* go into the report. It replaces systemd-coredump's own
        core_pattern; to keep both, have systemd-coredump store cores and run 'crashwatch analyze-core' on
        them instead. Processes under 'crashwatch run' are reported by run (it waits for the kernel's dump
        like any parent): use one or the other for a service.

        Options:
        \(renderOptions(specs))

        Exit status: 0 written, 64 usage error, 65 not a core dump, 73 the report cannot be written.

        """

    /// How long processing may take.
    static let processingSeconds: Int64 = 10

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(usage: usage, help: help, specs: specs, operands: 4...4, arguments) { parsed, settings throws(CommandFailure) in
            let numbers = parsed.operands.map { Int64($0) }
            guard let pid = numbers[0].flatMap(Int32.init(exactly:)), pid > 0, let tid = numbers[1].flatMap(Int32.init(exactly:)),
                  numbers[2] != nil, let seconds = numbers[3], seconds >= 0, seconds < Int64.max / 1_000_000_000
            else {
                return CLI.usageFailure(UsageError("PID, TID, SIGNAL and TIME must be numbers (%P %i %s %t)"), usage: usage,
                                        helpCommand: "crashwatch core-handler --help")
            }
            var limit = 64 << 20
            let policy: RetentionPolicy
            do throws(UsageError) {
                if let text = parsed.value("max-memory") {
                    do { limit = Int(clamping: try ByteSize.parse(text)) } catch { throw UsageError("--max-memory: \(error)") }
                }
                policy = try settings.retention(parsed)
            } catch {
                return CLI.usageFailure(error, usage: usage, helpCommand: "crashwatch core-handler --help")
            }
            var options = CaptureOptions(crashwatchVersion: CLI.version)
            options.captureBytes = limit
            let deadline = Clock.monotonicNanoseconds() + processingSeconds * 1_000_000_000
            let source: CoreFile
            do {
                let live = ProcFS.exists(pid) ? LiveCapture.processRecord(pid: pid, through: ProcFS.exists(tid) ? tid : pid, options: options) : nil
                source = try CoreReports.source(InputStream(fd: 0), options: options, timeNanoseconds: seconds * 1_000_000_000,
                                                deadlineNanoseconds: deadline, process: live)
            } catch {
                throw CommandFailure("core-handler: pid \(pid): \(error)", status: ExitCode.dataError)
            }
            let capture = source.capture
            let name = CoreReports.fileName(capture)
            // The minimal report first: whatever happens to processing, this crash is on disk.
            let minimal: [UInt8]
            do { minimal = try ReportBuilder.minimal(capture, crashwatchVersion: CLI.version).encodedJSON() } catch {
                throw CommandFailure("core-handler: encode the minimal report: \(error)", status: ExitCode.cannotCreate)
            }
            let spool: Spool
            do throws(SpoolError) {
                spool = try Spool(path: settings.spool)
                _ = try spool.write(bytes: minimal, name: name)
            } catch {
                throw CommandFailure("core-handler: \(error)", status: ExitCode.cannotCreate)
            }
            // Processing reads what the crashed program controlled: in the confined worker `run` uses, as the
            // crashed user, with limits and a deadline.
            switch CoreReports.process(source, imageFiles: [], deadlineNanoseconds: deadline) {
            case .success(let full):
                do throws(SpoolError) { _ = try spool.write(bytes: full, name: name) } catch {
                    throw CommandFailure("core-handler: \(error)", status: ExitCode.cannotCreate)
                }
            case .failure(let error):
                StandardStream.err("crashwatch: core-handler: pid \(pid): \(error); the minimal report stays\n")
            }
            StandardStream.out(spool.path(of: name) + "\n")
            _ = try? spool.prune(policy: policy, protecting: name)
            return ExitCode.success
        }
    }
}
