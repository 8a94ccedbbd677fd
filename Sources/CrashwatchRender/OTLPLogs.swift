// OTLPLogs.swift — a report as an OpenTelemetry log record, in OTLP/JSON (`ExportLogsServiceRequest`, what
// `POST /v1/logs` takes), following the Apsio profile §6: a crash is `app.crash` (§6.1), a hang `apsio.hang`
// (§6.3), a SIGKILL death `app.abnormal_exit` (§6.4), a snapshot of a live process `crashwatch.snapshot` (INFO:
// no fault; crashwatch's own event, the profile has none for a look at a running process). One report is one ResourceLogs (its process is the
// resource) holding one LogRecord. The encoding is a pure function of the report and its file's bytes, so
// every attempt to ship a report sends the same record (the same `app.crash.id` and `log.record.uid`).
//
// OTLP/JSON: lowerCamelCase keys, 64-bit integers as decimal strings, enums as numbers; no whitespace.
import CrashwatchModel

/// Encodes reports as OTLP/JSON logs.
public enum OTLPLogs {
    /// The instrumentation scope of every record: `crashwatch` and its version.
    public struct Scope: Equatable, Sendable {
        public var name: String
        public var version: String

        public init(name: String = "crashwatch", version: String) {
            self.name = name
            self.version = version
        }
    }

    /// The default largest report attached whole as the record's body (`ship --max-body`).
    public static let defaultMaxBodyBytes = 1 << 20

    /// A request holding one ResourceLogs per entry, in order: `{"resourceLogs":[…]}`.
    public static func request(_ resourceLogs: [[UInt8]]) -> [UInt8] {
        var json = JSONWriter(capacity: resourceLogs.reduce(32) { $0 + $1.count + 1 })
        json.object { json in
            json.array("resourceLogs") { json in for entry in resourceLogs { json.json(entry) } }
        }
        return json.bytes
    }

    /// One report's ResourceLogs: the process as the resource and the report as one LogRecord. `reportText`
    /// (the report file's bytes) becomes the record's body when it is UTF-8 of at most `maxBodyBytes` bytes.
    public static func resourceLogs(for report: CrashReport, reportText: [UInt8]?, maxBodyBytes: Int, scope: Scope)
        -> [UInt8]
    {
        var json = JSONWriter()
        json.object { json in
            json.object("resource") { json in
                json.array("attributes") { json in resourceAttributes(of: report, into: &json) }
            }
            json.array("scopeLogs") { json in
                json.object { json in
                    json.object("scope") { json in
                        json.member("name", scope.name)
                        json.member("version", scope.version)
                    }
                    json.array("logRecords") { json in
                        logRecord(for: report, reportText: reportText, maxBodyBytes: maxBodyBytes, into: &json)
                    }
                }
            }
        }
        return json.bytes
    }

    /// The request `ship` sends for one report (what `export --format otlp` prints).
    public static func request(for report: CrashReport, reportText: [UInt8]?, maxBodyBytes: Int = defaultMaxBodyBytes,
                               scope: Scope) -> [UInt8] {
        request([resourceLogs(for: report, reportText: reportText, maxBodyBytes: maxBodyBytes, scope: scope)])
    }

    // MARK: The record

    /// The event name, severity number and severity text of a report's kind.
    static func event(of kind: ReportKind) -> (name: String, severity: Int, severityText: String) {
        switch kind {
        case .hang: ("apsio.hang", 13, "WARN")
        case .snapshot: ("crashwatch.snapshot", 9, "INFO")
        case .abnormalExit: ("app.abnormal_exit", 17, "ERROR")
        default: ("app.crash", 21, "FATAL")
        }
    }

    static func logRecord(for report: CrashReport, reportText: [UInt8]?, maxBodyBytes: Int, into json: inout JSONWriter) {
        let captured = RFC3339.parse(report.captureTime) ?? 0
        let began = report.hang.flatMap { RFC3339.parse($0.startTime) } ?? captured
        let event = event(of: report.kind)
        json.object { json in
            json.member("timeUnixNano", String(began))
            json.member("observedTimeUnixNano", String(captured))
            json.member("severityNumber", event.severity)
            json.member("severityText", event.severityText)
            if let text = reportText, text.count <= maxBodyBytes, let body = String(validating: text, as: UTF8.self) {
                json.object("body") { json in json.member("stringValue", body) }
            }
            json.array("attributes") { json in recordAttributes(of: report, into: &json) }
            json.member("eventName", event.name)
        }
    }

