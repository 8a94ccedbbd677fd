// ReportDetailsTests.swift — details of a report that real programs showed wrong (issue 29, point 4), each run on a
// real fixture under `crashwatch run`: mapped files that are no ELF image are no soft errors.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite(.serialized) struct ReportDetailsTests {
    /// The report of one supervised run of fixture `name` with its header's arguments.
    private func report(_ name: String, options: [String] = []) throws -> (RunResult, WrittenReport) {
        let fixture = Fixture(name)
        let executable = Paths.fixture(name)
        try #require(FileManager.default.isExecutableFile(atPath: executable), "\(executable) is not built: run make fixtures")
        let (result, reports, _) = try runCapturing(executable, fixture.arguments, options: options, environment: fixture.environment)
        return (result, try #require(reports.first, "no report; stderr: \(result.stderr.suffix(2000))"))
    }

    @Test("mapped files that are no ELF image (locale files, the gconv cache, a data file) add no soft error and count in no captureErrors")
    func nonELFMappings() throws {
        let (_, report) = try report("mapped_data")
        let errors = report.json["softErrors"] as? [[String: Any]] ?? []
        let mapped = Set((report.json["images"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String })
        #expect(!errors.contains { ($0["message"] as? String)?.contains("build-id") == true }, "\(errors)")
        #expect(!mapped.contains { $0.hasPrefix("/tmp/crashwatch-mapped-data-") }, "a data file listed as an image: \(mapped)")
        let diagnostics = report.json["diagnostics"] as? [String: Any] ?? [:]
        #expect(diagnostics["captureErrors"] as? Int == errors.count, "\(diagnostics)")
    }
}
