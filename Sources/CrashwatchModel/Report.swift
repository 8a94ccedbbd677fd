// Report.swift — the crash report, schema version 1: the value every source (live crash, and later core
// files, snapshots, hangs) fills in and the spool, text renderer and shipper read. JSON shape notes:
// - keys appear in declaration order (see ReportJSON.swift), so reports diff well;
// - every key is always present: a missing value is written as `null`, an empty list as `[]`;
// - addresses, offsets and register values are `Address` values, written as lower-case hex strings (`"0x7f…"`),
//   never as JSON numbers; sizes and counts are JSON integers;
// - times are RFC 3339 UTC strings with milliseconds (`RFC3339.format`).
// `schema/crashwatch-report-v1.schema.json` describes this exact shape; change both together, additively.
// This file: the report itself, its kind and its soft errors. One file per record family beside it:
// ReportSignal (signal, original fault, hang, exit), ReportProcess (process, app, host), ReportThreads
// (threads, registers, frames), ReportImages, ReportDiagnostics, Address.
import FoundationEssentials
/// One crash (or abnormal exit) of one process: the document crashwatch writes to the spool.
public struct CrashReport: Codable, Sendable, Equatable {
    /// The schema version this code writes; readers refuse reports with a higher one.
    public static let currentSchemaVersion = 1
    /// The value of `format` that marks a JSON document as a crashwatch report.
    public static let formatName = "crashwatch.report"

    /// The schema version of this report (1).
    public var schemaVersion: Int
    /// Always `crashwatch.report`: tells a report from other JSON.
    public var format: String
    /// The report id: a lower-case UUID, the same on every attempt to ship this crash.
    public var id: String
    /// What ended the process: a crash signal, or an abnormal exit such as SIGKILL.
    public var kind: ReportKind
    /// When the fatal signal arrived, RFC 3339 UTC with milliseconds.
    public var captureTime: String
    /// How long the capture took, in milliseconds: from the fatal signal to this report being complete
    /// (for a full report, including processing in the worker).
    public var captureDurationMs: Double
    /// How long the crashed process was held stopped for the capture, in milliseconds; nil where the
    /// source was not a live process.
    public var holdDurationMs: Double?
    /// The crashwatch version that wrote the report.
    public var crashwatchVersion: String
    /// The fatal signal (and the original fault, for a handled-then-re-raised crash); for a hang, no
    /// signal (`SignalRecord.none`).
    public var signal: SignalRecord
    /// For a hang report: when the hang began and how long it had lasted when it was captured.
    public var hang: HangRecord?
    /// For an abnormal exit: why the process was killed, as far as crashwatch can tell.
    public var exit: ExitRecord?
    /// For a crash that ended a hang crashwatch had reported (a watchdog's kill): that hang report's id.
    public var hangReportID: String?
    /// The id of the `crashwatch run` that supervised the process (a lower-case UUID, one per run, shared
    /// by every report of that run); the shipped record's `session.id` when systemd gave no invocation id.
    public var runID: String?
    /// Where the process's state came from: `core` for a report built from a core dump
    /// (`crashwatch analyze-core`); nil for a live capture.
    public var source: String?
    /// Where the core dump itself was kept, gzip-compressed (`crashwatch core-handler --keep-core DIR`); nil
    /// when it was not.
    public var coreFile: String?
    /// What identifies the bug rather than the run (`Fingerprint.of`), set as the report is written: reports of
    /// the same bug share its `value`. Nil in reports written before crashwatch computed it.
    public var fingerprint: FingerprintRecord?
    /// What the app and the operator said about the run (README "Annotations and breadcrumbs"): the app's own
    /// annotations read from its memory, merged with the operator's `--annotate` facts (the operator's win a
    /// shared key); denied keys hold `<redacted>`. Nil when neither declared any.
    public var annotations: [String: String]?
    /// The app's breadcrumbs, oldest first, as its ring held them at the crash; nil when the process declared
    /// no breadcrumb ring.
    public var breadcrumbs: [BreadcrumbRecord]?
    /// The process that died.
    public var process: ProcessRecord
    /// The machine it died on.
    public var host: HostRecord
    /// Every thread of the process; exactly one has `crashed` set for a crash.
    public var threads: [ThreadRecord]
    /// The images the frames refer to, plus the main executable; `FrameRecord.imageIndex` indexes this list.
    public var images: [ImageRecord]
    /// crashwatch's view of its own capture conditions.
    public var diagnostics: Diagnostics
    /// Parts of the capture that failed without losing the report.
    public var softErrors: [SoftError]

    /// Creates a report; `schemaVersion` and `format` take the current values.
    public init(id: String, kind: ReportKind, captureTime: String, captureDurationMs: Double, crashwatchVersion: String,
                signal: SignalRecord, process: ProcessRecord, host: HostRecord, threads: [ThreadRecord],
                images: [ImageRecord], diagnostics: Diagnostics, softErrors: [SoftError] = []) {
        self.schemaVersion = CrashReport.currentSchemaVersion
        self.format = CrashReport.formatName
        self.id = id
        self.kind = kind
        self.captureTime = captureTime
        self.captureDurationMs = captureDurationMs
        self.holdDurationMs = nil
        self.crashwatchVersion = crashwatchVersion
        self.signal = signal
        self.hang = nil
        self.exit = nil
        self.hangReportID = nil
        self.runID = nil
        self.source = nil
        self.coreFile = nil
        self.fingerprint = nil
        self.annotations = nil
        self.breadcrumbs = nil
        self.process = process
        self.host = host
        self.threads = threads
        self.images = images
        self.diagnostics = diagnostics
        self.softErrors = softErrors
    }

