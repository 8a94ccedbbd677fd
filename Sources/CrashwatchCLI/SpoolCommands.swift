// SpoolCommands.swift — reading the spool: list, show, export, prune, and claim/ack/release for shippers.
// Every command reads names first and parses only the reports it prints; a file that cannot be read as
// a report is quarantined with its reason and never stops a listing.
import CrashwatchRender
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

extension SpoolError {
    /// Whether the spool directory does not exist (reading commands then have nothing to read).
    var isMissingSpool: Bool {
        if case .openDirectory(_, let error) = self { return error.isNotFound }
        return false
    }
}

/// Exit statuses of the spool commands beyond the shared ones.
extension ExitCode {
    /// The spool could not be read or changed (BSD `EX_IOERR`).
    static let ioError: Int32 = 74
}

/// Runs one spool command body, turning its errors into messages and exit statuses.
func spoolCommand(usage: String, help: String, specs: [OptionSpec], operands: ClosedRange<Int>,
                          _ arguments: [String], body: (ParsedArguments, SpoolSettings) throws(CommandFailure) -> Int32) -> Int32
{
    let parsed: ParsedArguments
    let settings: SpoolSettings
    do throws(UsageError) {
        parsed = try parseArguments(arguments, specs: specs, operandsEndOptions: false)
        if parsed.has("help") {
            StandardStream.out(help)
            return ExitCode.success
        }
        guard operands.contains(parsed.operands.count) else {
            throw UsageError(parsed.operands.count < operands.lowerBound ? "missing argument" : "unexpected argument '\(parsed.operands.last!)'")
        }
        settings = try SpoolSettings(parsed)
    } catch {
        let command = usage.split(separator: " ").prefix(2).joined(separator: " ")
        return CLI.usageFailure(error, usage: usage, helpCommand: "\(command) --help")
    }
    do {
        return try body(parsed, settings)
    } catch {
        StandardStream.err("crashwatch: \(error.message)\n")
        return error.status
    }
}

/// A command's failure: what to print and the exit status.
struct CommandFailure: Error {
    let message: String
    let status: Int32

