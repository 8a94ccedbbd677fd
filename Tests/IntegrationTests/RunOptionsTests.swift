// RunOptionsTests.swift — `crashwatch run`'s report options end to end: retention, redaction, the
// environment allow-list, app roots and identity, the capture deadline, and spools that cannot be written.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct RunOptionsTests {
    /// The supervisor lives in every supervised service: it maps FoundationEssentials only (the full
    /// Foundation brings ICU and about 6 MB of RSS) and never libcurl (loaded by `ship` alone).
    @Test("the supervisor maps neither the full Foundation nor libcurl")
    func supervisorLibraries() throws {
        let result = try run(Paths.crashwatch, ["run", "--", "/bin/sh", "-c", "cat /proc/$PPID/maps"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.contains("libswiftCore.so") && result.stdout.contains("libFoundationEssentials.so"))
        for library in ["libFoundation.so", "lib_FoundationICU.so", "libFoundationInternationalization.so", "libcurl"] {
            #expect(!result.stdout.contains(library), "crashwatch run maps \(library)")
        }
    }

    /// A process has one tracer: a program that traces its own children (a debugger, strace, a ptrace
    /// sandbox) cannot while crashwatch follows forks, and can with --no-follow-forks.
    @Test("a program that traces its children: refused while forks are followed, works with --no-follow-forks")
    func programThatTraces() throws {
        let gdb = ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "--args", "/bin/true"]
        let followed = try run(Paths.crashwatch, ["run", "--", "/usr/bin/gdb"] + gdb, timeout: 60)
        #expect(!followed.stdout.contains("exited normally"), "gdb traced its child under a supervisor following forks: \(followed.stdout)")
        let alone = try run(Paths.crashwatch, ["run", "--no-follow-forks", "--", "/usr/bin/gdb"] + gdb, timeout: 60)
        #expect(alone.termination == .exited(0), "\(alone.stderr)")
        #expect(alone.stdout.contains("exited normally"), "stdout: \(alone.stdout) stderr: \(alone.stderr)")
    }

    @Test("--max-reports keeps the newest N reports")
    func retentionByCount() throws {
        let spool = try TemporaryDirectory("cw-retention")
        var written: [String] = []
        for _ in 0..<4 {
            let (result, _, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--max-reports", "2"], spool: spool)
            let line = try #require(result.crashwatchLines.first { $0.hasPrefix("crashwatch: report written to ") })
            written.append(String(line.dropFirst("crashwatch: report written to ".count)))
        }
        // The reports (the spool also holds .groups, the group index).
        let remaining = try FileManager.default.contentsOfDirectory(atPath: spool.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(remaining == written.suffix(2).map { ($0 as NSString).lastPathComponent }.sorted())
    }

    @Test("--redact-args, --env-allow and the app identity options shape the process record")
    func processRecordOptions() throws {
        let spool = try TemporaryDirectory("cw-options")
        let result = try run("/usr/bin/env", [
            "CW_SECRET=hunter2", "CW_VISIBLE=shown", "CRASHWATCH_APP_VERSION=9.9",
            Paths.crashwatch, "run", "--spool", spool.path, "--redact-args", "--env-allow", "CW_VISIBLE",
            "--env-allow", "CW_ABSENT", "--app-name", "demo", "--app-release", "r1", "--",
            Paths.fixture("exec_then_crash"), "--password=x",
        ])
        #expect(result.termination == .signaled(11))
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: spool.path).first { $0.hasSuffix(".json") })
        let text = try String(contentsOfFile: "\(spool.path)/\(name)", encoding: .utf8)
        #expect(!text.contains("hunter2") && !text.contains("--password"))
        #expect(try SchemaValidator().validate(reportJSON: Data(text.utf8)).isEmpty)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let process = try #require(json["process"] as? [String: Any])
        #expect(process["redacted"] as? Bool == true)
        let commandLine = process["commandLine"] as? [String] ?? []
        #expect(commandLine.count >= 2 && commandLine.dropFirst().allSatisfy { $0 == "<redacted>" }, "\(commandLine)")
        #expect(process["environment"] as? [String: String] == ["CW_VISIBLE": "shown"])
        let app = process["app"] as? [String: Any]
        #expect(app?["name"] as? String == "demo")
        #expect(app?["version"] as? String == "9.9")
        #expect(app?["release"] as? String == "r1")
    }

    @Test("--app-root decides which images are in-app")
    func appRoot() throws {
        let (_, reports, _) = try runCapturing(Paths.fixture("dlopen_crash"), options: ["--app-root", "/opt/elsewhere"])
        let report = try #require(reports.first)
        #expect(report.images.allSatisfy { $0["inApp"] as? Bool == false }, "\(report.images)")
        let (_, defaults, _) = try runCapturing(Paths.fixture("dlopen_crash"))
        let plugin = try #require(defaults.first?.images.first { $0["name"] as? String == "libappplugin.so" })
        #expect(plugin["inApp"] as? Bool == true)
    }

    @Test("past --capture-timeout the report is still written, with the shortfall recorded")
    func captureDeadline() throws {
        let (result, reports, _) = try runCapturing(Paths.fixture("threads1000"), options: ["--capture-timeout", "0.000001"])
        #expect(result.termination == .signaled(11))
        let report = try #require(reports.first, "stderr: \(result.stderr)")
        let diagnostics = try #require(report.json["diagnostics"] as? [String: Any])
        #expect(diagnostics["deadlineExceeded"] as? Bool == true)
        let errors = report.json["softErrors"] as? [[String: Any]] ?? []
        #expect(errors.contains { $0["stage"] as? String == "deadline" || $0["stage"] as? String == "stop" })
        #expect(diagnostics["captureErrors"] as? Int == errors.count)
    }

    @Test("a spool that cannot be created is named before the program starts; the report goes to the runtime spool, and the exit status stays exact")
    func unwritableSpool() throws {
        let directory = try TemporaryDirectory("cw-badspool")
        let file = "\(directory.path)/not-a-directory"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let marker = "\(directory.path)/started"
        // The shell writes the marker only if the warning came first: crashwatch said it before the program ran.
        let script = "touch \(marker); exec \(Paths.fixture("null_deref"))"
        let result = try run(Paths.crashwatch, ["run", "--spool", "\(file)/reports", "--", "/bin/sh", "-c", script])
        #expect(result.termination == .signaled(11))
        #expect(FileManager.default.fileExists(atPath: marker))
        let lines = result.crashwatchLines.filter { !$0.contains(" crashed: ") }
        let fallback = "/run/crashwatch/reports"
        #expect(lines.first?.contains("\(file)/reports") == true && lines.first?.contains("Not a directory") == true
                && lines.first?.contains("crash reports go to \(fallback) instead") == true, "\(result.stderr)")
        // The report is in the fallback spool, under the crashed pid; it is removed again.
        let pid = try #require(result.crashwatchLines.first { $0.contains(" crashed: ") }
            .flatMap { $0.split(separator: "[").dropFirst().first?.split(separator: "]").first }.map(String.init))
        let written = try FileManager.default.contentsOfDirectory(atPath: fallback).filter { $0.contains("-\(pid)-") && $0.hasSuffix(".json") }
        #expect(written.count == 1, "\(result.stderr)")
        for name in written { try? FileManager.default.removeItem(atPath: "\(fallback)/\(name)") }
    }

    @Test("a spool file system that fills up after the start check leaves no temporary file behind")
    func fullSpool() throws {
        let directory = try TemporaryDirectory("cw-fullspool")
        // Room enough for the start check (1 MiB free), not for 1,000 threads' report.
        let mount = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1200k", "tmpfs", directory.path])
        try #require(mount.termination == .exited(0), "cannot mount a tmpfs here (\(mount.stderr)); skipped")
        defer { _ = try? run("/bin/umount", [directory.path]) }
        let result = try run(Paths.crashwatch, ["run", "--spool", directory.path, "--", Paths.fixture("threads1000")])
        #expect(result.termination == .signaled(11))
        let lines = result.crashwatchLines.filter { !$0.contains(" crashed: ") }
        #expect(lines.count == 1 && lines[0].contains(directory.path) && lines[0].contains("No space left on device"),
                "\(result.stderr)")
        // No temporary file; the minimal report written while the process was held (the crashed thread's registers
        // only: it fits) stays, whole, as the crash's report.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.hasPrefix(".tmp-") }, "\(names)")
        for name in names where name.hasSuffix(".json") {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(directory.path)/\(name)"))
            #expect(try SchemaValidator().validate(reportJSON: data).isEmpty, "\(name)")
        }
    }

    @Test("a spool file system without room for a report is named before the program starts")
    func noRoomAtStart() throws {
        let directory = try TemporaryDirectory("cw-noroom")
        let mount = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path])
        try #require(mount.termination == .exited(0), "cannot mount a tmpfs here (\(mount.stderr)); skipped")
        defer { _ = try? run("/bin/umount", [directory.path]) }
        let result = try run(Paths.crashwatch, ["run", "--spool", directory.path, "--", "/bin/true"])
        #expect(result.termination == .exited(0))
        #expect(result.crashwatchLines.count == 1 && result.crashwatchLines[0].contains("less than a report needs"), "\(result.stderr)")
    }

    @Test("the app killed while it is being inspected: the supervisor carries on, writes what it has, exits as the app did")
    func appKilledDuringCapture() throws {
        let spool = try TemporaryDirectory("cw-appkilled")
        for delay: UInt32 in [0, 2_000, 10_000] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Paths.fixture("clean_exec"))
            process.arguments = [Paths.crashwatch, "run", "--spool", spool.path, "--", Paths.fixture("threads1000")]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            var seen = ""
            while !seen.contains(" crashed: ") {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            let line = try #require(CrashLine(String(seen.split(separator: "\n").first { $0.contains(" crashed: ") } ?? "")))
            usleep(delay)
            kill(line.pid, SIGKILL)
            let rest = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            // A 1,000-thread capture takes far longer than these delays, so the SIGKILL lands during it and
            // is how the app dies; should a very fast machine finish first, the app dies of its SIGSEGV.
            #expect(process.terminationReason == .uncaughtSignal && [SIGKILL, SIGSEGV].contains(process.terminationStatus),
                    "crashwatch should die as its app did: \(process.terminationReason) \(process.terminationStatus)")
            #expect(rest.contains("crashwatch: report written to "), "\(seen)\(rest)")
        }
        let reports = try FileManager.default.contentsOfDirectory(atPath: spool.path).filter { $0.hasSuffix(".json") }
        #expect(reports.count == 3)
        for name in reports {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool.path)/\(name)"))
            #expect(try SchemaValidator().validate(reportJSON: data).isEmpty, "\(name)")
        }
    }

    @Test("killing the supervisor while it writes a report (its temporary file holds bytes) never leaves a partial report")
    func killDuringWrite() throws {
        // Each round waits, bounded, until a temporary report file in the spool holds bytes and kills crashwatch
        // then: the kill provably lands once a write has begun. A round whose write it never sees proves
        // nothing and does not count; three that do are required.
        var caught = 0, interrupted = 0, rounds = 0
        while caught < 3 && rounds < 30 {
            rounds += 1
            let spool = try TemporaryDirectory("cw-killspool")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Paths.crashwatch)
            process.arguments = ["run", "--spool", spool.path, "--", Paths.fixture("threads64")]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            // The crash line: the capture has begun, and the minimal report's write comes next.
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains(" crashed: ") {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen.append(chunk)
            }
            let deadline = Date().addingTimeInterval(10)
            var writing = false
            while process.isRunning && Date() < deadline {
                if Self.temporaryReportHoldsBytes(in: spool.path) { writing = true; break }
                usleep(100)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if writing { caught += 1 }
            let names = try FileManager.default.contentsOfDirectory(atPath: spool.path)
            if names.contains(where: { $0.hasPrefix(".tmp-") }) { interrupted += 1 }
            for name in names where name.hasSuffix(".json") {
                let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool.path)/\(name)"))
                #expect((try? JSONSerialization.jsonObject(with: data)) != nil, "\(name) is partial (round \(rounds))")
            }
        }
        #expect(caught >= 3, "in \(rounds) rounds the kill came during a write \(caught) times (\(interrupted) left a temporary file)")
    }

    /// Whether the spool holds a temporary report file (`.tmp-…`) with at least one byte written.
    static func temporaryReportHoldsBytes(in spool: String) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: spool) else { return false }
        return names.contains { name in
            guard name.hasPrefix(".tmp-"),
                  let size = (try? FileManager.default.attributesOfItem(atPath: "\(spool)/\(name)"))?[.size] as? Int
            else { return false }
            return size > 0
        }
    }
}