    /// A fresh report id: a random UUID in lower case.
    public static func newID() -> String { UUID().uuidString.lowercased() }

    /// The report with its `fingerprint` computed from its frames (`Fingerprint.of`).
    public func fingerprinted() -> CrashReport {
        var report = self
        report.fingerprint = Fingerprint.of(self)
        return report
    }

    /// The thread that took the fatal signal, if the report has one.
    public var crashedThread: ThreadRecord? { threads.first { $0.crashed } }

    /// The image of the main executable, if the report has one.
    public var mainExecutable: ImageRecord? { images.first { $0.isMainExecutable } }

    /// The report as UTF-8 JSON (two-space indented, keys in declaration order, a final newline); throws
    /// `EncodingError` for a NaN or infinite `captureDurationMs`.
    public func encodedJSON() throws -> [UInt8] { try ReportJSON.encode(self) }

    /// Decodes a report in one pass over its bytes (ReportJSONDecoding.swift), refusing malformed JSON anywhere and
    /// a wrong member with a `DecodingError` naming it, other formats and newer schema versions with a
    /// `ReportDecodingError` — what `JSONDecoder` over the Codable conformances gives, at a tenth of the cost.
    public static func decode(_ bytes: [UInt8]) throws -> CrashReport {
        try decodeJSON(bytes, threads: .all)
    }

    /// Decodes a report as `decode(_:)` does, keeping the threads `threads` names: with `.crashedAndMain`, only the
    /// crashed threads and the process's main thread (each other one is read, checked and dropped at once), for a
    /// reader that needs no more, such as the journal entry.
    public static func decode(_ bytes: [UInt8], threads: ThreadSelection) throws -> CrashReport {
        try decodeJSON(bytes, threads: threads)
    }
}

/// Which threads `CrashReport.decode` keeps.
public enum ThreadSelection: Sendable {
    /// Every thread.
    case all
    /// The crashed threads and the main thread (tid = pid; every thread when the process member comes after them).
    case crashedAndMain
}

/// Why bytes could not be read as a crash report, beyond malformed JSON (which throws `DecodingError`).
public enum ReportDecodingError: Error, Equatable, CustomStringConvertible {
    /// The JSON's `format` is missing or is not `crashwatch.report`.
    case notAReport(format: String?)
    /// The JSON's `schemaVersion` is missing, not positive, or newer than this code understands.
    case unsupportedSchemaVersion(Int?)

    /// A one-line explanation, fit for a quarantine reason.
    public var description: String {
        switch self {
        case .notAReport(let format): "not a crashwatch report (format \(format.map { "'\($0)'" } ?? "missing"))"
        case .unsupportedSchemaVersion(let version):
            "unsupported report schema version \(version.map(String.init) ?? "missing") (this crashwatch reads 1...\(CrashReport.currentSchemaVersion))"
        }
    }
}

/// What ended the process; an open set of strings so readers tolerate kinds added later in version 1.
public struct ReportKind: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The JSON value.
    public var rawValue: String
    /// Wraps a JSON value; unknown values are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The process took a crash signal (see `Signal.crashSignals`).
    public static let crash = ReportKind(rawValue: "crash")
    /// The process died in a way that cannot be intercepted, such as SIGKILL from the OOM killer.
    public static let abnormalExit = ReportKind(rawValue: "abnormalExit")
    /// A snapshot of a process that stopped making progress (its watchdog pings stopped); it was left running.
    public static let hang = ReportKind(rawValue: "hang")
    /// A look at a live process (`crashwatch snapshot`): every thread's stack; the process was left running.
    public static let snapshot = ReportKind(rawValue: "snapshot")

    /// The JSON value, for messages.
    public var description: String { rawValue }

    /// Whether reports of this kind are of a process crashwatch stopped from outside and let go on as it was
    /// (a hang, a snapshot): no signal, no crashed thread, and each thread's state recorded.
    public var isLiveProcess: Bool { self == .hang || self == .snapshot }
}

/// A part of the capture that failed without losing the report (minidump-writer's `soft_errors`).
public struct SoftError: Codable, Sendable, Equatable {
    /// The step that failed: `capture`, `core`, `deadline`, `images`, `process`, `processing`, `registers`, `report`,
    /// `signal`, `stack`, `stop`, `symbols` or `unwind` (the schema's enum, each value described there).
    public var stage: String
    /// The thread concerned, when the failure is about one thread.
    public var tid: Int32?
    /// The image path concerned, when the failure is about one image.
    public var image: String?
    /// What failed, in the system's words: `PTRACE_GETREGSET tid 1234: No such process`.
    public var message: String

    /// Creates a soft error for a stage, optionally tied to a thread or an image.
    public init(stage: String, tid: Int32? = nil, image: String? = nil, message: String) {
        self.stage = stage
        self.tid = tid
        self.image = image
        self.message = message
    }
}