    init(_ message: String, status: Int32) {
        self.message = message
        self.status = status
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

/// The style for output on standard output: color and width when it is a terminal (and NO_COLOR unset).
private func outputStyle(_ parsed: ParsedArguments) -> Style {
    var style = Style(isTerminal: Terminal.isTerminal(1), environment: ProcessEnvironment.current, width: Terminal.columns(1))
    switch parsed.value("color") {
    case "always": style.color = true
    case "never": style.color = false
    default: break
    }
    return style
}

/// Reads and decodes one report of the spool, quarantining it (and saying so) when it is not one; a report
/// this user may not read (another user's, 0640, outside their group) is counted in `unreadable`, not
/// quarantined: it is a good report, for someone else.
private func load(_ name: ReportFileName, from spool: Spool, unreadable: inout Int) -> CrashReport? {
    let reason: String
    do {
        return try CrashReport.decode(try spool.read(name))
    } catch let error as SpoolError {
        if case .readReport(_, _, let system) = error {
            if system.isPermissionDenied { unreadable += 1 }
            return nil  // else gone meanwhile (pruned, claimed): not a bad file
        }
        if case .notARegularFile = error { return nil }  // a link or directory under a report's name: never followed
        reason = "\(error)"
    } catch {
        reason = "not a valid report: \(error)"
    }
    do {
        try spool.quarantine(name: name.text, reason: reason)
        StandardStream.err("crashwatch: quarantined \(name.text): \(reason)\n")
    } catch {
        StandardStream.err("crashwatch: \(name.text) is unreadable (\(reason)) and could not be quarantined: \(error)\n")
    }
    return nil
}

/// The one line about reports this user may not read, with the fix: `3 reports in /var/lib/crashwatch/reports
/// are not readable by you (join the crashwatch group, or use sudo)`; `newer` says they are newer than the
/// one shown.
func unreadableReportsLine(_ count: Int, spool: String, newer: Bool = false) -> String {
    let what = count == 1 ? "1 \(newer ? "newer " : "")report in \(spool) is" : "\(count) \(newer ? "newer " : "")reports in \(spool) are"
    return "\(what) not readable by you (join the \(Spool.readerGroupName) group, or use sudo)"
}

/// Finds the report an argument names: `latest`, a file path (with a `/`), a report file name in the
/// spool, or a unique prefix of a report id. Returns its bytes.
private func reportBytes(_ argument: String?, settings: SpoolSettings) throws(CommandFailure) -> [UInt8] {
    if let argument, argument.contains("/") {
        // A FIFO or device there would block or never end: only a regular file, opened without blocking.
        do { return try UntrustedFile.readWhole(argument, limit: Spool.defaultMaxReadBytes) } catch {
            throw CommandFailure("cannot read report \(argument): \(error.isNotRegularFile ? "not a regular file" : error.reason)",
                                 status: ExitCode.noInput)
        }
    }
    do {
        let spool = try settings.open()
        let name: ReportFileName
        if argument == nil || argument == "latest" {
            // The newest report that is one: a corrupt or foreign file under a newer name is quarantined
            // (and said so), as `list` does, and the next newest taken. Newer reports this user may not
            // read are skipped too, and said so: the one shown is then not the newest there is.
            var unreadable = 0
            for entry in try spool.reports().reversed() {
                if load(entry.name, from: spool, unreadable: &unreadable) != nil, let bytes = try? spool.read(entry.name) {
                    if unreadable > 0 {
                        StandardStream.err("crashwatch: \(unreadableReportsLine(unreadable, spool: settings.spool, newer: true))\n")
                    }
                    return bytes
                }
            }
            if unreadable > 0 { throw CommandFailure(unreadableReportsLine(unreadable, spool: settings.spool), status: ExitCode.ioError) }
            throw CommandFailure("no crash reports in \(settings.spool)", status: ExitCode.noInput)
        } else if let argument, argument.hasSuffix(ReportFileName.suffix) {
            name = try spool.validatedName(argument)
        } else {
            name = try spool.find(idPrefix: argument!)
        }
        return try spool.read(name)
    } catch let error as SpoolError {
        throw CommandFailure(error)
    } catch let error as CommandFailure {
        throw error
    } catch {
        throw CommandFailure("\(error)", status: ExitCode.ioError)
    }
}

/// Decodes report bytes, or fails with the data-error status.
private func decodeReport(_ bytes: [UInt8], _ argument: String?) throws(CommandFailure) -> CrashReport {
    do { return try CrashReport.decode(bytes) } catch {
        throw CommandFailure("\(argument ?? "latest") is not a crash report: \(error)", status: ExitCode.dataError)
    }
}

/// Parses `--since`: an RFC 3339 time, a date (`2026-11-30`, midnight UTC), or a duration ago (`2h`, `7d`).
func parseSince(_ text: String, now: Int64) throws(UsageError) -> Int64 {
    if let time = RFC3339.parse(text) { return time }
    if let time = RFC3339.parse(text + "T00:00:00.000Z") { return time }
    do {
        let duration = try DurationText.parse(text)
        // Longer ago than the epoch (or than Int64 nanoseconds can say) is every report.
        let (nanoseconds, overflow) = duration.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow || nanoseconds > now ? 0 : now - nanoseconds
    } catch {
        throw UsageError("--since takes a time (2026-11-30T09:00:00Z), a date (2026-11-30) or a duration ago (2h, 7d), not '\(text)'")
    }
}

// MARK: - list

enum ListCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + [
        OptionSpec("json", help: "print a JSON array of the same fields"),
        OptionSpec("limit", short: "n", value: "N", help: "show at most the N newest reports (default: all)"),
        OptionSpec("since", value: "TIME", help: "only reports since TIME: 2026-11-30T09:00:00Z, 2026-11-30, or a duration ago (2h, 7d)"),
        OptionSpec("color", value: "WHEN", help: "auto (default: on a terminal, unless NO_COLOR is set), always or never"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]
    static let usage = "crashwatch list [OPTIONS]"
    static let help = """
        Usage: \(usage)

        Lists the spool's crash reports, newest first, one line each: time (UTC), pid, signal, executable,
        top in-app frame and short report id; when some report failed to ship, how many attempts failed
        (the JSON form also has the last error). Only the reports printed are read; a file that is not a
        valid report is moved to the spool's .quarantine/ folder with its reason, and the listing goes on.
        Reports you may not read (another user's, outside your groups) are counted in one line on stderr.

        Options:
        \(renderOptions(specs))

        Exit status: 0 listed (also when empty), 64 usage error, 74 the spool cannot be read (also when
        it holds reports and you may read none of them).

        """

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(usage: usage, help: help, specs: specs, operands: 0...0, arguments) { parsed, settings throws(CommandFailure) in
            var limit = Int.max
            var since: Int64?
            do throws(UsageError) {
                if let text = parsed.value("limit") {
                    guard let value = Int(text), value >= 1 else { throw UsageError("--limit needs a whole number of at least 1, not '\(text)'") }
                    limit = value
                }
                if let text = parsed.value("since") { since = try parseSince(text, now: Clock.realtimeNanoseconds()) }
                if let color = parsed.value("color"), !["auto", "always", "never"].contains(color) {
                    throw UsageError("--color takes auto, always or never, not '\(color)'")
                }
            } catch {
                return CLI.usageFailure(error, usage: usage, helpCommand: "crashwatch list --help")
            }
            let spool: Spool
            do throws(SpoolError) {
                spool = try settings.open()
            } catch {
                if error.isMissingSpool { return emit([], parsed: parsed, spool: settings.spool) }
                throw CommandFailure(error)
            }
            let names: [ReportFileName]
            do throws(SpoolError) { names = try spool.reportNames() } catch { throw CommandFailure(error) }
            var summaries: [ReportSummary] = []
            var unreadable = 0
            let attempts = spool.allAttempts()
            for name in names.reversed() {
                if summaries.count == limit { break }
                if let since, name.timeNanoseconds < since { break }
                if let report = load(name, from: spool, unreadable: &unreadable) {
                    var summary = ReportSummary(report)
                    summary.shipAttempts = attempts[name]?.count
                    summary.shipError = attempts[name]?.lastError
                    summaries.append(summary)
                }
            }
            guard unreadable > 0 else { return emit(summaries, parsed: parsed, spool: settings.spool) }
            // Reports there but none readable: "No crash reports" would be wrong, and so would success.
            let line = unreadableReportsLine(unreadable, spool: settings.spool)
            if summaries.isEmpty { throw CommandFailure(line, status: ExitCode.ioError) }
            let status = emit(summaries, parsed: parsed, spool: settings.spool)
            StandardStream.err("crashwatch: \(line)\n")
            return status
        }
    }

    private static func emit(_ summaries: [ReportSummary], parsed: ParsedArguments, spool: String) -> Int32 {
        StandardStream.out(parsed.has("json") ? ReportSummary.json(summaries)
                                              : ListRenderer.render(summaries, spool: spool, style: outputStyle(parsed)))
        return ExitCode.success
    }
}

// MARK: - show and export

enum ShowCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + [
        OptionSpec("json", help: "print the report itself (JSON)"),
        OptionSpec("color", value: "WHEN", help: "auto (default), always or never"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]
    static let usage = "crashwatch show [OPTIONS] [ID|FILE|latest]"
    static let help = """
        Usage: \(usage)

        Shows one crash report for people, like coredumpctl info: what crashed, when, the signal and fault
        address, app and host; the crashed thread's frames first (in-app frames marked *), then the other
        threads, then the images. ID is a report id or a unique prefix of one; FILE a report file (a
        path with a '/', or a file name in the spool); the default is the latest report you may read
        (newer ones you may not read are counted in one line on stderr).

        Options:
        \(renderOptions(specs))

        Exit status: 0 shown, 64 usage error, 65 not a report, 66 no such report, 74 the spool cannot be read.

        """

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(usage: usage, help: help, specs: specs, operands: 0...1, arguments) { parsed, settings throws(CommandFailure) in
            let argument = parsed.operands.first
            let bytes = try reportBytes(argument, settings: settings)
            let report = try decodeReport(bytes, argument)
            StandardStream.out(parsed.has("json") ? String(decoding: bytes, as: UTF8.self)
                                                  : ShowRenderer.render(report, style: outputStyle(parsed)))
            return ExitCode.success
        }
    }
}

