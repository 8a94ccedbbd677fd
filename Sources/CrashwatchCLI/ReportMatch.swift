// ReportMatch.swift — the readers' MATCH operands and time bounds, as coredumpctl takes them: a PID (digits),
// FIELD=VALUE (`unit=`, `kind=`, `uid=`, `signal=`, `exe=`), or an executable (a path with a `/`, else a name);
// every MATCH given must hold (coredumpctl's different fields are ANDed). Times are coredumpctl's forms:
// absolute (`2026-11-30T09:00:00Z`, `2026-11-30 09:00:00`, `2026-11-30`), relative (`-2h`, `2h`, `2h ago`),
// `now`, `today`, `yesterday`, `tomorrow` (midnights UTC, as every time crashwatch prints is UTC) or `@EPOCH`.
import CrashwatchModel
import CrashwatchSpool

/// One condition a report must meet to be listed or shown.
enum ReportMatch: Equatable {
    case pid(Int32)
    case executablePath(String)
    case executableName(String)
    case unit(String)
    case kind(ReportKind)
    case uid(UInt32)
    case signal(Int32)

    /// The report kinds `kind=` takes.
    static let kinds = ["crash", "hang", "abnormalExit", "snapshot"]

    /// What the usage error and `--help` say a MATCH is.
    static let forms = "PID, an executable path or name, exe=, unit=NAME, kind=crash|hang|abnormalExit|snapshot, uid=N, signal=NAME|N"

    /// Parses one MATCH operand.
    static func parse(_ text: String) throws(UsageError) -> ReportMatch {
        guard !text.isEmpty else { throw UsageError("an empty MATCH matches nothing; a MATCH is \(forms)") }
        if text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let pid = Int32(text), pid > 0 else { throw UsageError("'\(text)' is not a PID") }
            return .pid(pid)
        }
        guard let equals = text.firstIndex(of: "=") else {
            return text.contains("/") ? .executablePath(text) : .executableName(text)
        }
        let field = String(text[..<equals]), value = String(text[text.index(after: equals)...])
        switch field {
        case "exe", "executable", "COREDUMP_EXE":
            guard !value.isEmpty else { break }
            return value.contains("/") ? .executablePath(value) : .executableName(value)
        case "pid", "COREDUMP_PID":
            if let pid = Int32(value), pid > 0 { return .pid(pid) }
        case "unit", "COREDUMP_UNIT":
            if !value.isEmpty { return .unit(value) }
        case "kind":
            if kinds.contains(value) { return .kind(ReportKind(rawValue: value)) }
            throw UsageError("kind= takes one of \(kinds.joined(separator: ", ")), not '\(value)'")
        case "uid", "COREDUMP_UID":
            if let uid = UInt32(value) { return .uid(uid) }
        case "signal", "COREDUMP_SIGNAL":
            if let signal = Signal(name: value) { return .signal(signal.number) }
        default:
            throw UsageError("unknown MATCH field '\(field)='; a MATCH is \(forms)")
        }
        throw UsageError("'\(value)' is not a valid value for \(field)=")
    }

    /// Whether `report` meets this condition. A unit matches with or without its `.service` suffix.
    func holds(for report: CrashReport) -> Bool {
        let process = report.process
        switch self {
        case .pid(let pid): return process.pid == pid
        case .executablePath(let path): return process.executable == path
        case .executableName(let name):
            return process.executable.split(separator: "/").last.map(String.init) == name || process.comm == name
        case .unit(let unit):
            guard let actual = process.systemdUnit else { return false }
            return actual == unit || actual == unit + ".service"
        case .kind(let kind): return report.kind == kind
        case .uid(let uid): return process.uid == uid
        case .signal(let number): return !report.kind.isLiveProcess && report.signal.number == number
        }
    }

    /// Whether every one of `matches` holds for `report` (true when there are none).
    static func all(_ matches: [ReportMatch], hold report: CrashReport) -> Bool {
        matches.allSatisfy { $0.holds(for: report) }
    }
}

/// A time bound parsed the way coredumpctl's `--since`/`--until` read theirs (systemd.time), in UTC.
enum TimeBound {
    /// What the usage error says is accepted.
    static let forms = "a time (2026-11-30T09:00:00Z, '2026-11-30 09:00:00', 2026-11-30), a time ago (-2h, 2h, '2h ago'), now, today, yesterday, tomorrow or @SECONDS"

    /// Parses `text` for `option` into nanoseconds since the epoch; `now` is the current time in nanoseconds.
    static func parse(_ text: String, option: String, now: Int64) throws(UsageError) -> Int64 {
        let nanosecondsPerDay: Int64 = 86_400_000_000_000
        let midnight = now - ((now % nanosecondsPerDay) + nanosecondsPerDay) % nanosecondsPerDay
        switch text {
        case "now": return now
        case "today": return midnight
        case "yesterday": return midnight - nanosecondsPerDay
        case "tomorrow": return midnight + nanosecondsPerDay
        default: break
        }
        if let time = RFC3339.parse(text) { return time }
        if let time = RFC3339.parse(String(text.map { $0 == " " ? "T" : $0 }) + "Z") { return time }
        if let time = RFC3339.parse(text + "T00:00:00.000Z") { return time }
        if text.hasPrefix("@"), let seconds = Int64(text.dropFirst()), seconds >= 0, seconds < Int64.max / 1_000_000_000 {
            return seconds * 1_000_000_000
        }
        var ago = text
        if ago.hasPrefix("-") { ago.removeFirst() } else if ago.hasSuffix(" ago") { ago.removeLast(4) }
        do {
            let duration = try DurationText.parse(ago)
            // Longer ago than the epoch (or than Int64 nanoseconds can say) is every report.
            let (nanoseconds, overflow) = duration.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
            return overflow || nanoseconds > now ? 0 : now - nanoseconds
        } catch {
            throw UsageError("--\(option) takes \(forms), not '\(text)'")
        }
    }
}
