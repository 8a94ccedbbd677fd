// ReportSummary.swift — the handful of fields one `crashwatch list` line shows, taken from a report, and their
// JSON form for `list --json`: an array of objects whose keys always appear in the order time, pid, executable,
// signal, code, topFrame, id, app, shipAttempts, shipError, fingerprint, kind, unit, written with `JSONWriter` (not by
// JSONEncoder, whose key order is unspecified).
import CrashwatchModel

/// What a list line shows about one report: when, which process, which signal, where, and which report.
public struct ReportSummary: Codable, Sendable, Equatable {
    /// The capture time as the report writes it: RFC 3339 UTC with milliseconds.
    public var time: String
    /// The pid of the process that died.
    public var pid: Int32
    /// The executable path of the process that died.
    public var executable: String
    /// The fatal signal's name (`SIGSEGV`).
    public var signal: String
    /// The signal's `si_code` name (`SEGV_MAPERR`).
    public var code: String
    /// The crashed thread's first in-app frame (`crash_here (main.c:21)`, `crash_here`, `app+0x1189`); nil when none.
    public var topFrame: String?
    /// The report id (a lower-case UUID).
    public var id: String
    /// The application's name, version and release, when the report has them.
    public var app: AppRecord?
    /// Failed attempts to ship the report (the spool's `.attempts` record), when there were any.
    public var shipAttempts: Int?
    /// Why the last attempt to ship it failed.
    public var shipError: String?
    /// The report's fingerprint value (computed for a report written before fingerprints).
    public var fingerprint: String?
    /// What ended the process: `crash`, `hang` or `abnormalExit` (the report's kind).
    public var kind: String = ReportKind.crash.rawValue
    /// The systemd unit the process ran in, when it ran in one.
    public var unit: String?

    /// The app version the report names, when it names one.
    public var version: String? { app?.version }

    /// The JSON keys, in the order they are written.
    enum CodingKeys: String, CodingKey {
        /// The summary's fields, in JSON order.
        case time, pid, executable, signal, code, topFrame, id, app, shipAttempts, shipError, fingerprint, kind, unit
    }

    /// Creates a summary from its fields.
    public init(time: String, pid: Int32, executable: String, signal: String, code: String, topFrame: String?,
                id: String, app: AppRecord?) {
        self.time = time
        self.pid = pid
        self.executable = executable
        self.signal = signal
        self.code = code
        self.topFrame = topFrame
        self.id = id
        self.app = app
    }

    /// Extracts the summary of a report; the top frame is `topFrame(of:)`.
    public init(_ report: CrashReport) {
        self.init(time: report.captureTime, pid: report.process.pid, executable: report.process.executable,
                  signal: report.signal.name, code: report.signal.codeName,
                  topFrame: Self.topFrame(of: report).map { FrameText.brief($0, in: report) }, id: report.id,
                  app: report.process.app)
        fingerprint = (report.fingerprint ?? Fingerprint.of(report)).value
        kind = report.kind.rawValue
        unit = report.process.systemdUnit
    }

    /// The stack where the fault happened: the original fault's when a handler ran first (not the handler's),
    /// else the crashed thread's; for the kinds that have no crashed thread (a hang, a snapshot, a SIGKILL death) the main
    /// thread's; empty when the report has none of these (a crash whose crashed thread is missing).
    public static func faultFrames(of report: CrashReport) -> [FrameRecord] {
        let original = report.signal.originalFault?.frames ?? []
        guard original.isEmpty else { return original }
        let stoppedFromOutside = report.kind.isLiveProcess || report.kind == .abnormalExit
        let thread = report.crashedThread ?? (stoppedFromOutside ? report.threads.first { $0.tid == report.process.pid } : nil)
        return thread?.frames ?? []
    }

    /// The frame a summary names: the first of `faultFrames(of:)` in an in-app image; nil when none is.
    public static func topFrame(of report: CrashReport) -> FrameRecord? {
        faultFrames(of: report).first { frame in FrameText.image(of: frame, in: report).map(\.inApp) ?? false }
    }

    /// The first eight hex digits of the id: enough to tell reports apart in a list and to type.
    public var shortID: String { String(id.filter(\.isHexDigit).prefix(8)) }

    // MARK: JSON

    /// The summaries as a JSON array, one object per line, keys in `CodingKeys` order, ending in a newline.
    public static func json(_ summaries: [ReportSummary]) -> String {
        if summaries.isEmpty { return "[]\n" }
        return "[\n" + summaries.map { "  " + $0.json() }.joined(separator: ",\n") + "\n]\n"
    }

    /// This summary as a one-line JSON object; absent values are written as `null`, never omitted.
    public func json() -> String {
        var json = JSONWriter(spaced: true)
        json.object { json in
            json.member("time", time)
            json.member("pid", pid)
            json.member("executable", executable)
            json.member("signal", signal)
            json.member("code", code)
            json.member("topFrame", topFrame)
            json.member("id", id)
            json.key("app")
            if let app {
                json.object { json in
                    json.member("name", app.name)
                    json.member("version", app.version)
                    json.member("release", app.release)
                }
            } else {
                json.null()
            }
            json.member("shipAttempts", shipAttempts)
            json.member("shipError", shipError)
            json.member("fingerprint", fingerprint)
            json.member("kind", kind)
            json.member("unit", unit)
        }
        return String(decoding: json.bytes, as: UTF8.self)
    }
}