enum ExportCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + [
        OptionSpec("format", value: "FORMAT", help: "json (default: the report as stored), text (the show page without color), or otlp (what 'ship' sends: an OTLP/JSON ExportLogsServiceRequest)"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]
    static let usage = "crashwatch export [OPTIONS] REPORT"
    static let help = """
        Usage: \(usage)

        Writes one report to standard output in the chosen format. REPORT is an id (or a unique prefix),
        a report file, or latest (the latest you may read; newer ones you may not read are counted in one
        line on stderr).

        Options:
        \(renderOptions(specs))

        Exit status: 0 written, 64 usage error, 65 not a report, 66 no such report, 74 the spool cannot be read.

        """

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(usage: usage, help: help, specs: specs, operands: 1...1, arguments) { parsed, settings throws(CommandFailure) in
            let format = parsed.value("format") ?? "json"
            guard ["json", "text", "otlp"].contains(format) else {
                return CLI.usageFailure(UsageError("--format takes json, text or otlp, not '\(format)'"), usage: usage,
                                        helpCommand: "crashwatch export --help")
            }
            let argument = parsed.operands[0]
            let bytes = try reportBytes(argument, settings: settings)
            let report = try decodeReport(bytes, argument)
            switch format {
            case "json": StandardStream.out(String(decoding: bytes, as: UTF8.self))
            case "otlp":
                let request = OTLPLogs.request(for: report, reportText: bytes, scope: OTLPLogs.Scope(version: CLI.version))
                StandardStream.out(String(decoding: request, as: UTF8.self) + "\n")
            default: StandardStream.out(TextExport.render(report))
            }
            return ExitCode.success
        }
    }
}

