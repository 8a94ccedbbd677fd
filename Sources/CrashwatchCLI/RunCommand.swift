// RunCommand.swift — `crashwatch run`: options, the supervisor, one stderr line per crash, and an exit
// status identical to the command's.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSystem

/// `crashwatch run [options] [--] COMMAND [ARG...]`.
enum RunCommand {
    static let specs: [OptionSpec] = [
        OptionSpec("no-follow-forks", help: "do not trace forked children (their crashes go unreported)"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]

    static let help = """
        Usage: crashwatch run [OPTIONS] [--] COMMAND [ARG...]

        Runs COMMAND (looked up in PATH) as a traced child and reports its crashes. The child inherits
        stdin, stdout, stderr, the working directory, the environment, rlimits and the process group;
        TERM, INT, HUP, QUIT, USR1, USR2, WINCH, ALRM, CONT, TSTP, TTIN and TTOU sent to crashwatch are
        passed on (signals a terminal sends to the whole foreground group are not sent twice). Threads,
        forks, vforks and execs are followed. A crash is a core-dumping signal (SEGV, BUS, ILL, FPE,
        ABRT, TRAP, SYS, QUIT, XCPU, XFSZ) delivered with its default action; a signal the program
        handles and recovers from is not one. Each crash prints one line to stderr.

        Options:
        \(renderOptions(specs))

        Exit status:
          the command's own: its exit code, or death by the same signal (128+N in a shell); as PID 1
          of a PID namespace, where a process cannot kill itself, 128+N
          64   usage error
          71   supervision could not be set up (fork or ptrace failed)
          126  COMMAND found but not executable
          127  COMMAND not found

        """

    static func main(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try parseArguments(arguments, specs: specs, operandsEndOptions: true)
        } catch {
            return CLI.usageFailure(error, usage: "crashwatch run [OPTIONS] [--] COMMAND [ARG...]", helpCommand: "crashwatch run --help")
        }
        if parsed.has("help") {
            StandardStream.out(help)
            return ExitCode.success
        }
        guard !parsed.operands.isEmpty, !parsed.operands[0].isEmpty else {
            return CLI.usageFailure(UsageError("no command given"), usage: "crashwatch run [OPTIONS] [--] COMMAND [ARG...]",
                                    helpCommand: "crashwatch run --help")
        }

        var options = SupervisorOptions(command: parsed.operands)
        options.followForks = !parsed.has("no-follow-forks")

        let printer = CrashLinePrinter()
        let status: WaitStatus
        do {
            let supervisor = try Supervisor(options: options, observer: printer)
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

/// Prints one line per crash and per abnormal exit to stderr.
final class CrashLinePrinter: SupervisorObserver {
    func supervisorDetected(_ crash: DetectedCrash, stopped: StoppedProcess) {
        StandardStream.err(CrashLine.crashed(crash) + "\n")
    }

    func supervisorSawAbnormalExit(_ exit: AbnormalExit) {
        StandardStream.err(CrashLine.abnormalExit(exit) + "\n")
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
