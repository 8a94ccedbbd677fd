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

extension ReportDetailsTests {
    @Test("a handled SIGSEGV whose handler returned (siglongjmp), then a default-action abort: no originalFault, no activeFaults")
    func returnedHandlerIsNoOriginalFault() throws {
        let (result, report) = try report("recover_then_abort")
        #expect(result.termination == .signaled(SIGABRT), "\(result.termination)")
        #expect(report.signal["name"] as? String == "SIGABRT")
        #expect(report.signal["originalFault"] == nil || report.signal["originalFault"] is NSNull, "\(report.signal["originalFault"] ?? "")")
        #expect((report.signal["activeFaults"] as? [Any] ?? []).isEmpty, "\(report.signal["activeFaults"] ?? "")")
        #expect(report.functions(of: try #require(report.crashedThreads.first)).contains("abort_later"))
    }
}

extension ReportDetailsTests {
    @Test("a thread-group leader that ended with pthread_exit is listed, first, as exited: no registers, no frames, no soft error")
    func exitedLeaderListed() throws {
        let (_, report) = try report("main_exits_first")
        let pid = try #require((report.json["process"] as? [String: Any])?["pid"] as? Int)
        let leader = try #require(report.threads.first { $0["tid"] as? Int == pid }, "the leader \(pid) is not listed: \(report.threads.map { $0["tid"] ?? "?" })")
        #expect((leader["unwindStopReason"] as? String)?.hasPrefix("exited:") == true, "\(leader["unwindStopReason"] ?? "none")")
        #expect(report.frames(of: leader).isEmpty && (leader["registers"] as? [Any] ?? []).isEmpty)
        #expect(leader["crashed"] as? Bool == false)
        let errors = report.json["softErrors"] as? [[String: Any]] ?? []
        #expect(!errors.contains { $0["tid"] as? Int == pid }, "\(errors)")
    }
}

extension ReportDetailsTests {
    @Test("an executable started through a symlink is named as started, the resolved file beside it; images and in-app go by the file")
    func executableAsStarted() throws {
        let directory = try TemporaryDirectory("cw-exe-link")
        defer { directory.remove() }
        let link = "\(directory.path)/started-as"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Paths.fixture("null_deref"))
        let (result, reports, _) = try runCapturing(link)
        let report = try #require(reports.first, "no report; stderr: \(result.stderr.suffix(2000))")
        let process = report.json["process"] as? [String: Any] ?? [:]
        #expect(process["executable"] as? String == link, "\(process)")
        #expect(process["executableResolved"] as? String == Paths.fixture("null_deref"), "\(process)")
        let main = try #require(report.images.first { $0["isMainExecutable"] as? Bool == true }, "no main executable image")
        #expect(main["path"] as? String == Paths.fixture("null_deref"))
        #expect(main["inApp"] as? Bool == true)
    }
}
