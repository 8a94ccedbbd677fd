// ReportTests.swift — the crash report's JSON shape: a full sample report round-trips, addresses are hex
// strings, keys keep declaration order, nulls are explicit, Fixtures/example-report.json is what the encoder
// writes, and RFC 3339 timestamps format and parse exactly.
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

/// Walks parsed JSON, calling `visit` with each object key path and value.
private func walk(_ value: Any, path: String, _ visit: (String, String, Any) -> Void) {
    if let object = value as? [String: Any] {
        for (key, member) in object {
            visit(path, key, member)
            walk(member, path: "\(path).\(key)", visit)
        }
    } else if let array = value as? [Any] {
        for (index, element) in array.enumerated() { walk(element, path: "\(path)[\(index)]", visit) }
    }
}

@Suite struct ReportTests {
    @Test func roundTrip() throws {
        let report = SampleReport.report
        let bytes = try report.encodedJSON()
        let decoded = try CrashReport.decode(bytes)
        #expect(decoded == report)
        // Encoding is deterministic: the same value gives the same bytes.
        #expect(try decoded.encodedJSON() == bytes)
    }

    @Test("Fixtures/example-report.json is the encoder's output for the sample (CRASHWATCH_UPDATE_FIXTURES=1 rewrites it)")
    func exampleReportIsCurrent() throws {
        let bytes = try SampleReport.report.encodedJSON()
        if ProcessInfo.processInfo.environment["CRASHWATCH_UPDATE_FIXTURES"] == "1" {
            try Data(bytes).write(to: URL(fileURLWithPath: SampleReport.examplePath))
        }
        let stored = try Data(contentsOf: URL(fileURLWithPath: SampleReport.examplePath))
        #expect(Array(stored) == bytes, "the encoder's output changed: review it, then rerun with CRASHWATCH_UPDATE_FIXTURES=1")
        #expect(try CrashReport.decode(Array(stored)) == SampleReport.report)
    }

    @Test("every address, offset and register value is a lower-case hex string")
    func addressesAreHexStrings() throws {
        let bytes = try SampleReport.report.encodedJSON()
        let json = try JSONSerialization.jsonObject(with: Data(bytes))
        let addressKeys: Set<String> = ["address", "imageOffset", "symbolOffset", "faultAddress", "loadAddress", "fileOffset"]
        let hexPattern = #/^0x[0-9a-f]+$/#
        var checked = 0
        walk(json, path: "$") { path, key, value in
            let isRegisterValue = key == "value" && path.contains(".registers[")
            guard addressKeys.contains(key) || isRegisterValue else { return }
            if value is NSNull && key != "address" && key != "loadAddress" && key != "fileOffset" && !isRegisterValue { return }
            guard let text = value as? String else {
                Issue.record("\(path).\(key) is \(type(of: value)), not a hex string")
                return
            }
            #expect(text.wholeMatch(of: hexPattern) != nil, "\(path).\(key) = \(text)")
            checked += 1
        }
        // 3 register sets of 26, 13 frames with address, imageOffset and symbolOffset, the original fault's
        // address (the final signal's is null), 2 images with loadAddress and fileOffset.
        #expect(checked == 26 * 3 + 13 * 3 + 1 + 2 * 2)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""faultAddress": "0x0""#))
        #expect(text.contains(#""address": "0x55812a401189""#))
        #expect(text.contains(#"{"name": "rip", "value": "0x55812a401189"}"#))
        #expect(!text.contains(#""address": 9"#))
    }