// MARK: - prune

enum PruneCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + SpoolSettings.retentionSpecs + [
        OptionSpec("dry-run", help: "say what would be removed, remove nothing"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]
    static let usage = "crashwatch prune [OPTIONS]"
    static let help = """
        Usage: \(usage)

        Applies retention to the spool, oldest first: the flood guard (--max-per-exe) first, so one
        executable crashing in a loop cannot evict the others, then --max-age, --max-reports and
        --max-bytes. Claimed reports are never removed (they are named). Temporary files left by writers
        that died more than an hour ago are removed. Only file names are read. Settings come from the
        command line, then the settings file, then the defaults (50 reports).

        Options:
        \(renderOptions(specs))

        Exit status: 0 done, 64 usage error, 74 the spool cannot be read or a file could not be removed.

        """

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(usage: usage, help: help, specs: specs, operands: 0...0, arguments) { parsed, settings throws(CommandFailure) in
            let policy: RetentionPolicy
            do throws(UsageError) { policy = try settings.retention(parsed) } catch {
                return CLI.usageFailure(error, usage: usage, helpCommand: "crashwatch prune --help")
            }
            let spool: Spool
            do throws(SpoolError) { spool = try settings.open() } catch { throw CommandFailure(error) }
            if parsed.has("dry-run") {
                do throws(SpoolError) {
                    let decisions = try spool.retentionDecisions(policy: policy)
                    var text = ""
                    for decision in decisions { text += "would remove \(decision.entry.name.text) (\(decision.reason))\n" }
                    StandardStream.out(text + "\(decisions.count) would be removed\n")
                    return ExitCode.success
                } catch { throw CommandFailure(error) }
            }
            let result: PruneResult
            do throws(SpoolError) { result = try spool.prune(policy: policy) } catch { throw CommandFailure(error) }
            var text = ""
            for file in result.removed { text += "removed \(file.name) (\(file.reason))\n" }
            for name in result.skippedClaimed { text += "kept \(name): claimed by a reader\n" }
            for name in result.skippedForeign { text += "kept \(name): owned by another user, not written by this crashwatch\n" }
            text += "\(result.removed.count) removed, \(result.kept.count) kept"
            if !result.skippedClaimed.isEmpty { text += ", \(result.skippedClaimed.count) claimed" }
            if !result.skippedForeign.isEmpty { text += ", \(result.skippedForeign.count) foreign" }
            text += "\n"
            StandardStream.out(text)
            for failure in result.failures { StandardStream.err("crashwatch: \(failure)\n") }
            return result.failures.isEmpty ? ExitCode.success : ExitCode.ioError
        }
    }
}

// MARK: - claim, ack, release

enum ClaimCommands {
    static let holderSpec = OptionSpec("holder", value: "PID", help: "claim on behalf of process PID (default: this process, so the claim goes stale when it exits)")

    static let claimSpecs: [OptionSpec] = SpoolSettings.locationSpecs + [
        OptionSpec("limit", short: "n", value: "N", help: "claim up to N reports, oldest first (default 1)"),
        OptionSpec("json", help: "print a JSON array of {id, name, path}"),
        holderSpec,
        OptionSpec("help", short: "h", help: "show this help"),
    ]
    static let idSpecs: [OptionSpec] = SpoolSettings.locationSpecs + [holderSpec, OptionSpec("help", short: "h", help: "show this help")]

