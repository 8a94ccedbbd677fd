// ReportJSONDecoding.swift — reads a report's JSON in one pass, without Codable: the inverse of the writer
// (ReportJSONRecords.swift), one small function per record type over a `JSONReader`. `CrashReport.decode` is this;
// the supervisor decodes each worker's report with it on the way to "report written", and every reader (show,
// list, ship, the journal entry, groups) reads the spool with it. The Codable `JSONDecoder` path it replaces
// took ~27 ms for a 65-thread, 330 KB report (release build, threads64), mostly generic metadata look-ups; in
// one A/B under load (`perf record`, the supervisor's CPU in `CrashReport.decode`) 56–62 ms that path, 6–7 ms this.
//
// Same results as the Codable conformances for every document `JSONSyntax.isWellFormed` accepts (the tests
// keep a reference decode through `JSONDecoder` and compare, including under random mutations): members in any
// order, unknown members skipped, a missing or `null` optional member nil, a missing required member, a `null`
// one or one of another type an error naming its path (a `DecodingError`, as before); `activeFaults` missing or
// `null` is empty. Malformed text is refused wherever it is, so a caller needs no separate syntax check.
// A field added to a record type is added here too: a case in its `Fields` enum (the member's name) and a line
// in its reader.

extension CrashReport {
    /// Decodes a report in one pass; `ReportDecodingError` for another format or a newer schema version, else a
    /// `DecodingError` naming what is wrong and where (the errors `JSONDecoder` gave, in the same precedence:
    /// malformed text, then the format and version, then the rest).
    static func decodeJSON(_ bytes: [UInt8], threads: ThreadSelection = .all) throws -> CrashReport {
        var reader = JSONReader(bytes)
        do {
            return try reader.document { try $0.report(threads: threads) }
        } catch let failure as JSONReadError {
            if case .malformed = failure.kind { throw failure.decodingError }
            // Which error comes first: malformed text anywhere, then the header, then this one.
            var check = JSONReader(bytes)
            do { try check.document { try $0.skipValue() } } catch let malformed as JSONReadError { throw malformed.decodingError }
            var header = JSONReader(bytes)
            let (format, version): (String?, Int?)
            do { (format, version) = try header.document { try $0.header() } } catch let headerFailure as JSONReadError {
                throw headerFailure.decodingError
            }
            guard format == formatName else { throw ReportDecodingError.notAReport(format: format) }
            guard let version, (1...currentSchemaVersion).contains(version) else {
                throw ReportDecodingError.unsupportedSchemaVersion(version)
            }
            throw failure.decodingError
        }
    }
}

/// A required member's value, or the error naming it.
func requiredMember<Value>(_ value: Value?, _ name: String) throws -> Value {
    guard let value else { throw JSONReadError(kind: .missing(name), offset: 0) }
    return value
}

extension JSONReader {
    /// The members a report is recognised by, read alone when a report does not decode.
    enum HeaderFields: Int, JSONFields {
        case format, schemaVersion
        static let keys = JSONKeys(Self.self)
    }

    /// The report's `format` and `schemaVersion`, each nil when missing or `null`.
    mutating func header() throws -> (format: String?, schemaVersion: Int?) {
        var format: String?, version: Int?
        try members { (reader, field: HeaderFields) in
            switch field {
            case .format: format = try reader.optionalString()
            case .schemaVersion: version = try reader.optionalInteger()
            }
        }
        return (format, version)
    }

    enum ReportFields: Int, JSONFields {
        case schemaVersion, format, id, kind, captureTime, captureDurationMs, holdDurationMs, crashwatchVersion, signal, hang
        case exit, hangReportID, runID, source, coreFile, fingerprint, annotations, breadcrumbs, process, host, threads
        case images, diagnostics, softErrors
        static let keys = JSONKeys(Self.self)
    }

