// WorkerBoundaryTests.swift — the processing worker as a security boundary (README "Security model"), tried
// as the attacks that found it open: an unprivileged user (nobody) beside a root crashwatch reads the
// worker's capture of a non-dumpable program of theirs (an ssh-agent) or of a setuid-root helper they started,
// signals it, traces it, or rewrites its report. Each run keeps the worker alive for seconds (the stripped
// program's debug file is asked of a debuginfod server that never answers) while `worker_prober` tries.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite(.serialized) struct WorkerBoundaryTests {
    static let attacker = "nobody"

    /// What `worker_prober` got through: how many workers it saw, and how many let each attempt through.
    struct Probe {
        var counts: [String: Int] = [:]
        init(_ line: String) {
            for field in line.split(separator: " ") {
                let parts = field.split(separator: "=")
                if parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespacesAndNewlines)) {
                    counts[String(parts[0])] = value
                }
            }
        }
        subscript(_ key: String) -> Int { counts[key] ?? -1 }
    }

    /// A directory everyone may traverse, holding copies of the fixtures the attack uses.
    private func stage() throws -> TemporaryDirectory {
        try #require(getuid() == 0, "needs root to run crashwatch as root and the attacker as nobody; skip")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "setpriv is not installed; skip")
        let directory = try TemporaryDirectory("cw-worker-boundary")
        chmod(directory.path, 0o755)
        for name in ["secret_crash", "worker_prober"] {
            try FileManager.default.copyItem(atPath: Paths.fixture(name), toPath: "\(directory.path)/\(name)")
        }
        return directory
    }

    /// Runs `command` (as the attacker) under a root `crashwatch run` while the attacker's prober looks for
    /// workers holding `secret`; returns crashwatch's run, the report's path and JSON, and the probe.
    private func attack(_ command: [String], secret: String, in directory: TemporaryDirectory, spool: TemporaryDirectory)
        throws -> (result: RunResult, path: String, report: [String: Any], probe: Probe)
    {
        let server = try SilentServer()
        defer { server.stop() }
        let probeOutput = "\(directory.path)/probe.out"
        let prober = Process()
        prober.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        prober.arguments = ["--reuid=\(Self.attacker)", "--regid=nogroup", "--clear-groups",
                            "\(directory.path)/worker_prober", "6", secret, spool.path]
        _ = FileManager.default.createFile(atPath: probeOutput, contents: nil)
        prober.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: probeOutput))
        try prober.run()
        usleep(200_000)
        let result = try run(Paths.crashwatch, ["run", "--spool", spool.path, "--capture-timeout", "4",
                                                "--debuginfod", "http://127.0.0.1:\(server.port)", "--",
                                                "/usr/bin/setpriv", "--reuid=\(Self.attacker)", "--regid=nogroup", "--clear-groups"] + command,
                             environment: ["DEBUGINFOD_URLS": ""], timeout: 30)
        prober.waitUntilExit()
        let probe = Probe((try? String(contentsOfFile: probeOutput, encoding: .utf8)) ?? "")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: spool.path)) ?? []).filter { $0.hasSuffix(".json") }
        let name = try #require(names.first, "no report: \(result.stderr)")
        let path = "\(spool.path)/\(name)"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let violations = try SchemaValidator().validate(reportJSON: data)
        #expect(violations.isEmpty, "the report violates the schema: \(violations)")
        return (result, path, report, probe)
    }

    /// What every attack must find: a worker it could see and none of it reachable.
    private func expectSealed(_ probe: Probe, secret: String) {
        #expect(probe["workers"] >= 1, "the prober never saw a worker, so it proved nothing: \(probe.counts)")
        #expect(probe["secret"] == 0, "the attacker read the secret out of the worker's capture: \(probe.counts)")
        #expect(probe["fd"] == 0, "the attacker opened the worker's descriptors: \(probe.counts)")
        #expect(probe["mem"] == 0, "the attacker opened the worker's memory: \(probe.counts)")
        #expect(probe["signal"] == 0, "the attacker may signal the worker: \(probe.counts)")
        #expect(probe["ptrace"] == 0, "the attacker traced the worker: \(probe.counts)")
        #expect(probe["write"] == 0, "the attacker opened the worker's report for writing: \(probe.counts)")
    }

    /// The report's file: its mode, and whether the attacker can read it.
    private func expectUnreadableByAttacker(_ path: String, mode wanted: Int) throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == wanted, "mode \(String((attributes[.posixPermissions] as? Int) ?? 0, radix: 8))")
        #expect((attributes[.ownerAccountID] as? Int) == 0)
        let read = try run("/usr/bin/setpriv", ["--reuid=\(Self.attacker)", "--regid=nogroup", "--clear-groups", "/bin/cat", path])
        #expect(read.termination != .exited(0), "the attacker read the report")
    }

    @Test("a non-dumpable program's capture (an ssh-agent's key): its own user can neither read, signal, trace nor rewrite the worker")
    func nonDumpableProgram() throws {
        let directory = try stage()
        let secret = "agent-key-\(UUID().uuidString)"
        let spool = try TemporaryDirectory("cw-worker-boundary-spool")
        let (result, path, report, probe) = try attack(["\(directory.path)/secret_crash", "nondumpable", secret],
                                                       secret: secret, in: directory, spool: spool)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        expectSealed(probe, secret: secret)
        // The kernel keeps such a process's memory from its user; so is the report kept (as a core would be).
        try expectUnreadableByAttacker(path, mode: 0o600)
        let process = try #require(report["process"] as? [String: Any])
        #expect(process["uid"] as? Int == 65534)
        // The worker, killed at the deadline by the silent server, says so: the deadline passed, and the
        // capture took as long as it did.
        let diagnostics = try #require(report["diagnostics"] as? [String: Any])
        let softErrors = (report["softErrors"] as? [[String: Any]]) ?? []
        let killed = softErrors.contains { ($0["message"] as? String)?.contains("before the capture deadline and was killed") == true }
        if killed {
            #expect(diagnostics["deadlineExceeded"] as? Bool == true, "\(diagnostics)")
            #expect(((report["captureDurationMs"] as? Double) ?? 0) >= 3_500, "captureDurationMs \(report["captureDurationMs"] ?? "")")
        }
        let threads = try #require(report["threads"] as? [[String: Any]])
        let crashed = try #require(threads.first { $0["crashed"] as? Bool == true })
        #expect(((crashed["frames"] as? [Any])?.count ?? 0) >= 3, "the worker's frames were not kept: \(crashed["frames"] ?? "")")
    }

    @Test("a setuid-root helper's capture: the user who started it cannot read the root-only file it held, from the worker or the report")
    func setuidHelper() throws {
        let directory = try stage()
        let helper = "\(directory.path)/secret_suid"
        try FileManager.default.copyItem(atPath: "\(directory.path)/secret_crash", toPath: helper)
        try #require(chown(helper, 0, 0) == 0 && chmod(helper, 0o4755) == 0)
        let secret = "root-only-\(UUID().uuidString)"
        let file = "\(directory.path)/root-only"
        try Data(secret.utf8).write(to: URL(fileURLWithPath: file))
        try #require(chmod(file, 0o600) == 0)
        // The attacker cannot read it bare: only the helper, setuid root, can.
        let direct = try run("/usr/bin/setpriv", ["--reuid=\(Self.attacker)", "--regid=nogroup", "--clear-groups", "/bin/cat", file])
        try #require(direct.termination != .exited(0), "the attacker can read the root-only file anyway; the test proves nothing")
        let spool = try TemporaryDirectory("cw-worker-boundary-spool")
        let (result, path, report, probe) = try attack([helper, "read", file], secret: secret, in: directory, spool: spool)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        #expect(result.stdout.contains("ready"), "the helper did not read the file as root: \(result.stderr)")
        expectSealed(probe, secret: secret)
        try expectUnreadableByAttacker(path, mode: 0o600)
        #expect((report["process"] as? [String: Any])?["uid"] as? Int == 65534)
    }

    @Test("as root, the worker is the dedicated user to the kernel's signal and ptrace checks and reads files as the crashed user")
    func workerCredentials() throws {
        let directory = try stage()
        let server = try SilentServer()
        defer { server.stop() }
        let spool = try TemporaryDirectory("cw-worker-boundary-spool")
        // crashwatch in the background; its worker's credentials read from /proc while it waits on the server.
        let supervisor = Process()
        supervisor.executableURL = URL(fileURLWithPath: Paths.crashwatch)
        supervisor.arguments = ["run", "--spool", spool.path, "--capture-timeout", "3", "--debuginfod", "http://127.0.0.1:\(server.port)", "--",
                                "/usr/bin/setpriv", "--reuid=\(Self.attacker)", "--regid=nogroup", "--groups=100",
                                "\(directory.path)/secret_crash", "nondumpable", "x"]
        supervisor.environment = ["PATH": "/usr/bin:/bin", "DEBUGINFOD_URLS": ""]
        supervisor.standardOutput = FileHandle.nullDevice
        supervisor.standardError = FileHandle.nullDevice
        try supervisor.run()
        defer { if supervisor.isRunning { kill(supervisor.processIdentifier, SIGKILL) }; supervisor.waitUntilExit() }
        var status: String?
        let deadline = Date().addingTimeInterval(10)
        while status == nil && Date() < deadline {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
                guard let cmdline = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                      cmdline.starts(with: Data("crashwatch\0__process\0".utf8)),
                      let text = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8),
                      // This crashwatch's worker, not one of another test's.
                      text.contains("\nPPid:\t\(supervisor.processIdentifier)\n"),
                      // Past its first act: no longer root.
                      text.contains("\nUid:\t"), !text.contains("\nUid:\t0\t") else { continue }
                status = text
            }
            usleep(2_000)
        }
        let text = try #require(status, "no worker seen")
        func field(_ name: String) -> [String] {
            text.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .map { $0.dropFirst(name.count + 1).split(whereSeparator: { $0 == "\t" || $0 == " " }).map(String.init) } ?? []
        }
        let dedicated = try run("/usr/bin/id", ["-u", "crashwatch-worker"])
        let owner = dedicated.termination == .exited(0) ? dedicated.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "65534"
        // Real, effective, saved, filesystem.
        #expect(field("Uid") == [owner, "65534", owner, "65534"], "\(field("Uid"))")
        #expect(field("Gid").count == 4 && field("Gid")[1] == "65534" && field("Gid")[3] == "65534", "\(field("Gid"))")
        #expect(field("Groups") == ["100"], "the worker does not read files with the crashed user's groups: \(field("Groups"))")
        #expect(field("CapEff") == ["0000000000000000"] && field("CapPrm") == ["0000000000000000"], "\(field("CapEff")) \(field("CapPrm"))")
        #expect(field("NoNewPrivs") == ["1"])
        // Not dumpable: the kernel gives its /proc files to root.
        let worker = text.split(separator: "\n").first { $0.hasPrefix("Pid:") }.map { $0.dropFirst(4).trimmingCharacters(in: .whitespaces) } ?? ""
        var info = stat()
        if stat("/proc/\(worker)/environ", &info) == 0 { #expect(info.st_uid == 0, "the worker is dumpable") }
    }
}
