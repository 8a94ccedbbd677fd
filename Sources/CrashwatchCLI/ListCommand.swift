// ListCommand.swift — `crashwatch list`: the spool's reports, newest first, one line each (or JSON), filtered
// like coredumpctl's (MATCH operands, --since/--until, -r, -n).
import CrashwatchRender
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

enum ListCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch list [OPTIONS] [MATCH...]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("json", help: "print a JSON array of the same fields"),
            OptionSpec("limit", short: "n", value: "N", help: "show at most the N newest reports (default: all)"),
            OptionSpec("since", short: "S", value: "TIME", help: "only reports at or after TIME: 2026-11-30T09:00:00Z, '2026-11-30 09:00:00', 2026-11-30, -2h (or 2h, '2h ago'), today, yesterday, now, @SECONDS (UTC)"),
            OptionSpec("until", short: "U", value: "TIME", help: "only reports at or before TIME (the same forms)"),
            OptionSpec("reverse", short: "r", help: "oldest first (the newest N with -n, oldest of them first)"),
            OptionSpec("columns", value: "LIST", help: "the columns to show, comma-separated: \(ListRenderer.columnNames.joined(separator: ","))"),
            OptionSpec("no-pager", help: "never pipe the output into a pager (on a terminal: $SYSTEMD_PAGER, $PAGER or less -FRSX)"),
            OptionSpec("color", value: "WHEN", help: "auto (default: on a terminal, unless NO_COLOR is set), always or never"),
            OptionSpec("group", short: "g", help: "one line per crash group (fingerprint) instead of per report"),
            OptionSpec("fingerprint", value: "F", help: "only reports (or groups) whose fingerprint starts with F (4 to 32 hex digits)"),
        ],
        about: """
            Lists the spool's crash reports, newest first, one line each: time (UTC), pid, kind (crash, hang,
            abnormalExit), signal, executable, top in-app frame and short report id; the systemd unit and the
            app version when some report listed has one; when some report failed to ship, how many attempts
            failed (the JSON form also has the last error). Each MATCH narrows the list, as coredumpctl's do,
            and all must hold: a PID; an executable path (with a '/') or name (exe=… also); unit=NAME (with or
            without .service); kind=crash|hang|abnormalExit|snapshot; uid=N; signal=NAME|N. Only the reports
            printed are read; a file that is not a valid report is moved to the spool's .quarantine/ folder
            with its reason, and the listing goes on.
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
        spoolCommand(syntax, operands: 0...Int.max, arguments) { parsed, settings throws(CommandFailure) in
            let filter = try checkingUsage { () throws(UsageError) in try ListFilter(parsed) }
            let (limit, since, fingerprint) = (filter.limit, filter.since, filter.fingerprint)
            let spool: Spool
            do throws(SpoolError) {
                spool = try settings.open()
            } catch {
                if error.isMissingSpool { return emit([], parsed: parsed, spool: settings.spool) }
                throw CommandFailure(error)
            }
            if parsed.has("group") {
                let index = try usingSpool { () throws(SpoolError) in try spool.groupIndex() }
                guard filter.matches.isEmpty, filter.until == nil else {
                    throw CommandFailure(UsageError("--group takes no MATCH and no --until: groups outlive their reports"))
                }
                let groups = index.newestFirst.filter { group in
                    (since.map { group.lastSeenMs >= $0 / 1_000_000 } ?? true) && (fingerprint.map { group.fingerprint.hasPrefix($0) } ?? true)
                }.prefix(limit)
                StandardStream.out(parsed.has("json") ? GroupRenderer.json(Array(groups))
                                                      : GroupRenderer.render(Array(groups), spool: settings.spool, style: outputStyle(parsed)))
                return ExitCode.success
            }
            var unreadable = 0
            let summaries = try summaries(of: spool, filter: filter, unreadable: &unreadable)
            guard unreadable > 0 else { return emit(summaries, parsed: parsed, spool: settings.spool) }
            // Reports there but none readable: "No crash reports" would be wrong, and so would success.
            let line = unreadableReportsLine(unreadable, spool: settings.spool)
            if summaries.isEmpty { throw CommandFailure(line, status: ExitCode.ioError) }
            let status = emit(summaries, parsed: parsed, spool: settings.spool)
            StandardStream.err("crashwatch: \(line)\n")
            return status
        }
    }

    /// The newest `filter.limit` reports `filter` lets through (oldest first with `-r`), each with its failed
    /// shipping attempts; those this user may not read are counted in `unreadable`.
    private static func summaries(of spool: Spool, filter: ListFilter, unreadable: inout Int) throws(CommandFailure) -> [ReportSummary] {
        let names = try usingSpool { () throws(SpoolError) in try spool.reportNames() }
        var summaries: [ReportSummary] = []
        let attempts = spool.allAttempts()
        for name in names.reversed() {
            if summaries.count == filter.limit { break }
            if let since = filter.since, name.timeNanoseconds < since { break }
            // The name's time is a hint: the report's own capture time decides, below.
            if let until = filter.until, name.timeNanoseconds > until + 1_000_000_000 { continue }
            if let report = load(name, from: spool, unreadable: &unreadable), filter.admits(report) {
                var summary = ReportSummary(report)
                // A record of deliveries alone (count 0: one destination took it, the other was not tried) is no failure.
                if let record = attempts[name], record.count > 0 {
                    summary.shipAttempts = record.count
                    summary.shipError = record.lastError
                }
                summaries.append(summary)
            }
        }
        return filter.reverse ? summaries.reversed() : summaries
    }

    private static func emit(_ summaries: [ReportSummary], parsed: ParsedArguments, spool: String) -> Int32 {
        ShowCommand.page(parsed.has("json") ? ReportSummary.json(summaries)
                                            : ListRenderer.render(summaries, spool: spool, style: outputStyle(parsed),
                                                                  columns: parsed.value("columns").map(ListFilter.columns)),
                         parsed: parsed)
        return ExitCode.success
    }
}

/// What `list` was asked to show: MATCH operands, time bounds (nanoseconds), fingerprint prefix, count, order.
struct ListFilter {
    var matches: [ReportMatch]
    var since: Int64?
    var until: Int64?
    var fingerprint: String?
    var limit: Int
    var reverse: Bool

    /// Reads and checks `list`'s operands and options.
    init(_ parsed: ParsedArguments) throws(UsageError) {
        let now = Clock.realtimeNanoseconds()
        var matches: [ReportMatch] = []
        for operand in parsed.operands { matches.append(try ReportMatch.parse(operand)) }
        self.matches = matches
        limit = try parsed.value("limit", OptionValue.count) ?? Int.max
        since = try parsed.value("since") { text, option throws(UsageError) in try TimeBound.parse(text, option: option, now: now) }
        until = try parsed.value("until") { text, option throws(UsageError) in try TimeBound.parse(text, option: option, now: now) }
        if let since, let until, until < since { throw UsageError("--until is before --since: nothing can match") }
        _ = try parsed.value("color") { text, option throws(UsageError) in
            try OptionValue.choice(text, option: option, among: ["auto", "always", "never"])
        }
        fingerprint = try parsed.value("fingerprint") { text, option throws(UsageError) in try fingerprintPrefix(text, option: option) }
        reverse = parsed.has("reverse")
        if let columns = parsed.value("columns") {
            for name in Self.columns(columns) where !ListRenderer.columnNames.contains(name) {
                throw UsageError("--columns: unknown column '\(name)' (columns: \(ListRenderer.columnNames.joined(separator: ", ")))")
            }
        }
    }

    /// The column names of a `--columns` value.
    static func columns(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0.filter { $0 != " " }).lowercased() }
    }

    /// Whether `report` passes the MATCHes, the time bounds (its capture time) and the fingerprint prefix.
    func admits(_ report: CrashReport) -> Bool {
        if let time = RFC3339.parse(report.captureTime) {
            if let since, time < since { return false }
            if let until, time > until { return false }
        }
        return ReportMatch.all(matches, hold: report) && (fingerprint.map { hasFingerprint(report, $0) } ?? true)
    }
}
