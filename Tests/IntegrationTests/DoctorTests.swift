// DoctorTests.swift — `crashwatch doctor` on a healthy setup and on broken ones: a spool it cannot write, ptrace
// refused by a seccomp filter (as systemd's SystemCallFilter= does), a settings file with a mistake, a
// shipper whose endpoint is down; each with the right ✓/✗, the fix, and the exit status; `--json` and
// `--user` too.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct DoctorTests {
    /// The line of check `name` in doctor's text output, and the `fix:` line after it when there is one.
    private func line(_ name: String, in output: String) -> (check: String, fix: String?)? {
        let lines = output.split(separator: "\n").map(String.init)
        guard let index = lines.firstIndex(where: { $0.dropFirst(2).hasPrefix(name + " ") }) else { return nil }
        let next = index + 1 < lines.count ? lines[index + 1] : ""
        return (lines[index], next.trimmingCharacters(in: .whitespaces).hasPrefix("fix: ") ? next : nil)
    }

    @Test("a healthy setup: every check ✓ (or not configured), exit 0")
    func healthy() throws {
        let spool = try TemporaryDirectory("cw-doctor")
        let result = try run(Paths.crashwatch, ["doctor", "--spool", spool.path])
        #expect(result.termination == .exited(0), "\(result.stdout)\(result.stderr)")
        #expect(line("spool", in: result.stdout)?.check.hasPrefix("✓ spool") == true && result.stdout.contains("\(spool.path) takes reports"))
        #expect(line("ptrace", in: result.stdout)?.check.hasPrefix("✓ ptrace") == true, "\(result.stdout)")
        #expect(line("settings", in: result.stdout)?.check.hasPrefix("✓ settings") == true)
        #expect(line("shipping", in: result.stdout)?.check.hasPrefix("- shipping") == true)
        #expect(!result.stdout.contains("✗"))
    }

    @Test("a spool that cannot be created: ✗ with the fix, exit 1")
    func brokenSpool() throws {
        let directory = try TemporaryDirectory("cw-doctor-file")
        let file = "\(directory.path)/not-a-directory"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let result = try run(Paths.crashwatch, ["doctor", "--spool", "\(file)/reports"])
        #expect(result.termination == .exited(1))
        let spool = try #require(line("spool", in: result.stdout), "\(result.stdout)")
        #expect(spool.check.hasPrefix("✗ spool") && spool.check.contains("Not a directory"), "\(result.stdout)")
        #expect(spool.fix?.contains("ReadWritePaths=\(file)/reports") == true, "\(result.stdout)")
    }

    @Test("ptrace refused by a seccomp filter: ✗ ptrace naming SystemCallFilter=, exit 1")
    func ptraceBlocked() throws {
        let spool = try TemporaryDirectory("cw-doctor-seccomp")
        let result = try run(Paths.fixture("seccomp_deny"), ["ptrace", Paths.crashwatch, "doctor", "--spool", spool.path])
        #expect(result.termination == .exited(1), "\(result.stdout)\(result.stderr)")
        let ptrace = try #require(line("ptrace", in: result.stdout), "\(result.stdout)")
        #expect(ptrace.check.hasPrefix("✗ ptrace") && ptrace.fix?.contains("SystemCallFilter=ptrace") == true, "\(result.stdout)")
        #expect(line("spool", in: result.stdout)?.check.hasPrefix("✓ spool") == true)
    }

    @Test("a settings file with a mistake: ✗ settings naming the line, exit 1")
    func settingsMistake() throws {
        let directory = try TemporaryDirectory("cw-doctor-conf")
        let config = "\(directory.path)/crashwatch.conf"
        try "max-reports = 5\nmax-repots = 3\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try run(Paths.crashwatch, ["doctor", "--config", config, "--spool", directory.path])
        #expect(result.termination == .exited(1))
        let settings = try #require(line("settings", in: result.stdout), "\(result.stdout)")
        #expect(settings.check.hasPrefix("✗ settings") && settings.check.contains("crashwatch.conf:2: unknown setting"), "\(result.stdout)")
        #expect(!settings.check.contains("crashwatch.conf:1:"))
    }

    @Test("a shipper whose endpoint is down: ✗ shipping with the hint, exit 1")
    func endpointDown() throws {
        let directory = try TemporaryDirectory("cw-doctor-ship")
        let config = "\(directory.path)/crashwatch.conf"
        // Port 9 (discard) has no listener here: the connection is refused.
        try "endpoint = http://127.0.0.1:9\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try run(Paths.crashwatch, ["doctor", "--config", config, "--spool", directory.path])
        #expect(result.termination == .exited(1))
        #expect(line("settings", in: result.stdout)?.check.hasPrefix("✓ settings") == true, "\(result.stdout)")
        let shipping = try #require(line("shipping", in: result.stdout), "\(result.stdout)")
        #expect(shipping.check.hasPrefix("✗ shipping") && shipping.check.contains("127.0.0.1:9"), "\(result.stdout)")
        #expect(shipping.fix?.contains("nothing listens there") == true, "\(result.stdout)")
    }

    @Test("--json: one object per check with name, outcome, detail and fix")
    func json() throws {
        let result = try run(Paths.crashwatch, ["doctor", "--spool", "/proc/nope", "--json"])
        #expect(result.termination == .exited(1))
        let checks = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(checks.map { $0["name"] as? String } == ["settings", "spool", "ptrace", "journal", "core_pattern", "debug info", "shipping"])
        let spool = try #require(checks.first { $0["name"] as? String == "spool" })
        #expect(spool["outcome"] as? String == "failed" && (spool["fix"] as? String)?.isEmpty == false)
    }

    @Test("--user USER: the checks run as that user (its own default spool, its ids)")
    func asUser() throws {
        let result = try run(Paths.crashwatch, ["doctor", "--user", "nobody"])
        #expect(result.stdout.hasPrefix("crashwatch \(try #require(result.stdout.split(separator: " ").dropFirst().first)) doctor, as uid 65534"),
                "\(result.stdout)\(result.stderr)")
        // nobody's home is /nonexistent: its default spool cannot be made, which doctor says.
        #expect(line("spool", in: result.stdout)?.check.contains("/nonexistent/") == true, "\(result.stdout)")
        #expect(result.termination == .exited(1))
    }
}