    static func recordAttributes(of report: CrashReport, into json: inout JSONWriter) {
        let frames = ReportSummary.faultFrames(of: report)
        if report.kind == .crash {
            json.attribute("app.crash.id", report.id)
            json.attribute("exception.type", "\(report.signal.name) (\(report.signal.codeName))")
            json.attribute("exception.message", report.signal.description)
            if let hang = report.hangReportID { json.attribute("crashwatch.hang_report.id", hang) }
        }
        if let hang = report.hang, report.kind == .hang {
            json.attribute("apsio.hang.source", "live")
            // A report is input like any file: a duration out of range must not trap the shipper.
            let duration = hang.durationMs.isFinite ? min(max(hang.durationMs, 0), 9e15).rounded(.down) : 0
            json.attribute("apsio.hang.duration", integer: Int64(duration))
            json.attribute("apsio.hang.unfinished", bool: hang.unfinished)
        }
        if report.kind == .snapshot {
            json.attribute("crashwatch.snapshot.threads", integer: Int64(report.threads.count))
            if let held = report.holdDurationMs, held.isFinite {
                json.attribute("crashwatch.snapshot.hold_us", integer: Int64(min(max(held * 1000, 0), 9e15).rounded(.down)))
            }
        }
        if let exit = report.exit, report.kind == .abnormalExit {
            json.attribute("apsio.exit.reason", exit.reason)
            json.attribute("apsio.exit.source", exit.source)
            // A systemd service has no foreground; elsewhere crashwatch cannot tell.
            if report.process.systemdUnit != nil { json.attribute("apsio.exit.foreground", bool: false) }
        }
        json.attribute("exception.stacktrace", stacktrace(frames, in: report))
        json.attribute("apsio.crash.images", imagesJSON(for: frames, in: report))
        if let buildID = report.mainExecutable?.buildID { json.attribute("app.build_id", buildID) }
        if let version = serviceVersion(of: report) { json.attribute("service.version", version) }
        json.attribute("os.name", report.host.osName)
        if let version = report.host.osVersion { json.attribute("os.version", version) }
        if let session = report.process.systemdInvocationID ?? report.runID { json.attribute("session.id", session) }
        json.attribute("crashwatch.report.id", report.id)
        // The bug's fingerprint (computed for a report written before fingerprints), for a log backend to group on.
        json.attribute("crashwatch.fingerprint", (report.fingerprint ?? Fingerprint.of(report)).value)
        json.attribute("log.record.uid", logRecordUID(of: report))
    }

    static func resourceAttributes(of report: CrashReport, into json: inout JSONWriter) {
        json.attribute("service.name", serviceName(of: report))
        if let version = serviceVersion(of: report) { json.attribute("service.version", version) }
        json.attribute("host.name", report.host.hostname)
        json.attribute("host.arch", hostArch(report.host.architecture))
        json.attribute("os.type", "linux")
        json.attribute("os.name", report.host.osName)
        if let version = report.host.osVersion { json.attribute("os.version", version) }
        json.attribute("process.pid", integer: Int64(report.process.pid))
        json.attribute("process.executable.path", report.process.executable)
        json.attribute("process.command_args", strings: report.process.commandLine)
    }

    // MARK: Attribute values

    /// `service.name`: the app's name, else the systemd unit's (without `.service`), else the executable's file name.
    static func serviceName(of report: CrashReport) -> String {
        if let name = report.process.app?.name, !name.isEmpty { return name }
        if var unit = report.process.systemdUnit, !unit.isEmpty {
            if unit.hasSuffix(".service") { unit.removeLast(".service".count) }
            return unit
        }
        var path = report.process.executable
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        let name = TextFormatting.basename(path)
        return name.isEmpty ? report.process.comm : name
    }

    /// `service.version`: the app's version, else the main executable's package version, else nil.
    static func serviceVersion(of report: CrashReport) -> String? {
        if let version = report.process.app?.version, !version.isEmpty { return version }
        return report.mainExecutable?.package?.version
    }

