// AnnotationHostileTests.swift — annotation tables made hostile by the crashed program itself
// (Fixtures/annotations_hostile_tables.c, one attack per argument; annotations_hostile_notes.c, 10,000 declared
// tables): a slot array past its mapping, `next` loops, 1 GiB counts and 64 KiB slots, invalid UTF-8, a torn
// entry being written at the crash, a table rewritten by another process while captured, a table of a later
// version. Each run must end as the program does (SIGSEGV) within the capture timeout and a grace, with one
// report valid against the schema whose annotations and breadcrumbs are within the caps, whose copied table bytes
// (`diagnostics.annotationBytes`) are within 2 MiB, whose hold stays short, and whose soft errors of stage
// `annotations` name what was wrong.
import CrashwatchTestSupport
import Foundation
import Testing

/// The `--capture-timeout` every run gets, in seconds, and how much longer the whole run may take (a guard
/// against a hang, not a speed target).
private let captureTimeout = 2.0
private let grace = 3.0
/// A hold longer than this means the tables were not read within their caps (a normal hold is a few ms; the
/// bound is wide for a machine busy with other builds).
private let maximumHoldMs = 500.0

/// One supervised run of a hostile fixture and its one report.
private struct AnnotatedRun {
    let report: WrittenReport
    let stderr: String

    var annotations: [String: String] { report.json["annotations"] as? [String: String] ?? [:] }
    var breadcrumbs: [[String: Any]] { report.json["breadcrumbs"] as? [[String: Any]] ?? [] }
    /// The messages of the soft errors of stage `annotations`.
    var problems: [String] {
        (report.json["softErrors"] as? [[String: Any]] ?? []).filter { $0["stage"] as? String == "annotations" }
            .compactMap { $0["message"] as? String }
    }

    /// Whether some problem contains `text`.
    func names(_ text: String) -> Bool { problems.contains { $0.contains(text) } }
}

/// Runs `fixture MODE` under `crashwatch run --capture-timeout 2` and checks what every hostile run must show.
private func runHostile(_ fixture: String, _ arguments: [String] = []) throws -> AnnotatedRun {
    let clock = ContinuousClock()
    let start = clock.now
    let (result, reports, _) = try runCapturing(Paths.fixture(fixture), arguments, options: ["--capture-timeout", "\(captureTimeout)"])
    let elapsed = clock.now - start
    #expect(elapsed < .seconds(captureTimeout + grace), "the run took \(elapsed)")
    #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
    try #require(reports.count == 1, "\(reports.count) reports: \(result.stderr)")
    let report = reports[0]
    let diagnostics = report.json["diagnostics"] as? [String: Any] ?? [:]
    #expect(diagnostics["processing"] as? String == "complete", "\(report.json["softErrors"] ?? "")")
    let bytes = try #require(diagnostics["annotationBytes"] as? Int, "no annotationBytes: the table was not found")
    #expect(bytes <= 2 << 20)
    let hold = try #require(report.json["holdDurationMs"] as? Double)
    #expect(hold < maximumHoldMs)
    #expect((report.json["annotations"] as? [String: Any] ?? [:]).count <= 256)
    #expect((report.json["breadcrumbs"] as? [Any] ?? []).count <= 256)
    #expect(report.data.count < 4 << 20, "a report of \(report.data.count) bytes")
    return AnnotatedRun(report: report, stderr: result.stderr)
}

@Suite(.serialized) struct AnnotationHostileTests {
    @Test("a slot array that runs past its mapping is refused, the rest of the table read")
    func pastMapping() throws {
        let run = try runHostile("annotations_hostile_tables", ["past-mapping"])
        #expect(run.names("annotation slots at 0x") && run.names("not in writable memory"), "\(run.problems)")
        #expect(run.annotations.isEmpty, "annotations from outside the process's memory: \(run.annotations)")
        #expect(run.breadcrumbs.map { $0["message"] as? String } == ["starting"])
    }

