// SymbolTests.swift — where symbols come from: glibc's separate debug info, a stripped binary's debug
// file under --debug-dir, offline re-symbolication matched by build-id only, and debuginfod.
import CrashwatchTestSupport
import Foundation
import Testing

/// The frames of a report reduced to what does not depend on where the process was loaded.
private func comparable(_ report: WrittenReport) -> [[String]] {
    report.threads.map { thread in
        report.frames(of: thread).map { frame in
            ["imageOffset", "function", "symbol", "symbolOffset", "symbolSource", "file", "line", "column", "inlined", "how"]
                .map { key in frame[key].map { "\($0)" } ?? "nil" }.joined(separator: "|")
        }.map { [$0] }.flatMap { $0 }
    }
}

@Suite struct SymbolTests {
    @Test("glibc's frames get names and lines from its build-id debug file (libc6-dbg)")
    func glibcDebugInfo() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("null_deref"))
        let report = try #require(reports.first, "\(result.stderr)")
        let crashed = try #require(report.crashedThreads.first)
        let libc = try #require(report.frames(of: crashed).first { (report.image(of: $0)?["name"] as? String) == "libc.so.6" })
        #expect(libc["function"] as? String == "__libc_start_call_main")
        #expect(libc["symbolSource"] as? String == "debuginfo")
        #expect((libc["file"] as? String)?.hasSuffix("libc_start_call_main.h") == true && libc["line"] as? Int != nil, "\(libc)")
    }

    @Test("a stripped binary has no names for its own frames unless its debug file is found")
    func strippedWithoutDebugFile() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("stripped_debuglink"))
        let report = try #require(reports.first, "\(result.stderr)")
        let crashed = try #require(report.crashedThreads.first)
        let own = report.frames(of: crashed).filter { (report.image(of: $0)?["name"] as? String) == "stripped_debuglink" }
        #expect(!own.isEmpty && own.allSatisfy { $0["function"] is NSNull && $0["line"] is NSNull }, "\(own)")
    }

    @Test("a capture without symbols, symbolicated offline, equals a capture with debug info frame for frame")
    func offlineEqualsLive() throws {
        let debug = "\(Paths.fixtures)/debug"
        let (_, full, _) = try runCapturing(Paths.fixture("stripped_debuglink"), options: ["--debug-dir", debug])
        let (_, bare, spool) = try runCapturing(Paths.fixture("stripped_debuglink"), options: ["--symbolicate", "none"])
        let captured = try #require(full.first), unsymbolicated = try #require(bare.first)
        #expect(unsymbolicated.threads.allSatisfy { thread in unsymbolicated.frames(of: thread).allSatisfy { $0["function"] is NSNull } })

        let output = "\(spool.path)/symbolicated.json"
        let result = try run(Paths.crashwatch, ["symbolicate", "--debug-dir", debug, unsymbolicated.path, "-o", output])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(try SchemaValidator().validate(reportJSON: data).isEmpty)
        let symbolicated = WrittenReport(path: output, data: data,
                                         json: try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
        #expect(comparable(symbolicated) == comparable(captured))
        #expect(symbolicated.json["id"] as? String == unsymbolicated.json["id"] as? String, "the report keeps its identity")
    }

    @Test("a debug file of another build is refused, even under the right build-id path")
    func wrongBuildRefused() throws {
        let (_, bare, spool) = try runCapturing(Paths.fixture("stripped_debuglink"), options: ["--symbolicate", "none"])
        defer { withExtendedLifetime(spool) {} }
        let report = try #require(bare.first)
        let result = try run(Paths.crashwatch, ["symbolicate", "--debug-dir", "\(Paths.fixtures)/debug-wrong", report.path])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let symbolicated = WrittenReport(path: "-", data: Data(result.stdout.utf8), json: json)
        let crashed = try #require(symbolicated.crashedThreads.first)
        let own = symbolicated.frames(of: crashed).filter { (symbolicated.image(of: $0)?["name"] as? String) == "stripped_debuglink" }
        #expect(!own.isEmpty && own.allSatisfy { $0["function"] is NSNull }, "names came from the wrong build: \(own)")
        let errors = json["softErrors"] as? [[String: Any]] ?? []
        #expect(errors.contains { ($0["message"] as? String)?.contains("refused") == true && ($0["message"] as? String)?.contains("debug-wrong") == true },
                "\(errors)")
    }

    @Test("symbolicate refuses what is not a report, and a missing file, with their exit statuses")
    func symbolicateErrors() throws {
        let directory = try TemporaryDirectory("cw-symbolicate")
        let notReport = "\(directory.path)/x.json"
        try Data(#"{"format": "something else", "schemaVersion": 1}"#.utf8).write(to: URL(fileURLWithPath: notReport))
        let wrong = try run(Paths.crashwatch, ["symbolicate", notReport])
        #expect(wrong.termination == .exited(65) && wrong.stderr.contains("not a crash report"), "\(wrong.stderr)")
        let missing = try run(Paths.crashwatch, ["symbolicate", "\(directory.path)/none.json"])
        #expect(missing.termination == .exited(66) && missing.stderr.contains("none.json"), "\(missing.stderr)")
        // A relative --debug-dir is taken from the working directory; one with a colon is refused.
        let usage = try run(Paths.crashwatch, ["symbolicate", "--debug-dir", "a:b", notReport])
        #expect(usage.termination == .exited(64))
    }

    @Test("debuginfod: only a server given with --debuginfod is asked, and it gives a stripped binary its lines")
    func debuginfod() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/debuginfod"), "debuginfod is not installed; skip")
        let state = try TemporaryDirectory("cw-debuginfod")
        let port = Int.random(in: 20_000...40_000)
        let server = Process()
        // Through clean_exec, so the server does not inherit the test runner's blocked SIGTERM.
        server.executableURL = URL(fileURLWithPath: Paths.fixture("clean_exec"))
        // debuginfod 0.188 cannot be told to listen on loopback only; the client below talks to 127.0.0.1.
        server.arguments = ["/usr/bin/debuginfod", "-F", "\(Paths.fixtures)/debug", "-p", "\(port)", "-d", "\(state.path)/db.sqlite", "-L"]
        server.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        server.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }

        let buildID = try #require(try Readelf.buildID(of: Paths.fixture("stripped_debuglink")))
        let environment = ["DEBUGINFOD_URLS": "http://127.0.0.1:\(port)", "DEBUGINFOD_CACHE_PATH": "\(state.path)/cache",
                           "DEBUGINFOD_TIMEOUT": "5"]
        // Ready once it serves the debug file (scanning takes a moment): poll, bounded.
        let deadline = Date().addingTimeInterval(30)
        var served = false
        while Date() < deadline && !served {
            // The client caches a miss (for ten minutes): forget it before asking again.
            try? FileManager.default.removeItem(atPath: "\(state.path)/cache")
            let probe = try run("/usr/bin/debuginfod-find", ["debuginfo", buildID], environment: environment, timeout: 10)
            served = probe.termination == .exited(0)
            if !served { usleep(200_000) }
        }
        try #require(served, "the local debuginfod never served build-id \(buildID)")
        try? FileManager.default.removeItem(atPath: "\(state.path)/cache")

        // DEBUGINFOD_URLS in the environment (which the crashed program shares) picks no server.
        let (unasked, unaskedReports, unaskedSpool) = try runCapturing(Paths.fixture("stripped_debuglink"), environment: environment)
        defer { withExtendedLifetime(unaskedSpool) {} }
        let unaskedReport = try #require(unaskedReports.first, "\(unasked.stderr)")
        let unaskedCrashed = try #require(unaskedReport.crashedThreads.first)
        let unaskedTop = try #require(unaskedReport.frames(of: unaskedCrashed).first)
        #expect(unaskedTop["line"] == nil || unaskedTop["line"] is NSNull, "\(unaskedTop)")

        let (result, reports, _) = try runCapturing(Paths.fixture("stripped_debuglink"), options: ["--debuginfod", "http://127.0.0.1:\(port)"],
                                                    environment: environment)
        let report = try #require(reports.first, "\(result.stderr)")
        let crashed = try #require(report.crashedThreads.first)
        let top = try #require(report.frames(of: crashed).first)
        #expect(top["function"] as? String == "crash_here", "\(top)")
        #expect((top["file"] as? String)?.hasSuffix("stripped_debuglink.c") == true && top["line"] as? Int == 48, "\(top)")

        // symbolicate keeps the same rule: $DEBUGINFOD_URLS alone asks no server; --debuginfod does.
        try? FileManager.default.removeItem(atPath: "\(state.path)/cache")
        let fromEnvironment = try run(Paths.crashwatch, ["symbolicate", unaskedReport.path], environment: environment)
        #expect(fromEnvironment.termination == .exited(0), "\(fromEnvironment.stderr)")
        let unchanged = try #require(try JSONSerialization.jsonObject(with: Data(fromEnvironment.stdout.utf8)) as? [String: Any])
        let unchangedReport = WrittenReport(path: "-", data: Data(fromEnvironment.stdout.utf8), json: unchanged)
        let unchangedThread = try #require(unchangedReport.crashedThreads.first)
        let unchangedTop = try #require(unchangedReport.frames(of: unchangedThread).first)
        #expect(unchangedTop["line"] == nil || unchangedTop["line"] is NSNull, "\(unchangedTop)")
        let asked = try run(Paths.crashwatch, ["symbolicate", "--debuginfod", "http://127.0.0.1:\(port)", unaskedReport.path], environment: environment)
        let askedJSON = try #require(try JSONSerialization.jsonObject(with: Data(asked.stdout.utf8)) as? [String: Any], "\(asked.stderr)")
        let askedReport = WrittenReport(path: "-", data: Data(asked.stdout.utf8), json: askedJSON)
        let askedThread = try #require(askedReport.crashedThreads.first)
        let askedTop = try #require(askedReport.frames(of: askedThread).first)
        #expect(askedTop["function"] as? String == "crash_here" && askedTop["line"] as? Int == 48, "\(askedTop)")
    }

    @Test("Swift programs keep the Swift runtime's own backtracer and still give one report with the original fault")
    func swiftBacktracerOn() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("swift_trap"), environment: ["SWIFT_BACKTRACE": "enable=yes"])
        #expect(result.termination == .signaled(4))
        #expect(reports.count == 1, "\(result.stderr)")
        let report = try #require(reports.first)
        let original = report.signal["originalFault"] as? [String: Any]
        #expect(original?["name"] as? String == "SIGILL", "\(report.signal)")
    }
}