    @Test("keys keep declaration order, nil is null, slashes are not escaped")
    func layout() throws {
        let text = String(decoding: try SampleReport.report.encodedJSON(), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"schemaVersion\": 1,\n  \"format\": \"crashwatch.report\",\n  \"id\": \"3f2b8c1e-"))
        #expect(text.hasSuffix("}\n"))
        let topKeys = text.split(separator: "\n").filter { $0.hasPrefix("  \"") && !$0.hasPrefix("   ") }
            .map { $0.dropFirst(3).prefix { $0 != "\"" } }
        #expect(topKeys == ["schemaVersion", "format", "id", "kind", "captureTime", "captureDurationMs", "holdDurationMs", "crashwatchVersion",
                            "signal", "hang", "exit", "hangReportID", "runID", "source", "coreFile", "fingerprint", "annotations", "breadcrumbs", "process", "host", "threads", "images", "diagnostics", "softErrors"])
        #expect(text.contains(#""captureTime": "2026-11-30T09:01:57.123Z""#))
        #expect(text.contains(#""captureDurationMs": 18.75"#))
        #expect(text.contains(#""senderPID": 4242"#) && text.contains(#""syscall": null"#))
        #expect(text.contains(#""executable": "/opt/demo/bin/segv_reraise""#))
        #expect(text.contains(#""commandLine": ["/opt/demo/bin/segv_reraise", "--mode", "write \"quoted\""]"#))
        #expect(text.contains("\"environment\": {\n      \"DEMO_MODE\": \"production\",\n      \"LANG\": \"C.UTF-8\"\n    }"))
        // One line per frame, image and register.
        #expect(text.contains(#"        {"index": 0, "address": "0x55812a401189", "imageIndex": 0, "imageOffset": "0x1189", "symbol": "store_byte", "function": "store_byte", "symbolOffset": "0x0", "symbolSource": null, "file": "/src/demo/segv_reraise.c", "line": 31, "column": 12, "inlined": true, "how": "inline"}"#))
        #expect(text.contains(#""file": null, "line": null, "column": null, "inlined": false, "how": "scan"}"#))
    }

    @Test func emptyAndMissingValues() throws {
        var report = SampleReport.report
        report.signal = SignalRecord(SignalInfo(signo: 9, code: 0, pid: 1, uid: 0))
        report.kind = .abnormalExit
        report.process.app = nil
        report.process.environment = [:]
        report.process.commandLine = []
        report.process.redacted = true
        report.threads = []
        report.softErrors = []
        let bytes = try report.encodedJSON()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""originalFault": null"#))
        #expect(text.contains(#""app": null"#))
        #expect(text.contains(#""environment": {}"#) && text.contains(#""commandLine": []"#))
        #expect(text.contains(#""threads": []"#) && text.contains(#""softErrors": []"#))
        #expect(text.contains(#""kind": "abnormalExit""#))
        #expect(try CrashReport.decode(bytes) == report)
        #expect(report.crashedThread == nil)
        #expect(SampleReport.report.crashedThread?.tid == 4242)
        #expect(SampleReport.report.mainExecutable?.name == "segv_reraise")
    }

    @Test func stringsAreEscaped() throws {
        var report = SampleReport.report
        report.process.commandLine = ["tab\there", "new\nline", "quote\"back\\slash", "bell\u{7}", "ünïcødé ✓", "a/b"]
        let bytes = try report.encodedJSON()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#"["tab\there", "new\nline", "quote\"back\\slash", "bell\u0007", "ünïcødé ✓", "a/b"]"#))
        #expect(try CrashReport.decode(bytes) == report)
    }

    @Test func nonFiniteDurationIsRefused() {
        var report = SampleReport.report
        report.captureDurationMs = .nan
        #expect(throws: EncodingError.self) { try report.encodedJSON() }
    }

    @Test func signalRecordFromSignalInfo() {
        let record = SignalRecord(SignalInfo(signo: 11, code: 1, address: 0x10))
        #expect(record.number == 11 && record.name == "SIGSEGV" && record.code == 1 && record.codeName == "SEGV_MAPERR")
        #expect(record.faultAddress == 0x10 && record.senderPID == nil && record.senderUID == nil)
        #expect(record.description == "Segmentation fault: address not mapped to object at 0x10")
        let sent = SignalRecord(SignalInfo(signo: 6, code: -6, pid: 77, uid: 1000))
        #expect(sent.faultAddress == nil && sent.senderPID == 77 && sent.senderUID == 1000 && sent.codeName == "SI_TKILL")
        let seccomp = SignalRecord(SignalInfo(signo: 31, code: 1, address: 0x7f00, syscall: 59))
        #expect(seccomp.syscall == 59 && seccomp.codeName == "SYS_SECCOMP")
        let original = OriginalFault(SignalInfo(signo: 8, code: 1, address: 0x401000), tid: 9, time: "2026-01-01T00:00:00.000Z")
        #expect(original.name == "SIGFPE" && original.codeName == "FPE_INTDIV" && original.faultAddress == 0x401000)
        #expect(original.tid == 9 && original.registers.isEmpty && original.frames.isEmpty)
    }

    @Test func decodingRefusesOtherDocuments() throws {
        #expect(throws: ReportDecodingError.notAReport(format: "other")) {
            try CrashReport.decode(Array(#"{"format": "other", "schemaVersion": 1}"#.utf8))
        }
        #expect(throws: ReportDecodingError.notAReport(format: nil)) { try CrashReport.decode(Array("{}".utf8)) }
        #expect(throws: ReportDecodingError.unsupportedSchemaVersion(2)) {
            try CrashReport.decode(Array(#"{"format": "crashwatch.report", "schemaVersion": 2}"#.utf8))
        }
        #expect(throws: DecodingError.self) { try CrashReport.decode(Array("[1, 2]".utf8)) }
        // A numeric address is malformed, not silently accepted.
        let text = String(decoding: try SampleReport.report.encodedJSON(), as: UTF8.self)
            .replacingOccurrences(of: #""loadAddress": "0x55812a400000""#, with: #""loadAddress": 93999999999"#)
        #expect(throws: DecodingError.self) { try CrashReport.decode(Array(text.utf8)) }
    }

    @Test("kinds and frame trusts added later in version 1 still decode")
    func openValueSets() throws {
        let text = String(decoding: try SampleReport.report.encodedJSON(), as: UTF8.self)
            .replacingOccurrences(of: #""kind": "crash""#, with: #""kind": "hang""#)
            .replacingOccurrences(of: #""how": "scan""#, with: #""how": "dwarfCrossCheck""#)
        let report = try CrashReport.decode(Array(text.utf8))
        #expect(report.kind == ReportKind(rawValue: "hang"))
        #expect(report.threads[1].frames[3].how == FrameTrust(rawValue: "dwarfCrossCheck"))
        #expect(FrameTrust.allKnown.map(\.rawValue) == ["context", "cfi", "debugFrame", "framePointer", "scan", "returnAddressAtSP", "inline"])
    }

    @Test func addressParsing() {
        #expect(Address(hex: "0x0") == 0)
        #expect(Address(hex: "0xffffffffffffffff") == Address(UInt64.max))
        #expect(Address(hex: "0xDEADbeef") == 0xdead_beef)
        #expect(Address(hex: "0x") == nil)
        #expect(Address(hex: "0x1ffffffffffffffff") == nil)
        #expect(Address(hex: "0x+1") == nil)
        #expect(Address(hex: "12") == nil)
        #expect(Address(hex: " 0x1") == nil)
        #expect(Address(0xabc).description == "0xabc")
        #expect(Address(1) < Address(2))
    }

    @Test func imageNames() {
        #expect(ImageRecord.basename("/usr/lib/x86_64-linux-gnu/libc.so.6") == "libc.so.6")
        #expect(ImageRecord.basename("[vdso]") == "[vdso]")
        #expect(ImageRecord.basename("/opt/my app/lib x.so") == "lib x.so")
        let image = ImageRecord(path: "/memfd:payload", buildID: nil, loadAddress: 0x1000, size: 4096, inApp: false,
                                architecture: nil, deleted: true)
        #expect(image.name == "memfd:payload" && image.fileOffset == 0 && !image.isMainExecutable)
    }

    @Test func newIDsAreLowerCaseUUIDs() {
        let id = CrashReport.newID()
        #expect(id.wholeMatch(of: #/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/#) != nil)
        #expect(CrashReport.newID() != id)
    }
}

@Suite struct RFC3339Tests {
    /// Nanoseconds in one second, for readable literals.
    static let second: Int64 = 1_000_000_000

    @Test func formatsKnownInstants() {
        #expect(RFC3339.format(nanosecondsSinceEpoch: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: 1_796_029_317_123_456_789) == "2026-11-30T09:01:57.123Z")
        // Milliseconds are truncated, never rounded up into the next second.
        #expect(RFC3339.format(nanosecondsSinceEpoch: 59 * Self.second + 999_999_999) == "1970-01-01T00:00:59.999Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: -1) == "1969-12-31T23:59:59.999Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: -86_400 * Self.second) == "1969-12-31T00:00:00.000Z")
        // The 32-bit time_t limit and one second past it.
        #expect(RFC3339.format(nanosecondsSinceEpoch: 2_147_483_647 * Self.second) == "2038-01-19T03:14:07.000Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: 2_147_483_648 * Self.second) == "2038-01-19T03:14:08.000Z")
        // Leap years: 2000 is one (divisible by 400), 2100 is not (divisible by 100), 2024 is.
        #expect(RFC3339.format(nanosecondsSinceEpoch: 951_782_400 * Self.second) == "2000-02-29T00:00:00.000Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: 951_868_800 * Self.second) == "2000-03-01T00:00:00.000Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: 1_709_164_800 * Self.second) == "2024-02-29T00:00:00.000Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: 4_107_456_000 * Self.second) == "2100-02-28T00:00:00.000Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: 4_107_542_400 * Self.second) == "2100-03-01T00:00:00.000Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: 4_102_444_799 * Self.second + 500_000_000) == "2099-12-31T23:59:59.500Z")
        // The ends of the Int64 range.
        #expect(RFC3339.format(nanosecondsSinceEpoch: .max) == "2262-04-11T23:47:16.854Z")
        #expect(RFC3339.format(nanosecondsSinceEpoch: .min) == "1677-09-21T00:12:43.145Z")
    }

    @Test func parsesWhatItFormats() {
        #expect(RFC3339.parse("1970-01-01T00:00:00.000Z") == 0)
        #expect(RFC3339.parse("2026-11-30T09:01:57.123Z") == 1_796_029_317_123_000_000)
        #expect(RFC3339.parse("2038-01-19T03:14:08Z") == 2_147_483_648 * Self.second)
        #expect(RFC3339.parse("2100-03-01T00:00:00.000Z") == 4_107_542_400 * Self.second)
        #expect(RFC3339.parse("1969-12-31T23:59:59.999999999Z") == -1)
        #expect(RFC3339.parse("2262-04-11T23:47:16.854775807Z") == .max)
        #expect(RFC3339.parse("1677-09-21T00:12:43.145224192Z") == .min)
        for nanoseconds: Int64 in [0, 1, -1, 1_796_029_317_123_456_789, -9_999_999_999_999, 4_107_542_399_999_999_999] {
            let text = RFC3339.format(nanosecondsSinceEpoch: nanoseconds)
            let truncated = nanoseconds - ((nanoseconds % 1_000_000) + 1_000_000) % 1_000_000
            #expect(RFC3339.parse(text) == truncated, "\(text)")
        }
    }

    @Test func parsesOffsetsAndVariants() {
        let utc: Int64 = 1_796_029_317 * Self.second
        #expect(RFC3339.parse("2026-11-30T10:01:57+01:00") == utc)
        #expect(RFC3339.parse("2026-11-30T04:31:57-04:30") == utc)
        #expect(RFC3339.parse("2026-11-30t09:01:57z") == utc)
        #expect(RFC3339.parse("2026-11-30T09:01:57.1Z") == utc + 100_000_000)
        #expect(RFC3339.parse("2026-11-30T09:01:57.1234567891234Z") == utc + 123_456_789)
        #expect(RFC3339.parse("2026-12-01T00:30:00+15:29") != nil)
    }

    @Test("malformed and impossible timestamps are refused", arguments: [
        "", "2026-11-30", "2026-11-30T09:01:57", "2026-11-30 09:01:57Z", "2026-11-30T09:01:57.Z",
        "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-11-31T00:00:00Z", "2100-02-29T00:00:00Z",
        "2023-02-29T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T09:60:00Z", "2016-12-31T23:59:60Z",
        "2026-11-30T09:01:57+0100", "2026-11-30T09:01:57Z ", "+2026-11-30T09:01:57Z", "2026-1-30T09:01:57Z",
        "9999-12-31T23:59:59Z", "1000-01-01T00:00:00Z",
    ])
    func refuses(_ text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test func leapDaysParse() {
        #expect(RFC3339.parse("2000-02-29T00:00:00Z") == 951_782_400 * Self.second)
        #expect(RFC3339.parse("2024-02-29T12:00:00Z") == (1_709_164_800 + 43_200) * Self.second)
        #expect(UTCDateTime.isLeapYear(2000) && UTCDateTime.isLeapYear(2024) && !UTCDateTime.isLeapYear(2100))
        #expect(!UTCDateTime.isLeapYear(1900) && UTCDateTime.daysInMonth(2, year: 1900) == 28)
    }

    @Test("agrees with Foundation's ISO 8601 formatter, day by day across 1900–2200")
    func agreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        // Step 7 days 1 h 1 min 1 s, so every weekday, hour, minute and second comes round (whole seconds:
        // Foundation goes through a Double, which cannot hold every millisecond exactly).
        let step: Int64 = (7 * 86_400 + 3661) * Self.second
        var nanoseconds: Int64 = -2_208_988_800 * Self.second  // 1900-01-01
        var checked = 0
        while nanoseconds < 7_258_118_400 * Self.second {  // 2200-01-01
            let date = Date(timeIntervalSince1970: Double(nanoseconds / Self.second))
            let ours = RFC3339.format(nanosecondsSinceEpoch: nanoseconds)
            if ours != formatter.string(from: date) {
                Issue.record("\(nanoseconds): ours \(ours), Foundation \(formatter.string(from: date))")
                break
            }
            #expect(RFC3339.parse(ours) == nanoseconds)
            nanoseconds += step
            checked += 1
        }
        #expect(checked > 15_000)
    }
}
