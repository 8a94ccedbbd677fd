// JournalRecordTests.swift — the journal record of a report: its fields for Fixtures/example-report.json exactly,
// the priority by kind, optional fields left out, values the crashed program chose (newlines, length) kept
// safe, and the record sent to an AF_UNIX datagram socket the test binds and parsed back as journald would.
@testable import CrashwatchReporter
import CrashwatchModel
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

@Suite struct JournalEntryTests {
    /// Fixtures/example-report.json: a SIGSEGV re-raised by a handler (SI_TKILL) after a SEGV_MAPERR at 0x0 in
    /// `store_byte`, in unit demo.service.
    static let report: CrashReport = {
        (try? CrashReport.decode(SampleReport.exampleBytes))!
    }()

    static let path = "/var/lib/crashwatch/reports/20261130T090157.123Z-4242-segv_reraise-3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13.json"

    /// The fields as (name, text) pairs.
    private func pairs(_ fields: [JournalField]) -> [(String, String)] {
        fields.map { ($0.name, String(decoding: $0.value, as: UTF8.self)) }
    }

    @Test("the fixture's record: fixed MESSAGE_ID, priority 2, a coredump-like MESSAGE and the CRASHWATCH_ fields")
    func fixtureFields() {
        let fields = pairs(JournalRecord.fields(report: Self.report, path: Self.path))
        let expected: [(String, String)] = [
            ("MESSAGE_ID", "d7e5caf9ec8a4875a8d4176d5e7785c8"),
            ("PRIORITY", "2"),
            ("SYSLOG_IDENTIFIER", "crashwatch"),
            ("MESSAGE", "Process 4242 (segv_reraise) of unit demo.service crashed: SIGSEGV (SI_TKILL) from pid 4242; "
                + "original fault: SIGSEGV (SEGV_MAPERR) at 0x0 in store_byte (segv_reraise.c:31)"),
            ("CRASHWATCH_REPORT", Self.path),
            ("CRASHWATCH_REPORT_ID", "3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13"),
            ("CRASHWATCH_KIND", "crash"),
            ("CRASHWATCH_SIGNAL", "SIGSEGV"),
            ("CRASHWATCH_PID", "4242"),
            ("CRASHWATCH_EXE", "/opt/demo/bin/segv_reraise"),
            ("CRASHWATCH_UNIT", "demo.service"),
            ("CRASHWATCH_INVOCATION_ID", "0b6f1c6e2d8a4f0e9e3f5a7c1d2b4e6f"),
            ("CRASHWATCH_FRAME", "store_byte"),
        ]
        #expect(fields.map(\.0) == expected.map(\.0))
        #expect(fields.map(\.1) == expected.map(\.1))
        #expect(!fields.contains { $0.0.hasPrefix("_") }, "trusted fields are journald's to add")
    }

    @Test("priority 2 (critical) for a crash, 4 (warning) for every other kind", arguments: [
        ("crash", "2"), ("abnormalExit", "4"), ("hang", "4"),
    ])
    func priorityByKind(kind: String, priority: String) {
        var report = Self.report
        report.kind = ReportKind(rawValue: kind)
        let fields = pairs(JournalRecord.fields(report: report, path: Self.path))
        #expect(fields.first { $0.0 == "PRIORITY" }?.1 == priority)
        #expect(fields.first { $0.0 == "CRASHWATCH_KIND" }?.1 == kind)
    }

