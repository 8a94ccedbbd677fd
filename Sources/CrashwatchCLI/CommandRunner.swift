// CommandRunner.swift — what every command shares: its declared syntax (usage line, options, help page),
// the runner that parses its arguments and resolves the spool settings, and the failure it may end with.
import CrashwatchSpool
import CrashwatchSystem

/// A command's usage line, its options and its help page, declared once: the page is built from them.
struct CommandSyntax {
    /// Every command takes `-h`/`--help`; it is added last to each option list.
    static let helpSpec = OptionSpec("help", short: "h", help: "show this help")

    let usage: String
    /// The options, `--help` last.
    let specs: [OptionSpec]
    /// What the command does (the paragraph after the usage line).
    let about: String
    /// What follows the options: exit statuses, notes.
    let after: String
    /// The whole `--help` text.
    let help: String

    /// `about` says what the command does; `after` follows the options (exit statuses, notes). The manual
    /// page (`ManualPage`) and the shell completions are built from the same parts.
    init(usage: String, options: [OptionSpec], about: String, after: String) {
        self.usage = usage
        self.about = about
        self.after = after
        specs = options + [Self.helpSpec]
        help = "Usage: \(usage)\n\n\(about)\n\nOptions:\n\(renderOptions(specs))\n\n\(after)\n"
    }

    /// `crashwatch COMMAND --help`, for usage errors.
    var helpCommand: String { usage.split(separator: " ").prefix(2).joined(separator: " ") + " --help" }

    /// Prints a usage error with this command's usage line; returns the usage status.
    func failure(_ error: UsageError) -> Int32 { CLI.usageFailure(error, usage: usage, helpCommand: helpCommand) }
}

/// Exit statuses of the spool commands beyond the shared ones.
extension ExitCode {
    /// The spool could not be read or changed (BSD `EX_IOERR`).
    static let ioError: Int32 = 74
}

extension SpoolError {
    /// Whether the spool directory does not exist (reading commands then have nothing to read).
    var isMissingSpool: Bool {
        if case .openDirectory(_, let error) = self { return error.isNotFound }
        return false
    }
}

/// A command's failure: what to print and the exit status.
struct CommandFailure: Error {
    let message: String
    let status: Int32
    /// A command-line mistake found after parsing: printed with the usage line.
    let isUsage: Bool

    init(_ message: String, status: Int32) {
        self.message = message
        self.status = status
        isUsage = false
    }

    /// A usage error (exit 64, with the command's usage line).
    init(_ error: UsageError) {
        message = error.message
        status = ExitCode.usage
        isUsage = true
    }

    /// A spool error, with the status its kind deserves.
    init(_ error: SpoolError) {
        switch error {
        case .noSuchReport, .ambiguous, .invalidID, .invalidName: self.init("\(error)", status: ExitCode.noInput)
        case _ where error.isMissingSpool: self.init("\(error)", status: ExitCode.noInput)
        default: self.init("\(error)", status: ExitCode.ioError)
        }
    }
}

/// Runs `body`, a part of a command that checks its arguments, turning a usage error into a failure.
func checkingUsage<T>(_ body: () throws(UsageError) -> T) throws(CommandFailure) -> T {
    do throws(UsageError) { return try body() } catch { throw CommandFailure(error) }
}

/// Runs `body`, a use of the spool, turning a spool error into a failure.
func usingSpool<T>(_ body: () throws(SpoolError) -> T) throws(CommandFailure) -> T {
    do throws(SpoolError) { return try body() } catch { throw CommandFailure(error) }
}

/// Runs one command: parses `arguments` (answering `--help`), checks the operand count, resolves the spool
/// settings (`lenient`: the settings file's mistakes left out and named in `problems`, not usage errors),
/// then runs `body`, turning its failures into messages and exit statuses.
func spoolCommand(_ syntax: CommandSyntax, operands: ClosedRange<Int>, _ arguments: [String], lenient: Bool = false,
                  body: (ParsedArguments, SpoolSettings) throws(CommandFailure) -> Int32) -> Int32
{
    let parsed: ParsedArguments
    let settings: SpoolSettings
    do throws(UsageError) {
        parsed = try parseArguments(arguments, specs: syntax.specs, operandsEndOptions: false)
        if parsed.has("help") {
            StandardStream.out(syntax.help)
            return ExitCode.success
        }
        guard operands.contains(parsed.operands.count) else {
            throw UsageError(parsed.operands.count < operands.lowerBound ? "missing argument" : "unexpected argument '\(parsed.operands.last!)'")
        }
        settings = try SpoolSettings(parsed, lenient: lenient)
    } catch {
        return syntax.failure(error)
    }
    do {
        return try body(parsed, settings)
    } catch where error.isUsage {
        return syntax.failure(UsageError(error.message))
    } catch {
        StandardStream.err("crashwatch: \(error.message)\n")
        return error.status
    }
}
