// RunCommand.swift — `crashwatch run`: options, the supervisor, a report in the spool and one stderr
// line per crash, and an exit status identical to the command's.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

/// `crashwatch run [options] [--] COMMAND [ARG...]`.
enum RunCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + SpoolSettings.retentionSpecs + [
        OptionSpec("app-root", value: "DIR", repeatable: true, help: "images under DIR are in-app (default: the executable's directory, or its parent when that is bin, sbin or libexec)"),
        OptionSpec("env-allow", value: "NAME", repeatable: true, help: "record environment variable NAME in reports (none are recorded otherwise)"),
        OptionSpec("redact-args", help: "record only argv[0] of the command line; later arguments become <redacted>"),
        OptionSpec("app-name", value: "NAME", help: "app name for reports (default: $CRASHWATCH_APP_NAME of the crashed process)"),
        OptionSpec("app-version", value: "VERSION", help: "app version for reports (default: $CRASHWATCH_APP_VERSION)"),
        OptionSpec("app-release", value: "RELEASE", help: "app release for reports (default: $CRASHWATCH_APP_RELEASE)"),
        OptionSpec("max-frames", value: "N", help: "unwind at most N frames per thread (default 256)"),
        OptionSpec("capture-timeout", value: "SECONDS", help: "hold a crashed process at most this long, then write what was captured (default 10)"),
        OptionSpec("symbolicate", value: "MODE", help: "at capture: full (functions, file:line, inline frames; default), functions, or none"),
        OptionSpec("debug-dir", value: "DIR", repeatable: true, help: "also look for separate debug info under DIR (DIR/.build-id/xx/rest.debug)"),
        OptionSpec("no-follow-forks", help: "do not trace forked children (their crashes go unreported)"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]

    static let usage = "crashwatch run [OPTIONS] [--] COMMAND [ARG...]"

    static let help = """
        Usage: \(usage)

        Runs COMMAND (looked up in PATH) as a traced child and reports its crashes. The child inherits
        stdin, stdout, stderr, the working directory, the environment, rlimits and the process group.
        TERM, INT, HUP, QUIT, USR1, USR2, WINCH, ALRM, CONT, TSTP, TTIN and TTOU sent to crashwatch are
        passed on once: a signal sent to the whole group, by the terminal or by a process, is not sent
        again when the child already has it. Threads, forks, vforks and execs are followed.

        A crash is a core-dumping signal (SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS, QUIT, XCPU, XFSZ)
        delivered with its default action; a signal the program handles and recovers from is not one.
        For each crash crashwatch stops every thread, unwinds every stack, writes a JSON report (schema
        version 1) into the spool, prints one line naming the crash and one naming the report to
        stderr, and lets the program die as it would have.

        Options:
        \(renderOptions(specs))

        Spool:
          --spool, else $CRASHWATCH_SPOOL, else /var/lib/crashwatch/reports as root, else
          $XDG_STATE_HOME/crashwatch/reports (~/.local/state/crashwatch/reports). Reports are named
          <UTC time>-<pid>-<report id>.json, written atomically with mode 0640.

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
    }

    static func configuration(_ parsed: ParsedArguments) throws(UsageError) -> Configuration
    {
        guard !parsed.operands.isEmpty, !parsed.operands[0].isEmpty else { throw UsageError("no command given") }
        var supervisor = SupervisorOptions(command: parsed.operands)
        supervisor.followForks = !parsed.has("no-follow-forks")
        if let text = parsed.value("capture-timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                throw UsageError("--capture-timeout needs a number of seconds between 0 and 3600, not '\(text)'")
            }
            supervisor.captureTimeoutNanoseconds = Int64(seconds * 1e9)
        }

        var capture = CaptureOptions(crashwatchVersion: CLI.version)
        if let text = parsed.value("max-frames") {
            guard let frames = Int(text), frames >= 1, frames <= 100_000 else {
                throw UsageError("--max-frames needs a whole number from 1 to 100000, not '\(text)'")
            }
            capture.maxFrames = frames
        }
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
        for name in parsed.all("env-allow") where name.isEmpty || name.contains("=") {
            throw UsageError("--env-allow needs a variable name, not '\(name)'")
        }
        capture.environmentAllowList = parsed.all("env-allow")
        capture.redactArguments = parsed.has("redact-args")
        capture.app = AppRecord(name: parsed.value("app-name"), version: parsed.value("app-version"),
                                release: parsed.value("app-release"))

        let settings = try SpoolSettings(parsed)
        return Configuration(supervisor: supervisor, capture: capture, spool: settings.spool,
                             retention: try settings.retention(parsed))
    }

    static func main(_ arguments: [String]) -> Int32 {
        let configuration: Configuration
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

        let reporter = CrashReporter(configuration: configuration)
        let status: WaitStatus
        do {
            let supervisor = try Supervisor(options: configuration.supervisor, observer: reporter)
            status = try supervisor.run()
        } catch {
            switch error {
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
        SelfProcess.terminate(like: status)
    }
}

/// Captures each crash into the spool and prints what happened to stderr.
final class CrashReporter: SupervisorObserver {
    private let configuration: RunCommand.Configuration

    init(configuration: RunCommand.Configuration) { self.configuration = configuration }

    func supervisorDetected(_ crash: DetectedCrash, stopped: StoppedProcess) {
        StandardStream.err(CrashLine.crashed(crash) + "\n")
        let report = CrashCapture.report(for: crash, stopped: stopped, options: configuration.capture)
        StandardStream.err(write(report, pid: crash.pid, time: crash.timeNanoseconds) + "\n")
    }

    func supervisorSawAbnormalExit(_ exit: AbnormalExit) {
        StandardStream.err(CrashLine.abnormalExit(exit) + "\n")
    }

    /// Writes the report and applies retention; returns the line to print.
    private func write(_ report: CrashReport, pid: Int32, time: Int64) -> String {
        do {
            let bytes = try report.encodedJSON()
            let spool = try Spool(path: configuration.spool)
            let name = ReportFileName(timeNanoseconds: time, pid: pid, executable: report.process.executable,
                                      id: UUID(uuidString: report.id) ?? UUID())
            let path = try spool.write(bytes: bytes, name: name)
            _ = try? spool.prune(policy: configuration.retention)
            return "crashwatch: report written to \(path)"
        } catch let error as SpoolError {
            return "crashwatch: \(error)"
        } catch {
            return "crashwatch: cannot encode report for spool \(configuration.spool): \(error)"
        }
    }
}

/// The one-line summaries crashwatch prints to stderr.
enum CrashLine {
    /// `crashwatch: ./app[1234] crashed: SIGSEGV (SEGV_MAPERR) at 0x0, thread 1236 "worker"`.
    static func crashed(_ crash: DetectedCrash) -> String {
        var line = "crashwatch: \(crash.executable)[\(crash.pid)] crashed: \(faultText(crash.signal)), thread \(crash.tid)"
        if let name = crash.threadName { line += " \"\(name)\"" }
        if let original = crash.originalFault {
            line += "; original fault: \(faultText(original.signal)), thread \(original.tid)"
        }
        return line
    }

    /// `crashwatch: ./app[1234] killed by SIGKILL (abnormal exit, not a crash)`.
    static func abnormalExit(_ exit: AbnormalExit) -> String {
        "crashwatch: \(exit.executable)[\(exit.pid)] killed by \(exit.signal.name) (abnormal exit, not a crash)"
    }

    private static func faultText(_ info: SignalInfo) -> String {
        var text = info.typeName
        if let address = info.faultAddress { text += " at \(hex(address))" }
        if let sender = info.senderPID { text += " from pid \(sender)" }
        return text
    }
}