    /// Reads the whole report, keeping the threads `selection` names; a wrong format or schema version is refused
    /// as soon as both are known.
    mutating func report(threads selection: ThreadSelection = .all) throws -> CrashReport {
        var schemaVersion: Int?, format: String?, id: String?, kind: String?, captureTime: String?, captureDurationMs: Double?
        var holdDurationMs: Double?, crashwatchVersion: String?, signal: SignalRecord?, hang: HangRecord?, exit: ExitRecord?
        var hangReportID: String?, runID: String?, source: String?, coreFile: String?, fingerprint: FingerprintRecord?
        var annotations: [String: String]?, breadcrumbs: [BreadcrumbRecord]?, process: ProcessRecord?, host: HostRecord?
        var threads: [ThreadRecord]?, images: [ImageRecord]?, diagnostics: Diagnostics?, softErrors: [SoftError]?
        try members { (reader, field: ReportFields) in
            switch field {
            case .schemaVersion: schemaVersion = try reader.integer()
            case .format: format = try reader.string()
            case .id: id = try reader.string()
            case .kind: kind = try reader.string()
            case .captureTime: captureTime = try reader.string()
            case .captureDurationMs: captureDurationMs = try reader.double()
            case .holdDurationMs: holdDurationMs = try reader.optionalDouble()
            case .crashwatchVersion: crashwatchVersion = try reader.string()
            case .signal: signal = try reader.signal()
            case .hang: hang = try reader.null() ? nil : reader.hang()
            case .exit: exit = try reader.null() ? nil : reader.exit()
            case .hangReportID: hangReportID = try reader.optionalString()
            case .runID: runID = try reader.optionalString()
            case .source: source = try reader.optionalString()
            case .coreFile: coreFile = try reader.optionalString()
            case .fingerprint: fingerprint = try reader.null() ? nil : reader.fingerprint()
            case .annotations: annotations = try reader.null() ? nil : reader.stringDictionary()
            case .breadcrumbs: breadcrumbs = try reader.null() ? nil : reader.elements { try $0.breadcrumb() }
            case .process: process = try reader.process()
            case .host: host = try reader.host()
            case .threads:
                threads = try reader.elements(keeping: { (thread: ThreadRecord) in
                    if case .all = selection { return true }
                    return thread.crashed || process.map { $0.pid == thread.tid } ?? true
                }) { try $0.thread() }
            case .images: images = try reader.elements { try $0.image() }
            case .diagnostics: diagnostics = try reader.diagnostics()
            case .softErrors: softErrors = try reader.elements { try $0.softError() }
            }
            if field == .schemaVersion || field == .format, let format, let schemaVersion,
               format != CrashReport.formatName || !(1...CrashReport.currentSchemaVersion).contains(schemaVersion) {
                throw reader.error(.invalid("not a report of this format and version"))
            }
        }
        var report = CrashReport(
            id: try requiredMember(id, "id"), kind: ReportKind(rawValue: try requiredMember(kind, "kind")),
            captureTime: try requiredMember(captureTime, "captureTime"),
            captureDurationMs: try requiredMember(captureDurationMs, "captureDurationMs"),
            crashwatchVersion: try requiredMember(crashwatchVersion, "crashwatchVersion"), signal: try requiredMember(signal, "signal"),
            process: try requiredMember(process, "process"), host: try requiredMember(host, "host"), threads: try requiredMember(threads, "threads"),
            images: try requiredMember(images, "images"), diagnostics: try requiredMember(diagnostics, "diagnostics"),
            softErrors: try requiredMember(softErrors, "softErrors"))
        report.schemaVersion = try requiredMember(schemaVersion, "schemaVersion")
        report.format = try requiredMember(format, "format")
        guard report.format == CrashReport.formatName, (1...CrashReport.currentSchemaVersion).contains(report.schemaVersion) else {
            throw error(.invalid("not a report of this format and version"))
        }
        report.holdDurationMs = holdDurationMs
        report.hang = hang
        report.exit = exit
        report.hangReportID = hangReportID
        report.runID = runID
        report.source = source
        report.coreFile = coreFile
        report.fingerprint = fingerprint
        report.annotations = annotations
        report.breadcrumbs = breadcrumbs
        return report
    }

    enum SignalFields: Int, JSONFields {
        case number, name, code, codeName, faultAddress, senderPID, senderUID, syscall, description, originalFault, activeFaults
        case tid, time, registers, frames
        static let keys = JSONKeys(Self.self)
    }

    /// The members a fatal signal and an original fault share, and the fault's own (`isFault`); a signal ignores
    /// the fault's members and a fault the signal's.
    private mutating func signalMembers(isFault: Bool) throws -> (record: SignalRecord, fault: OriginalFault?) {
        var number: Int32?, name: String?, code: Int32?, codeName: String?, faultAddress: Address?, senderPID: Int32?
        var senderUID: UInt32?, syscall: Int32?, description: String?, originalFault: OriginalFault?
        var activeFaults: [OriginalFault]?, tid: Int32?, time: String?, registers: [RegisterValue]?, frames: [FrameRecord]?
        try members { (reader, field: SignalFields) in
            switch field {
            case .number: number = try reader.integer()
            case .name: name = try reader.string()
            case .code: code = try reader.integer()
            case .codeName: codeName = try reader.string()
            case .faultAddress: faultAddress = try reader.optionalAddress()
            case .senderPID: senderPID = try reader.optionalInteger()
            case .senderUID: senderUID = try reader.optionalInteger()
            case .syscall: syscall = try reader.optionalInteger()
            case .description: description = try reader.string()
            case .originalFault where !isFault: originalFault = try reader.null() ? nil : reader.originalFault()
            case .activeFaults where !isFault: activeFaults = try reader.null() ? nil : reader.elements { try $0.originalFault() }
            case .tid where isFault: tid = try reader.integer()
            case .time where isFault: time = try reader.string()
            case .registers where isFault: registers = try reader.elements { try $0.register() }
            case .frames where isFault: frames = try reader.elements { try $0.frame() }
            default: try reader.skipValue()
            }
        }
        var record = SignalRecord(SignalInfo(signo: 0, code: 0))
        record.number = try requiredMember(number, "number")
        record.name = try requiredMember(name, "name")
        record.code = try requiredMember(code, "code")
        record.codeName = try requiredMember(codeName, "codeName")
        record.faultAddress = faultAddress
        record.senderPID = senderPID
        record.senderUID = senderUID
        record.syscall = syscall
        record.description = try requiredMember(description, "description")
        record.originalFault = originalFault
        record.activeFaults = activeFaults ?? []
        guard isFault else { return (record, nil) }
        var fault = OriginalFault(SignalInfo(signo: 0, code: 0), tid: try requiredMember(tid, "tid"), time: try requiredMember(time, "time"),
                                  registers: try requiredMember(registers, "registers"), frames: try requiredMember(frames, "frames"))
        fault.number = record.number
        fault.name = record.name
        fault.code = record.code
        fault.codeName = record.codeName
        fault.faultAddress = record.faultAddress
        fault.senderPID = record.senderPID
        fault.senderUID = record.senderUID
        fault.syscall = record.syscall
        fault.description = record.description
        return (record, fault)
    }