    /// OpenTelemetry's `host.arch` value for a kernel machine name.
    static func hostArch(_ machine: String) -> String {
        switch machine {
        case "x86_64": "amd64"
        case "aarch64", "arm64": "arm64"
        case "i386", "i486", "i586", "i686": "x86"
        case "ppc64le": "ppc64"
        case "s390x": "s390x"
        default: machine
        }
    }

    /// One line per frame: `#0 app 0x000055d0c0a01139 crash_here + 0x9 (main.c:21) [inlined]`.
    static func stacktrace(_ frames: [FrameRecord], in report: CrashReport) -> String {
        var lines: [String] = []
        lines.reserveCapacity(frames.count)
        for (number, frame) in frames.enumerated() {
            var line = "#\(number) \(FrameText.image(of: frame, in: report)?.name ?? "???") \(paddedHex(frame.address.value))"
            if let function = frame.function ?? frame.symbol, !function.isEmpty {
                line += " " + function
                if let offset = frame.symbolOffset, offset.value != 0 { line += " + " + offset.description }
            }
            if let source = FrameText.source(of: frame) { line += " " + source }
            if frame.inlined { line += " [inlined]" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// `apsio.crash.images`: a JSON array of the images `frames` refer to, then the main executable, each
    /// `{"name","build_id","load_address","architecture","in_app"}` (build_id null when the image has none).
    static func imagesJSON(for frames: [FrameRecord], in report: CrashReport) -> String {
        var indices: [Int] = []
        var seen = Set<Int>()
        for frame in frames {
            if let index = frame.imageIndex, report.images.indices.contains(index), seen.insert(index).inserted {
                indices.append(index)
            }
        }
        if let main = report.images.firstIndex(where: \.isMainExecutable), seen.insert(main).inserted { indices.append(main) }
        var json = JSONWriter()
        json.array { json in
            for index in indices {
                let image = report.images[index]
                json.object { json in
                    json.member("name", image.name)
                    json.member("build_id", image.buildID)
                    json.member("load_address", image.loadAddress.description)
                    json.member("architecture", image.architecture ?? report.host.architecture)
                    json.member("in_app", image.inApp)
                }
            }
        }
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// `log.record.uid`: a ULID (26 characters of Crockford base32) made from the report, not at random, so
    /// it is the same on every attempt: the capture time's milliseconds (48 bits), then the first 80 bits
    /// of the report id.
    public static func logRecordUID(of report: CrashReport) -> String {
        let milliseconds = UInt64(max(RFC3339.parse(report.captureTime) ?? 0, 0) / 1_000_000) & 0xffff_ffff_ffff
        let idBits = Array(report.id.filter(\.isHexDigit).prefix(20))
        let random = UInt128(String(idBits), radix: 16) ?? 0
        let value = UInt128(milliseconds) << 80 | random << (80 - UInt128(idBits.count * 4))
        return ulidText(value)
    }

    /// A 128-bit value as 26 Crockford base32 digits, most significant first.
    static func ulidText(_ value: UInt128) -> String {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        var characters: [Character] = []
        characters.reserveCapacity(26)
        for position in stride(from: 125, through: 0, by: -5) {
            characters.append(alphabet[Int((value >> UInt128(position)) & 0x1f)])
        }
        return String(characters)
    }

    /// `0x` and 16 lower-case hex digits.
    static func paddedHex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}

/// OTLP's attributes: `{"key":…,"value":{"stringValue":…}}` elements of an `attributes` array.
extension JSONWriter {
    mutating func attribute(_ name: String, _ value: String) {
        object { json in
            json.member("key", name)
            json.object("value") { json in json.member("stringValue", value) }
        }
    }

    /// A 64-bit integer value: a decimal string in OTLP/JSON.
    mutating func attribute(_ name: String, integer value: Int64) {
        object { json in
            json.member("key", name)
            json.object("value") { json in json.member("intValue", String(value)) }
        }
    }

    mutating func attribute(_ name: String, bool value: Bool) {
        object { json in
            json.member("key", name)
            json.object("value") { json in json.member("boolValue", value) }
        }
    }

    mutating func attribute(_ name: String, strings values: [String]) {
        object { json in
            json.member("key", name)
            json.object("value") { json in
                json.object("arrayValue") { json in
                    json.array("values") { json in
                        for value in values { json.object { json in json.member("stringValue", value) } }
                    }
                }
            }
        }
    }
}
