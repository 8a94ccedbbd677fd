// ListCommand.swift — `crashwatch list`: the spool's reports, newest first, one line each (or JSON).
import CrashwatchRender
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

enum ListCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch list [OPTIONS]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("json", help: "print a JSON array of the same fields"),
            OptionSpec("limit", short: "n", value: "N", help: "show at most the N newest reports (default: all)"),
            OptionSpec("since", value: "TIME", help: "only reports since TIME: 2026-11-30T09:00:00Z, 2026-11-30, or a duration ago (2h, 7d)"),
            OptionSpec("color", value: "WHEN", help: "auto (default: on a terminal, unless NO_COLOR is set), always or never"),
            OptionSpec("group", short: "g", help: "one line per crash group (fingerprint) instead of per report"),
            OptionSpec("fingerprint", value: "F", help: "only reports (or groups) whose fingerprint starts with F (4 to 32 hex digits)"),
        ],
        about: """
            Lists the spool's crash reports, newest first, one line each: time (UTC), pid, signal, executable,
            top in-app frame and short report id; when some report failed to ship, how many attempts failed
            (the JSON form also has the last error). Only the reports printed are read; a file that is not a
            valid report is moved to the spool's .quarantine/ folder with its reason, and the listing goes on.
            Reports you may not read (another user's, outside your groups) are counted in one line on stderr.
            With --group, one line per crash group instead — every report with one fingerprint, the same bug:
            last seen, count, first seen, signal, executable, app versions seen, top frame and fingerprint,
            newest first, from the spool's group index (counts and times outlive retention and shipping).
            """,
        after: """
            Exit status: 0 listed (also when empty), 64 usage error, 74 the spool cannot be read (also when
            it holds reports and you may read none of them).
            """)

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...0, arguments) { parsed, settings throws(CommandFailure) in
            let (limit, since, fingerprint) = try checkingUsage { () throws(UsageError) -> (Int, Int64?, String?) in
                let limit = try parsed.value("limit", OptionValue.count) ?? Int.max
                let since = try parsed.value("since") { text, _ throws(UsageError) in try parseSince(text, now: Clock.realtimeNanoseconds()) }
                _ = try parsed.value("color") { text, option throws(UsageError) in
                    try OptionValue.choice(text, option: option, among: ["auto", "always", "never"])
                }
                let fingerprint = try parsed.value("fingerprint") { text, option throws(UsageError) in try fingerprintPrefix(text, option: option) }
                return (limit, since, fingerprint)
            }
            let spool: Spool
            do throws(SpoolError) {
                spool = try settings.open()
            } catch {
                if error.isMissingSpool { return emit([], parsed: parsed, spool: settings.spool) }
                throw CommandFailure(error)
            }
            if parsed.has("group") {
                let index = try usingSpool { () throws(SpoolError) in try spool.groupIndex() }
                let groups = index.newestFirst.filter { group in
                    (since.map { group.lastSeenMs >= $0 / 1_000_000 } ?? true) && (fingerprint.map { group.fingerprint.hasPrefix($0) } ?? true)
                }.prefix(limit)
                StandardStream.out(parsed.has("json") ? GroupRenderer.json(Array(groups))
                                                      : GroupRenderer.render(Array(groups), spool: settings.spool, style: outputStyle(parsed)))
                return ExitCode.success
            }
            var unreadable = 0
            let summaries = try summaries(of: spool, limit: limit, since: since, fingerprint: fingerprint, unreadable: &unreadable)
            guard unreadable > 0 else { return emit(summaries, parsed: parsed, spool: settings.spool) }
            // Reports there but none readable: "No crash reports" would be wrong, and so would success.
            let line = unreadableReportsLine(unreadable, spool: settings.spool)
            if summaries.isEmpty { throw CommandFailure(line, status: ExitCode.ioError) }
            let status = emit(summaries, parsed: parsed, spool: settings.spool)
            StandardStream.err("crashwatch: \(line)\n")
            return status
        }
    }

    /// The newest `limit` reports since `since` (nanoseconds) whose fingerprint starts with `fingerprint`, each with
    /// its failed shipping attempts; those this user may not read are counted in `unreadable`.
    private static func summaries(of spool: Spool, limit: Int, since: Int64?, fingerprint: String?,
                                  unreadable: inout Int) throws(CommandFailure) -> [ReportSummary] {
        let names = try usingSpool { () throws(SpoolError) in try spool.reportNames() }
        var summaries: [ReportSummary] = []
        let attempts = spool.allAttempts()
        for name in names.reversed() {
            if summaries.count == limit { break }
            if let since, name.timeNanoseconds < since { break }
            if let report = load(name, from: spool, unreadable: &unreadable), fingerprint.map({ hasFingerprint(report, $0) }) ?? true {
                var summary = ReportSummary(report)
                // A record of deliveries alone (count 0: one destination took it, the other was not tried) is no failure.
                if let record = attempts[name], record.count > 0 {
                    summary.shipAttempts = record.count
                    summary.shipError = record.lastError
                }
                summaries.append(summary)
            }
        }
        return summaries
    }

    private static func emit(_ summaries: [ReportSummary], parsed: ParsedArguments, spool: String) -> Int32 {
        StandardStream.out(parsed.has("json") ? ReportSummary.json(summaries)
                                              : ListRenderer.render(summaries, spool: spool, style: outputStyle(parsed)))
        return ExitCode.success
    }
}
