// AnnotationTests.swift — what the app knew when it crashed: the annotations and breadcrumbs a program keeps in its
// own memory (annotations/crashwatch_annotations.h) reach its report, merged with the operator's `--annotate`
// facts, redacted where a key holds a deny-list word. annotations_basic's header states what its report holds.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct AnnotationTests {
    /// The breadcrumbs of a report as (level, message) pairs, oldest first.
    static func breadcrumbs(_ report: WrittenReport) -> [(level: String, message: String)] {
        (report.json["breadcrumbs"] as? [[String: Any]] ?? []).map { ($0["level"] as? String ?? "?", $0["message"] as? String ?? "?") }
    }

    @Test("the app's annotations (one removed, one replaced) and its wrapped breadcrumb ring reach the report, under the operator's values, a token redacted")
    func basic() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("annotations_basic"),
                                                    options: ["--annotate", "region=eu-west-1", "--annotate", "request_id=x"])
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let report = try #require(reports.first, "no report: \(result.stderr)")
        #expect(reports.count == 1)
        let annotations = try #require(report.json["annotations"] as? [String: String], "no annotations")
        #expect(annotations == ["user": "42", "build": "release-7", "region": "eu-west-1", "request_id": "x",
                                "session_token": "<redacted>"])
        #expect(!String(decoding: report.data, as: UTF8.self).contains("s3cr3t"), "the redacted value is in the report")
        let crumbs = Self.breadcrumbs(report)
        #expect(crumbs.map(\.message) == (12...19).map { "step \($0)" })
        #expect(crumbs.map(\.level) == Array(repeating: "info", count: 7) + ["error"])
        // Each has the time it was recorded: today's, within the minute before the crash.
        let captureTime = try #require(report.json["captureTime"] as? String)
        for crumb in report.json["breadcrumbs"] as? [[String: Any]] ?? [] {
            let time = try #require(crumb["time"] as? String, "a breadcrumb without a time")
            #expect(time <= captureTime && String(time.prefix(10)) == String(captureTime.prefix(10)), "\(time) vs \(captureTime)")
        }
        let annotationErrors = (report.json["softErrors"] as? [[String: Any]] ?? []).filter { $0["stage"] as? String == "annotations" }
        #expect(annotationErrors.isEmpty, "\(annotationErrors)")
    }

    @Test("the operator's annotations alone are recorded for a program that declares no table, and a custom deny-list replaces the default one")
    func operatorOnly() throws {
        let (_, reports, _) = try runCapturing(Paths.fixture("null_deref"),
                                               options: ["--annotate", "cluster=blue", "--annotate", "api_token=t",
                                                         "--annotate", "db_password=p", "--annotation-deny", "password,CLUSTER"])
        let report = try #require(reports.first)
        #expect(report.json["annotations"] as? [String: String] == ["cluster": "<redacted>", "api_token": "t", "db_password": "<redacted>"])
        #expect(report.json["breadcrumbs"] is NSNull, "a program without a ring has no breadcrumbs")
    }

    @Test("the settings file's annotate pairs are recorded, --annotate winning a key both give; its annotation-deny replaces the default words")
    func settingsFile() throws {
        let directory = try TemporaryDirectory("cw-annotate-settings")
        defer { directory.remove() }
        let path = "\(directory.path)/crashwatch.conf"
        try Data("annotate = region=us-east-1, environment=prod\nannotation-deny = environ\n".utf8).write(to: URL(fileURLWithPath: path))
        let (result, reports, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--config", path, "--annotate", "region=eu-west-1",
                                                                                          "--annotate", "api_token=t"])
        #expect(!result.stderr.contains("settings left out"), "\(result.stderr)")
        let report = try #require(reports.first)
        #expect(report.json["annotations"] as? [String: String] == ["region": "eu-west-1", "environment": "<redacted>", "api_token": "t"])
    }

    @Test("a malformed --annotate is a usage error naming it", arguments: ["novalue", "=x", "has space=1", "k=\(String(repeating: "v", count: 1025))"])
    func badAnnotate(_ text: String) throws {
        let result = try run(Paths.crashwatch, ["run", "--annotate", text, "--", "/bin/true"])
        #expect(result.termination == .exited(64), "\(result.stderr)")
        #expect(result.stderr.contains("annotat"), "\(result.stderr)")
    }
}