    @Test("from a final report's bytes, the record is the whole report's, decoded from its crashed and main threads only",
          arguments: ["re-raised crash", "crash", "hang", "abnormal exit"])
    func recordFromBytes(_ variant: String) throws {
        var report = Self.report
        let main = report.threads[0], other = report.threads[1]
        // Many threads, the ones the record needs among them and not first; frames that would name another.
        var threads = (0..<300).map { index in
            var thread = other
            thread.tid = 5_000 + Int32(index)
            thread.frames = other.frames.map { frame in
                var frame = frame
                frame.function = "not_this_\(index)"
                return frame
            }
            return thread
        }
        switch variant {
        case "re-raised crash":
            threads.insert(main, at: 150)
        case "crash":
            report.signal.originalFault = nil
            var crashed = main
            crashed.tid = 4_300
            threads.insert(crashed, at: 299)
            var first = main
            first.crashed = false
            threads.insert(first, at: 10)
        default:
            report.kind = ReportKind(rawValue: variant == "hang" ? "hang" : "abnormalExit")
            report.signal.originalFault = nil
            var first = main
            first.crashed = false
            threads.insert(first, at: 200)
        }
        report.threads = threads
        let bytes = try report.encodedJSON()
        let whole = try CrashReport.decode(bytes)
        let headline = try #require(JournalRecord.headlineReport(bytes))
        #expect(headline.threads.count == (variant == "crash" ? 2 : 1))
        #expect(pairs(JournalRecord.fields(report: headline, path: Self.path)) .map { "\($0.0)=\($0.1)" }
            == pairs(JournalRecord.fields(report: whole, path: Self.path)).map { "\($0.0)=\($0.1)" })
        #expect(pairs(JournalRecord.fields(report: headline, path: Self.path)).contains { $0.0 == "CRASHWATCH_FRAME" && !$0.1.hasPrefix("not_this") })
        #expect(headline.images == whole.images && headline.process == whole.process && headline.signal == whole.signal)
    }

    @Test("bytes that are not a report give no record")
    func notAReport() {
        #expect(JournalRecord.headlineReport(Array("[]".utf8)) == nil)
        #expect(JournalRecord.headlineReport(Array(#"{"threads": [{"crashed": true}]}"#.utf8)) == nil)
        #expect(JournalRecord.headlineReport(Array(#"{"format": "#.utf8)) == nil)
    }

    @Test("no unit, no invocation id and no frame with a function: those fields are left out, not sent empty")
    func optionalFieldsLeftOut() {
        var report = Self.report
        report.process.systemdUnit = nil
        report.process.systemdInvocationID = ""
        report.signal.originalFault = nil
        for index in report.threads.indices { report.threads[index].frames = [] }
        let names = JournalRecord.fields(report: report, path: Self.path).map(\.name)
        #expect(!names.contains("CRASHWATCH_UNIT") && !names.contains("CRASHWATCH_INVOCATION_ID") && !names.contains("CRASHWATCH_FRAME"))
        #expect(names.count == 10)
        #expect(pairs(JournalRecord.fields(report: report, path: Self.path)).first { $0.0 == "MESSAGE" }?.1
            == "Process 4242 (segv_reraise) crashed: SIGSEGV (SI_TKILL) from pid 4242")
    }

    @Test("an executable path with a newline goes in the binary form, exact; an overlong one is capped at 4 KiB")
    func hostileValues() {
        var report = Self.report
        report.process.executable = "/tmp/evil\nPRIORITY=0"
        let fields = JournalRecord.fields(report: report, path: Self.path)
        let exe = fields.first { $0.name == "CRASHWATCH_EXE" }
        #expect(exe?.value == Array("/tmp/evil\nPRIORITY=0".utf8))
        let parsed = parseEntry(Journal.encode(fields))
        #expect(parsed?.filter { $0.0 == "PRIORITY" }.map(\.1) == ["2"], "the path forged a field")
        #expect(parsed?.first { $0.0 == "CRASHWATCH_EXE" }?.1 == "/tmp/evil\nPRIORITY=0")
        report.process.executable = "/" + String(repeating: "a", count: 10_000)
        let capped = JournalRecord.fields(report: report, path: Self.path).first { $0.name == "CRASHWATCH_EXE" }
        #expect((capped?.value.count ?? 0) <= JournalField.valueLimit)
        // MESSAGE is sanitized for people: the newline is shown, not sent.
        let message = JournalRecord.fields(report: report, path: Self.path).first { $0.name == "MESSAGE" }
        #expect(message.map { !$0.value.contains(UInt8(ascii: "\n")) } == true)
    }

    @Test("the record sent to a bound AF_UNIX datagram socket arrives whole and parses back into the same fields")
    func sentAndParsed() throws {
        let receiver = try DatagramSocket("cw-journal-cli")
        #expect(JournalRecord.deliver(report: Self.report, path: Self.path, socketPath: receiver.path) == .sent)
        let datagram = try #require(receiver.receive())
        try #require(!datagram.payload.isEmpty)
        let parsed = try #require(parseEntry(datagram.payload))
        let expected = pairs(JournalRecord.fields(report: Self.report, path: Self.path))
        #expect(parsed.map(\.0) == expected.map(\.0))
        #expect(parsed.map(\.1) == expected.map(\.1))
    }

    @Test("a notice about supervision itself (a forking daemon left unsupervised) is an entry of its own: its MESSAGE_ID, priority 4, the line")
    func notice() throws {
        let receiver = try DatagramSocket("cw-journal-notice")
        let line = "crashwatch: forkd exited with status 0 and left 1 process running (pid 42), now unsupervised: … needs --pid-file FILE"
        #expect(JournalRecord.sendNotice(line, socketPath: receiver.path) == .sent)
        let datagram = try #require(receiver.receive())
        let parsed = try #require(parseEntry(datagram.payload))
        #expect(parsed.map(\.0) == ["MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER", "MESSAGE"])
        #expect(parsed.map(\.1) == [JournalRecord.noticeMessageID, "4", "crashwatch", String(line.dropFirst("crashwatch: ".count))])
        #expect(JournalRecord.noticeMessageID != JournalRecord.messageID)
    }

    @Test("without a journal socket the record is not sent, and the caller hears so (to fall back to stderr)")
    func noJournal() {
        #expect(JournalRecord.deliver(report: Self.report, path: Self.path, socketPath: "/nonexistent/journal/socket") == .noJournal)
    }
}

/// An entry parsed as journald does (`JournalEntry.parse`), values as text; nil when it is malformed.
private func parseEntry(_ bytes: [UInt8]) -> [(String, String)]? {
    JournalEntry.parse(bytes)?.map { ($0.0, String(decoding: $0.1, as: UTF8.self)) }
}
