// ReaderFuzzTests.swift — what the readers do with damaged reports: 3,000 deterministic mutations of a
// real report (bytes flipped, cut, duplicated, values swapped for hostile ones) go through the JSON
// well-formedness check, the decoder and every renderer (and the OTLP record and Sentry event `ship` sends). None
// may trap or hang; whatever decodes renders.
import CrashwatchModel
import CrashwatchRender
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct ReaderFuzzTests {
    /// The report mutated: the render fixture, with the app's annotations and breadcrumbs.
    static let original: [UInt8] = {
        var report = ExportFixture.report
        report.annotations = ["region": "eu-west-1", "session_token": "<redacted>"]
        report.breadcrumbs = [BreadcrumbRecord(time: "2026-11-30T09:01:56.214Z", level: "info", message: "GET /orders/42"),
                              BreadcrumbRecord(time: nil, level: "unknown", message: "no clock")]
        return Array((try? report.encodedJSON()) ?? [])
    }()

    /// Hostile values to splice in where a value was.
    static let splices: [String] = [
        "null", "-1", "1e400", "18446744073709551616", "\"\\u0000\"", "\"\\ud800\"", "[]", "{}", "\"0x\"", "\"0xzz\"",
        "\"" + String(repeating: "A", count: 70_000) + "\"", "\"\\u001b[2J\"", "9223372036854775807", "-9223372036854775808",
        "true", "\"\"", "[[[[[[[[[[]]]]]]]]]]", "\"2026-13-45T99:99:99.999Z\"",
    ]

    static func mutate(_ bytes: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var result = bytes
        switch rng.next() % 5 {
        case 0:  // flip a few bytes
            for _ in 0..<(1 + rng.next() % 8) where !result.isEmpty {
                result[Int(rng.next() % UInt64(result.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
        case 1:  // cut
            result = Array(result.prefix(Int(rng.next() % UInt64(result.count + 1))))
        case 2:  // duplicate a slice
            let start = Int(rng.next() % UInt64(result.count)), length = Int(rng.next() % 400)
            result.insert(contentsOf: result[start..<min(start + length, result.count)], at: Int(rng.next() % UInt64(result.count)))
        case 3:  // replace one value after a colon by a hostile one
            let colons = result.indices.filter { result[$0] == UInt8(ascii: ":") }
            guard let colon = colons.isEmpty ? nil : colons[Int(rng.next() % UInt64(colons.count))] else { break }
            var end = colon + 2
            while end < result.count, result[end] != UInt8(ascii: ","), result[end] != UInt8(ascii: "\n") { end += 1 }
            let splice = Array(splices[Int(rng.next() % UInt64(splices.count))].utf8)
            if colon + 2 <= end { result.replaceSubrange((colon + 2)..<end, with: splice) }
        default:  // drop a line
            let lines = result.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            var kept = Array(lines)
            if !kept.isEmpty { kept.remove(at: Int(rng.next() % UInt64(kept.count))) }
            result = Array(kept.joined(separator: [UInt8(ascii: "\n")]))
        }
        return result
    }

    @Test("3,000 mutated reports: well-formedness check, decoder and renderers never trap; what decodes renders")
    func mutations() throws {
        try #require(!Self.original.isEmpty)
        var rng = SeededGenerator(state: 0xc0ffee)
        var decoded = 0
        for _ in 0..<3_000 {
            let bytes = Self.mutate(Self.original, &rng)
            _ = JSONSyntax.isWellFormed(bytes)
            guard let report = try? CrashReport.decode(bytes) else { continue }
            decoded += 1
            let summary = ReportSummary(report)
            _ = ListRenderer.render([summary], spool: "/spool", style: .plain)
            #expect(JSONSyntax.isWellFormed(Array(ReportSummary.json([summary]).utf8)))
            _ = ShowRenderer.render(report, style: .plain)
            _ = TextExport.render(report)
            _ = HTMLExport.render(report)
            // What ship would send is well-formed JSON too, whatever the report says.
            #expect(JSONSyntax.isWellFormed(OTLPLogs.request(for: report, reportText: bytes, scope: OTLPLogs.Scope(version: "1"))))
            #expect(JSONSyntax.isWellFormed(SentryEvent.event(for: report, settings: SentryEvent.Settings(version: "1"))))
            // What decodes also encodes again, and that is well-formed.
            if let again = try? report.encodedJSON() { #expect(JSONSyntax.isWellFormed(again)) }
        }
        #expect(decoded > 100, "too few mutations still decode to exercise the renderers: \(decoded)")
    }
}