    /// Reads the fatal signal.
    mutating func signal() throws -> SignalRecord { try signalMembers(isFault: false).record }

    /// Reads an original fault.
    mutating func originalFault() throws -> OriginalFault { try signalMembers(isFault: true).fault! }

    enum HangFields: Int, JSONFields {
        case source, startTime, durationMs, unfinished, watchdogTimeoutMs
        static let keys = JSONKeys(Self.self)
    }

    /// Reads a hang.
    mutating func hang() throws -> HangRecord {
        var source: String?, startTime: String?, durationMs: Double?, unfinished: Bool?, watchdogTimeoutMs: Double?
        try members { (reader, field: HangFields) in
            switch field {
            case .source: source = try reader.string()
            case .startTime: startTime = try reader.string()
            case .durationMs: durationMs = try reader.double()
            case .unfinished: unfinished = try reader.bool()
            case .watchdogTimeoutMs: watchdogTimeoutMs = try reader.optionalDouble()
            }
        }
        return HangRecord(source: try requiredMember(source, "source"), startTime: try requiredMember(startTime, "startTime"),
                          durationMs: try requiredMember(durationMs, "durationMs"), unfinished: try requiredMember(unfinished, "unfinished"),
                          watchdogTimeoutMs: watchdogTimeoutMs)
    }

    enum ExitFields: Int, JSONFields {
        case reason, source, evidence
        static let keys = JSONKeys(Self.self)
    }

    /// Reads an abnormal exit's reason.
    mutating func exit() throws -> ExitRecord {
        var reason: String?, source: String?, evidence: String?
        try members { (reader, field: ExitFields) in
            switch field {
            case .reason: reason = try reader.string()
            case .source: source = try reader.string()
            case .evidence: evidence = try reader.optionalString()
            }
        }
        return ExitRecord(reason: try requiredMember(reason, "reason"), source: try requiredMember(source, "source"), evidence: evidence)
    }

    enum FingerprintFields: Int, JSONFields {
        case algorithm, value, kind, signal, program, frames
        static let keys = JSONKeys(Self.self)
    }

    /// Reads a fingerprint.
    mutating func fingerprint() throws -> FingerprintRecord {
        var algorithm: String?, value: String?, kind: String?, signal: String?, program: String?, frames: [String]?
        try members { (reader, field: FingerprintFields) in
            switch field {
            case .algorithm: algorithm = try reader.string()
            case .value: value = try reader.string()
            case .kind: kind = try reader.string()
            case .signal: signal = try reader.string()
            case .program: program = try reader.string()
            case .frames: frames = try reader.elements { try $0.string() }
            }
        }
        return FingerprintRecord(algorithm: try requiredMember(algorithm, "algorithm"), value: try requiredMember(value, "value"),
                                 kind: try requiredMember(kind, "kind"), signal: try requiredMember(signal, "signal"),
                                 program: try requiredMember(program, "program"), frames: try requiredMember(frames, "frames"))
    }

    enum BreadcrumbFields: Int, JSONFields {
        case time, level, message
        static let keys = JSONKeys(Self.self)
    }

    /// Reads a breadcrumb.
    mutating func breadcrumb() throws -> BreadcrumbRecord {
        var time: String?, level: String?, message: String?
        try members { (reader, field: BreadcrumbFields) in
            switch field {
            case .time: time = try reader.optionalString()
            case .level: level = try reader.string()
            case .message: message = try reader.string()
            }
        }
        return BreadcrumbRecord(time: time, level: try requiredMember(level, "level"), message: try requiredMember(message, "message"))
    }
}