    @Test("a next pointer back to the first table is followed once", arguments: ["loop", "self-loop"])
    func loops(_ mode: String) throws {
        let run = try runHostile("annotations_hostile_tables", [mode])
        #expect(run.names("reached again"), "\(run.problems)")
        #expect(run.problems.count == 1, "\(run.problems)")
        var expected = ["fixture": "annotations_hostile_tables"]
        if mode == "loop" { expected["second"] = "yes" }
        #expect(run.annotations == expected)
    }

    @Test("2^30 annotation slots of 64 KiB keys and 2^32-1 breadcrumb slots are capped, not read")
    func hugeCounts() throws {
        let run = try runHostile("annotations_hostile_tables", ["huge"])
        #expect(run.names("annotation slots of key size 65535"), "\(run.problems)")
        #expect(run.names("4294967295 breadcrumb slots declared: the first 256 read"), "\(run.problems)")
        let bytes = (run.report.json["diagnostics"] as? [String: Any])?["annotationBytes"] as? Int ?? -1
        // The header and 256 breadcrumb slots of the default 128-byte messages (152 bytes each).
        #expect(bytes == 72 + 256 * 152)
        #expect(run.breadcrumbs.map { $0["message"] as? String } == ["starting"])
    }

    @Test("invalid UTF-8 in a key, a value and a message becomes U+FFFD, each named in a soft error")
    func invalidUTF8() throws {
        let run = try runHostile("annotations_hostile_tables", ["utf8"])
        #expect(run.annotations["bad\u{FFFD}key"] == "fine")
        #expect(run.annotations["badvalue"] == "\u{FFFD}( half a character")
        #expect(run.breadcrumbs.last?["message"] as? String == "\u{FFFD}\u{FFFD}\u{FFFD} a surrogate")
        #expect(run.problems.filter { $0.contains("not UTF-8") }.count == 3, "\(run.problems)")
    }

    @Test("an entry being written at the crash is dropped and named; a value rewritten in a tight loop is never read torn")
    func torn() throws {
        let run = try runHostile("annotations_hostile_tables", ["torn"])
        #expect(run.names("annotation 'half' was being written at the crash: dropped"), "\(run.problems)")
        #expect(run.names("breadcrumb slot 2 was being written at the crash: dropped"), "\(run.problems)")
        #expect(run.annotations["half"] == nil)
        if let churn = run.annotations["churn"] {
            #expect(churn == String(repeating: "a", count: 199) || churn == String(repeating: "b", count: 199), "a torn value: \(churn)")
        }
        #expect(run.annotations["fixture"] == "annotations_hostile_tables")
    }

    @Test("a table of a later version is skipped with a soft error, the first one still read")
    func laterVersion() throws {
        let run = try runHostile("annotations_hostile_tables", ["version2"])
        #expect(run.names("table version 2"), "\(run.problems)")
        #expect(run.annotations == ["fixture": "annotations_hostile_tables"])
    }

    @Test("a table another process rewrites without pause while the crashed one is held gives a bounded report")
    func changing() throws {
        let run = try runHostile("annotations_hostile_tables", ["changing"])
        #expect(run.annotations["fixture"] == "annotations_hostile_tables")
    }

    @Test("10,000 declared tables: at most 64 read, the first wins its key, the rest named")
    func tenThousandTables() throws {
        let run = try runHostile("annotations_hostile_notes")
        #expect(run.annotations == ["table": "0"])
        #expect(run.names("the notes past them were not read"), "\(run.problems)")
        #expect(run.names("not followed"), "\(run.problems)")
        let bytes = (run.report.json["diagnostics"] as? [String: Any])?["annotationBytes"] as? Int ?? -1
        // 64 tables: each a header and one annotation slot of 8 + 64 + 256 bytes.
        #expect(bytes == 64 * (72 + 328))
    }
}
