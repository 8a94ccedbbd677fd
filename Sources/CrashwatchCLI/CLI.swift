// CLI.swift — crashwatch's entry point: dispatches to a command, prints help, usage errors and versions.
// Only this layer prints and chooses exit codes.
import CrashwatchSystem
import Glibc

/// The crashwatch command line.
public enum CLI {
    /// The version printed by `--version` and recorded in reports.
    public static let version = "0.1.0"

    static let specs: [OptionSpec] = [
        OptionSpec("help", short: "h", help: "show this help"),
        OptionSpec("version", help: "print the version"),
    ]

    static let usage = "crashwatch [--help] [--version] COMMAND [ARGS...]"

    static let help = """
        Usage: \(usage)

        An out-of-process crash reporter for Linux: runs a program as a traced child and, when it crashes,
        inspects it from a separate, healthy process.

        Commands:
          run [OPTIONS] [--] COMMAND [ARG...]   run COMMAND and report its crashes
          attach [OPTIONS] PID                  supervise a running process as run does; detach on Ctrl-C
          list [OPTIONS] [MATCH...]             list the spool's reports, newest first
          show [OPTIONS] [ID|PID|MATCH...]      show one report for people
          export [--format FORMAT] REPORT       write one report: json, text, html, otlp, sentry
          prune [OPTIONS]                       apply retention to the spool
          claim [OPTIONS]                       take reports for shipping (a reader)
          ack ID / release ID                   finish or give back a claimed report
          quarantine list|show|requeue|drop     the files readers could not use
          symbolicate [OPTIONS] ID|FILE         add names, lines and inline frames to a report offline
          ship [OPTIONS]                        send reports to an OpenTelemetry collector (OTLP/HTTP)
          analyze-core [OPTIONS] CORE           the report of a crash from its core dump
          snapshot [OPTIONS] PID                every thread's stack of a running process, left running
          debug [OPTIONS] [ID|PID|MATCH...]     gdb on the core kept for a report
          core-handler [OPTIONS] PID TID SIG T  a core_pattern helper: report every dumped crash
          doctor [OPTIONS]                      check what a crash report needs, before a crash does

        Options:
        \(renderOptions(specs))

        Spool: --spool DIR, else $CRASHWATCH_SPOOL, else the settings file's spool, else
        /var/lib/crashwatch/reports as root, else $XDG_STATE_HOME/crashwatch/reports
        (~/.local/state/crashwatch/reports). Settings: /etc/crashwatch.conf or --config FILE,
        'key = value' lines for \(ConfigFile.keys.sorted().joined(separator: ", ")).

        Run 'crashwatch COMMAND --help' for a command's options and exit statuses.
        Exit status: 0 success, 64 usage error; 'run' exits as its command did.

        """

    /// Runs the command line `arguments` (without the program name) and exits.
    public static func main(_ arguments: [String]) -> Never {
        exit(run(arguments))
    }

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try parseArguments(arguments, specs: specs, operandsEndOptions: true)
        } catch {
            return usageFailure(error, usage: usage, helpCommand: "crashwatch --help")
        }
        if parsed.has("help") {
            StandardStream.out(help)
            return ExitCode.success
        }
        if parsed.has("version") {
            StandardStream.out("crashwatch \(version)\n")
            return ExitCode.success
        }
        guard let command = parsed.operands.first else {
            return usageFailure(UsageError("no command given"), usage: usage, helpCommand: "crashwatch --help")
        }
        let rest = Array(parsed.operands.dropFirst())
        switch command {
        case "run": return RunCommand.main(rest)
        case "attach": return AttachCommand.main(rest)
        case ProcessCommand.name: return ProcessCommand.main(rest)
        case ManualCommand.name: return ManualCommand.main(rest)
        case "symbolicate": return SymbolicateCommand.main(rest)
        case "list": return ListCommand.main(rest)
        case "show": return ShowCommand.main(rest)
        case "export": return ExportCommand.main(rest)
        case "prune": return PruneCommand.main(rest)
        case "claim": return ClaimCommand.main(rest)
        case "ack": return FinishClaimCommand.ack.main(rest)
        case "release": return FinishClaimCommand.release.main(rest)
        case "quarantine": return QuarantineCommand.main(rest)
        case "debug": return DebugCommand.main(rest)
        case "ship": return ShipCommand.main(rest)
        case "analyze-core": return AnalyzeCoreCommand.main(rest)
        case "snapshot": return SnapshotCommand.main(rest)
        case "core-handler": return CoreHandlerCommand.main(rest)
        case "doctor": return DoctorCommand.main(rest)
        case "help": StandardStream.out(help); return ExitCode.success
        default:
            return usageFailure(UsageError("unknown command '\(command)'"), usage: usage, helpCommand: "crashwatch --help")
        }
    }

    /// Prints `crashwatch: MESSAGE`, the usage line and where to find help; returns the usage status.
    static func usageFailure(_ error: UsageError, usage: String, helpCommand: String) -> Int32 {
        StandardStream.err("crashwatch: \(error.message)\nUsage: \(usage)\nTry '\(helpCommand)' for more information.\n")
        return ExitCode.usage
    }
}
