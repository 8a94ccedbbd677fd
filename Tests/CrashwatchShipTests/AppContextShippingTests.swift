// AppContextShippingTests.swift — the app's annotations and breadcrumbs in what `ship` sends: each annotation an
// OTLP record attribute `crashwatch.annotations.<key>` (and the breadcrumbs in the body, the report's JSON), and
// in a Sentry event each annotation a tag when Sentry takes it as one unchanged, else in `extra.annotations`, the
// breadcrumbs as Sentry breadcrumbs with Sentry's levels; both bounded whatever the report holds.
import CrashwatchModel
import CrashwatchRender
import CrashwatchTestSupport
import Foundation
import Testing

/// The sample report's annotations and breadcrumbs in OTLP records.
@Suite struct OTLPAppContextTests {
    /// The record's attributes (key → value object) and its body's string, for `report` and `text`.
    func record(_ report: CrashReport, text: [UInt8] = SampleReport.exampleBytes) throws -> (attributes: [String: [String: Any]], body: String?) {
        let request = OTLPLogs.request(for: report, reportText: text, scope: OTLPLogs.Scope(version: "1"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request)) as? [String: Any])
        let resourceLogs = try #require((object["resourceLogs"] as? [[String: Any]])?.first)
        let scope = try #require((resourceLogs["scopeLogs"] as? [[String: Any]])?.first)
        let record = try #require((scope["logRecords"] as? [[String: Any]])?.first)
        var attributes: [String: [String: Any]] = [:]
        for attribute in try #require(record["attributes"] as? [[String: Any]]) {
            let key = try #require(attribute["key"] as? String)
            #expect(attributes[key] == nil, "attribute \(key) twice")
            attributes[key] = attribute["value"] as? [String: Any]
        }
        return (attributes, (record["body"] as? [String: String])?["stringValue"])
    }

    /// The `crashwatch.annotations.*` attributes of a record, prefix removed, with their string values.
    func annotations(_ attributes: [String: [String: Any]]) -> [String: String] {
        var found: [String: String] = [:]
        for (key, value) in attributes where key.hasPrefix("crashwatch.annotations.") {
            found[String(key.dropFirst("crashwatch.annotations.".count))] = value["stringValue"] as? String ?? "<not a string>"
        }
        return found
    }

    @Test("every annotation is a string attribute crashwatch.annotations.<key>, the redacted one as <redacted>")
    func annotationAttributes() throws {
        let report = SampleReport.report
        #expect(annotations(try record(report).attributes) == ["region": "eu-west-1", "request_id": "7f3a-19", "session_token": "<redacted>"])
        var bare = report
        bare.annotations = nil
        #expect(annotations(try record(bare).attributes).isEmpty)
        bare.annotations = ["odd key\n\"quoted\"": "line one\nline two\u{0}"]
        #expect(annotations(try record(bare).attributes) == ["odd key\n\"quoted\"": "line one\nline two\u{0}"],
                "keys and values travel exactly, as JSON strings")
    }

    @Test("the breadcrumbs travel in the body, which is the report's JSON, oldest first")
    func breadcrumbsInTheBody() throws {
        let body = try #require(try record(SampleReport.report).body)
        let decoded = try CrashReport.decode(Array(body.utf8))
        #expect(decoded.breadcrumbs == SampleReport.report.breadcrumbs && decoded.annotations == SampleReport.report.annotations)
        #expect(decoded.breadcrumbs?.map(\.message) == ["GET /orders/42", "cache miss for user 42"])
    }

    @Test("a report with more annotations than the capture reads ships the first 256 by key")
    func boundedAnnotations() throws {
        var report = SampleReport.report
        report.annotations = Dictionary(uniqueKeysWithValues: (0..<300).map { (String(format: "key%03d", $0), "v\($0)") })
        let shipped = annotations(try record(report).attributes)
        #expect(shipped.count == 256)
        #expect(shipped.keys.sorted() == (0..<256).map { String(format: "key%03d", $0) })
    }
}