    static let claimUsage = "crashwatch claim [OPTIONS]"
    static let claimHelp = """
        Usage: \(claimUsage)

        Takes the oldest unclaimed reports for a reader (a shipper), so no other reader takes them: each
        moves to the spool's .claims/ folder under the holder's pid and start time. Prints "ID PATH" per
        claimed report (nothing when there is none). Finish with 'crashwatch ack ID' once the receiver
        confirmed, or 'crashwatch release ID' to give it back. A claim whose holder died is claimable
        again, and taken first. A minimal report whose crashwatch is still making the full report is
        left until the full one replaces it. A report another user wrote is taken only when its name,
        owner and content agree (see the README's spool trust model); others are left where they are.

        Options:
        \(renderOptions(claimSpecs))

        Exit status: 0 done (also when nothing was claimable), 64 usage error, 74 the spool cannot be changed.

        """

    static func claim(_ arguments: [String]) -> Int32 {
        spoolCommand(usage: claimUsage, help: claimHelp, specs: claimSpecs, operands: 0...0, arguments) { parsed, settings throws(CommandFailure) in
            var limit = 1
            if let text = parsed.value("limit") {
                guard let value = Int(text), value >= 1 else {
                    return CLI.usageFailure(UsageError("--limit needs a whole number of at least 1, not '\(text)'"), usage: claimUsage,
                                            helpCommand: "crashwatch claim --help")
                }
                limit = value
            }
            let holder = try self.holder(parsed)
            let claims: [ClaimedReport]
            do throws(SpoolError) { claims = try settings.open().claim(limit: limit, holder: holder) } catch { throw CommandFailure(error) }
            if parsed.has("json") {
                let items = claims.map { claim in
                    "  {\"id\": \(JSONText.string(claim.name.idText)), \"name\": \(JSONText.string(claim.name.text)), \"path\": \(JSONText.string(claim.path))}"
                }
                StandardStream.out(items.isEmpty ? "[]\n" : "[\n" + items.joined(separator: ",\n") + "\n]\n")
            } else {
                StandardStream.out(claims.map { "\($0.name.idText) \($0.path)\n" }.joined())
            }
            return ExitCode.success
        }
    }

    static let ackUsage = "crashwatch ack [OPTIONS] ID"
    static let ackHelp = """
        Usage: \(ackUsage)

        Removes a claimed report for good, once its receiver confirmed it. ID is the report id or a unique
        prefix. A report claimed by another live process is refused; one whose holder died may be acked.

        Options:
        \(renderOptions(idSpecs))

        Exit status: 0 removed, 64 usage error, 66 no such claimed report, 74 refused or the spool cannot be changed.

        """

    static func acknowledge(_ arguments: [String]) -> Int32 {
        finish(arguments, usage: ackUsage, help: ackHelp, done: "acknowledged") { spool, id, holder throws(SpoolError) in
            try spool.acknowledge(id: id, holder: holder)
        }
    }

    static let releaseUsage = "crashwatch release [OPTIONS] ID"
    static let releaseHelp = """
        Usage: \(releaseUsage)

        Gives a claimed report back to the spool, for another reader (the receiver refused it, or the
        shipper stops). ID is the report id or a unique prefix.

        Options:
        \(renderOptions(idSpecs))

        Exit status: 0 released, 64 usage error, 66 no such claimed report, 74 refused or the spool cannot be changed.

        """

    static func release(_ arguments: [String]) -> Int32 {
        finish(arguments, usage: releaseUsage, help: releaseHelp, done: "released") { spool, id, holder throws(SpoolError) in
            try spool.release(id: id, holder: holder)
        }
    }

    /// Ends a claim by id (`ack`, `release`) and says what was done to which report.
    private static func finish(_ arguments: [String], usage: String, help: String, done: String,
                               _ action: (Spool, String, ClaimHolder?) throws(SpoolError) -> ReportFileName) -> Int32
    {
        spoolCommand(usage: usage, help: help, specs: idSpecs, operands: 1...1, arguments) { parsed, settings throws(CommandFailure) in
            let holder = try self.holder(parsed)
            do throws(SpoolError) {
                let name = try action(try settings.open(), parsed.operands[0], holder)
                StandardStream.out("\(done) \(name.text)\n")
            } catch { throw CommandFailure(error) }
            return ExitCode.success
        }
    }

    private static func holder(_ parsed: ParsedArguments) throws(CommandFailure) -> ClaimHolder? {
        guard let text = parsed.value("holder") else { return nil }
        guard let pid = Int32(text), pid > 0 else { throw CommandFailure("--holder needs a process id, not '\(text)'", status: ExitCode.usage) }
        do throws(SystemError) { return try ClaimHolder(process: pid) } catch {
            throw CommandFailure("--holder \(pid): \(error)", status: ExitCode.usage)
        }
    }
}