/// The sample report's annotations and breadcrumbs in Sentry events.
@Suite struct SentryAppContextTests {
    func event(_ report: CrashReport) throws -> [String: Any] {
        let bytes = SentryEvent.event(for: report, settings: SentryEvent.Settings(version: "1"))
        #expect(JSONSyntax.isWellFormed(bytes))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("annotations Sentry takes as tags unchanged are tags, beside crashwatch's own; none in extra then")
    func annotationsAsTags() throws {
        let event = try event(SampleReport.report)
        let tags = try #require(event["tags"] as? [String: String])
        #expect(tags["region"] == "eu-west-1" && tags["request_id"] == "7f3a-19" && tags["session_token"] == "<redacted>")
        #expect(tags["signal"] == "SIGSEGV" && tags["executable"] == "segv_reraise", "crashwatch's own tags stay")
        let extra = try #require(event["extra"] as? [String: Any])
        #expect(extra["annotations"] == nil && extra["crashwatch_report_id"] as? String == SampleReport.report.id)
    }

    @Test("a key or value a tag cannot hold as it is goes to extra.annotations, unchanged")
    func misfitsGoToExtra() throws {
        var report = SampleReport.report
        let long = String(repeating: "v", count: 201)
        report.annotations = [
            "fits": String(repeating: "v", count: 200), String(repeating: "k", count: 32): "fits too", "a.b:c-d_e": "ok",
            String(repeating: "k", count: 33): "key too long", "with space": "x", "naïve": "x", "value": long,
            "multi": "line\nbreak", "tab": "a\tb", "empty": "", "padded": " x", "signal": "mine", "release": "9.9",
            "sentry:user": "x",
        ]
        let event = try event(report)
        let tags = try #require(event["tags"] as? [String: String])
        let extra = try #require((event["extra"] as? [String: Any])?["annotations"] as? [String: String])
        #expect(Set(tags.keys).subtracting(["kind", "signal", "signal_code", "executable", "systemd_unit", "app", "fingerprint"])
                == ["fits", String(repeating: "k", count: 32), "a.b:c-d_e"])
        #expect(tags["signal"] == "SIGSEGV", "an annotation never replaces crashwatch's own tag")
        #expect(extra == [String(repeating: "k", count: 33): "key too long", "with space": "x", "naïve": "x", "value": long,
                          "multi": "line\nbreak", "tab": "a\tb", "empty": "", "padded": " x", "signal": "mine", "release": "9.9",
                          "sentry:user": "x"])
        #expect(event["release"] as? String == "demo@2.4.1", "an annotation named release is no release")
    }

    @Test("breadcrumbs are Sentry breadcrumbs, oldest first: timestamp, category crashwatch, Sentry's level, message")
    func breadcrumbs() throws {
        var report = SampleReport.report
        report.breadcrumbs! += [BreadcrumbRecord(time: nil, level: "unknown", message: "no clock"),
                                BreadcrumbRecord(time: "2026-11-30T09:01:57.100Z", level: "fatal", message: "giving up")]
        let values = try #require((try event(report)["breadcrumbs"] as? [String: Any])?["values"] as? [[String: Any]])
        #expect(values.map { $0["message"] as? String } == ["GET /orders/42", "cache miss for user 42", "no clock", "giving up"])
        #expect(values.map { $0["level"] as? String } == ["info", "warning", "info", "fatal"])
        #expect(values.map { $0["timestamp"] as? String } == ["2026-11-30T09:01:56.214Z", "2026-11-30T09:01:57.019Z", nil, "2026-11-30T09:01:57.100Z"])
        #expect(values.allSatisfy { $0["category"] as? String == "crashwatch" && $0["type"] as? String == "default" })
        #expect(values[2]["data"] as? [String: String] == ["level": "unknown"], "the level Sentry has no word for is kept in data")
        #expect(values[0]["data"] == nil)
    }

    @Test("no breadcrumbs, no breadcrumbs member; more than 256, the newest 256")
    func boundedBreadcrumbs() throws {
        var report = SampleReport.report
        report.breadcrumbs = nil
        report.annotations = nil
        let bare = try event(report)
        #expect(bare["breadcrumbs"] == nil && (bare["extra"] as? [String: Any])?["annotations"] == nil)
        report.breadcrumbs = (0..<300).map { BreadcrumbRecord(time: nil, level: "debug", message: "step \($0)") }
        let values = try #require((try event(report)["breadcrumbs"] as? [String: Any])?["values"] as? [[String: Any]])
        #expect(values.count == 256 && values.first?["message"] as? String == "step 44" && values.last?["message"] as? String == "step 299")
    }
}
