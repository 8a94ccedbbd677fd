// SnapshotTests.swift — `crashwatch snapshot PID` on real running processes: the report (every thread, names,
// frames with lines, system calls named, kind snapshot, no signal), and the process left unharmed — its output
// and exit status as without snapshots, a signal sent during the hold delivered after it, no thread left
// stopped even when crashwatch is killed mid-hold, and the processes a snapshot refuses.
import CrashwatchModel
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

/// A snapshot_target process (Fixtures/snapshot_target.c), ready.
private func startTarget() throws -> LiveProcess {
    let target = try LiveProcess(Paths.fixture("snapshot_target"), launcher: Paths.fixture("clean_exec"))
    try #require(target.waitForLine("ready"), "snapshot_target did not get ready: \(target.output)")
    return target
}

/// Takes a snapshot of `pid` into a file and returns the decoded report (the run must succeed and the report
/// must be valid against the schema).
private func snapshot(_ pid: Int32, _ options: [String] = [], environment: [String: String]? = nil) throws -> CrashReport {
    let directory = try TemporaryDirectory("cw-snapshot")
    defer { directory.remove() }
    let path = directory.join("report.json")
    let result = try run(Paths.crashwatch, ["snapshot", "-o", path] + options + [String(pid)], environment: environment)
    try #require(result.termination == .exited(0), "crashwatch snapshot: \(result.stderr)")
    #expect(result.stdout == path + "\n")
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(try SchemaValidator().validate(reportJSON: data).isEmpty)
    return try CrashReport.decode(Array(data))
}

/// Whether any thread of `pid` is in a ptrace stop (`t`) or a job-control stop (`T`).
private func anyStopped(_ pid: Int32) -> Bool {
    LiveProcess.threadStates(of: pid).values.contains { $0 == "t" || $0 == "T" }
}

/// `crashwatch snapshot` started in the background with the test pause at `stage` for `seconds`, once it says it
/// pauses there.
private func pausedSnapshot(_ pid: Int32, at stage: String, seconds: Int, output: TemporaryDirectory) throws -> LiveProcess {
    let crashwatch = try LiveProcess("/usr/bin/env", ["CRASHWATCH_TEST_SNAPSHOT_PAUSE=\(stage):\(seconds)", Paths.crashwatch,
                                                      "snapshot", "-o", output.join("report.json"), String(pid)],
                                     launcher: Paths.fixture("clean_exec"))
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline && !crashwatch.errors.contains("test pause at \(stage)") { usleep(2_000) }
    try #require(crashwatch.errors.contains("test pause at \(stage)"), "crashwatch did not pause: \(crashwatch.errors)")
    return crashwatch
}

@Suite(.serialized) struct SnapshotTests {
    @Test("a snapshot names every thread, its functions with lines and its system call, and the process goes on as before")
    func everyThreadAndUnharmed() throws {
        let target = try startTarget()
        let report = try snapshot(target.pid)
        #expect(report.kind == .snapshot)
        #expect(report.signal.name == "none")
        #expect(report.process.pid == target.pid)
        #expect((report.holdDurationMs ?? 0) > 0)
        #expect(report.diagnostics.processing == .complete)
        #expect(!report.threads.contains { $0.crashed })
        let byName = Dictionary(report.threads.map { ($0.name ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(byName.keys) == ["snapshot_target", "spinner", "reader", "sleeper", "waiter", "handler"])
        func functions(_ name: String) -> [String] { byName[name]?.frames.compactMap(\.function) ?? [] }
        func syscall(_ name: String) -> String? { byName[name]?.syscall?.name }
        #expect(byName["spinner"]?.state == .running && functions("spinner").contains("spin_here"))
        #expect(byName["reader"]?.state == .syscall && syscall("reader") == "read" && functions("reader").contains("read_here"))
        #expect(byName["snapshot_target"]?.state == .syscall && syscall("snapshot_target") == "read" && functions("snapshot_target").contains("main"))
        #expect(["nanosleep", "clock_nanosleep"].contains(syscall("sleeper")) && functions("sleeper").contains("sleep_here"))
        #expect(byName["waiter"]?.state == .syscall && syscall("waiter") == "futex" && functions("waiter").contains("wait_here"))
        #expect(["nanosleep", "clock_nanosleep"].contains(syscall("handler")) && functions("handler").contains("in_handler"))
        // Lines, from DWARF, on the program's own frames.
        let own = report.threads.flatMap(\.frames).filter { $0.file?.hasSuffix("snapshot_target.c") == true }
        #expect(!own.isEmpty && own.allSatisfy { ($0.line ?? 0) > 0 })
        #expect(report.fingerprint?.kind == "snapshot")

        #expect(!anyStopped(target.pid), "a thread was left stopped: \(target.threadStates())")
        for _ in 0..<3 { target.send("ping\n") }
        let end = try target.finish()
        #expect(end.termination == .exited(0))
        #expect(end.stdout == "ready\nreads 3\nsignals 0\ndone\n")
    }

    @Test("--threads captures the named threads' stacks; the others are listed with their state")
    func someThreads() throws {
        let target = try startTarget()
        let report = try snapshot(target.pid, ["--threads", String(target.pid)])
        let main = try #require(report.threads.first { $0.tid == target.pid })
        #expect(!main.frames.isEmpty && !main.registers.isEmpty)
        let others = report.threads.filter { $0.tid != target.pid }
        #expect(others.count == 5)
        #expect(others.allSatisfy { $0.frames.isEmpty && $0.registers.isEmpty && $0.state != nil })
        _ = try target.finish()
    }

    @Test("a signal sent while the threads are held is delivered after the release", .timeLimit(.minutes(2)))
    func signalDuringHold() throws {
        let target = try startTarget()
        let output = try TemporaryDirectory("cw-snapshot")
        defer { output.remove() }
        let crashwatch = try pausedSnapshot(target.pid, at: "stopped", seconds: 2, output: output)
        #expect(target.threadStates().values.allSatisfy { $0 == "t" }, "held threads are in a ptrace stop: \(target.threadStates())")
        kill(target.pid, SIGUSR2)
        let snapshot = try crashwatch.finish()
        #expect(snapshot.termination == .exited(0), "\(snapshot.stderr)")
        #expect(!anyStopped(target.pid))
        target.send("ping\n")
        let end = try target.finish()
        #expect(end.stdout == "ready\nreads 1\nsignals 1\ndone\n")
    }

    @Test("a signal a thread meets at its delivery while being stopped is delivered at once: it is in its handler", .timeLimit(.minutes(2)))
    func signalAtDelivery() throws {
        let target = try startTarget()
        let output = try TemporaryDirectory("cw-snapshot")
        defer { output.remove() }
        // Seized, not yet interrupted: the sleeper (the one thread taking SIGUSR2) stops at its delivery.
        let crashwatch = try pausedSnapshot(target.pid, at: "attached", seconds: 2, output: output)
        kill(target.pid, SIGUSR2)
        let snapshot = try crashwatch.finish()
        #expect(snapshot.termination == .exited(0), "\(snapshot.stderr)")
        let report = try CrashReport.decode(Array(try Data(contentsOf: URL(fileURLWithPath: output.join("report.json")))))
        let sleeper = try #require(report.threads.first { $0.name == "sleeper" })
        #expect(sleeper.frames.first?.function == "on_usr2", "\(sleeper.frames.compactMap(\.function))")
        #expect(!anyStopped(target.pid))
        target.send("ping\n")
        #expect(try target.finish().stdout == "ready\nreads 1\nsignals 1\ndone\n")
    }

    @Test("crashwatch killed (SIGKILL) while it holds the process leaves it running, its signals delivered",
          .timeLimit(.minutes(2)), arguments: ["seized", "stopped"])
    func killedMidHold(_ stage: String) throws {
        let target = try startTarget()
        let output = try TemporaryDirectory("cw-snapshot")
        defer { output.remove() }
        let crashwatch = try pausedSnapshot(target.pid, at: stage, seconds: 60, output: output)
        kill(target.pid, SIGUSR2)
        kill(crashwatch.pid, SIGKILL)
        let killed = try crashwatch.finish()
        #expect(killed.termination == .signaled(SIGKILL))
        // The kernel detaches a dead tracer's tracees as it exits: none stays stopped.
        let deadline = Date().addingTimeInterval(5)
        while anyStopped(target.pid) && Date() < deadline { usleep(10_000) }
        #expect(!anyStopped(target.pid), "a thread was left stopped: \(target.threadStates())")
        target.send("ping\n")
        let end = try target.finish()
        #expect(end.termination == .exited(0))
        #expect(end.stdout == "ready\nreads 1\nsignals 1\ndone\n")
    }

    @Test("SIGTERM to crashwatch during the hold takes effect once the process is let go", .timeLimit(.minutes(2)))
    func terminatedMidHold() throws {
        let target = try startTarget()
        let output = try TemporaryDirectory("cw-snapshot")
        defer { output.remove() }
        let crashwatch = try pausedSnapshot(target.pid, at: "stopped", seconds: 2, output: output)
        kill(crashwatch.pid, SIGTERM)
        let ended = try crashwatch.finish()
        #expect(ended.termination == .signaled(SIGTERM))
        #expect(!anyStopped(target.pid), "a thread was left stopped: \(target.threadStates())")
        target.send("ping\n")
        #expect(try target.finish().stdout == "ready\nreads 1\nsignals 0\ndone\n")
    }

    @Test("pid 1, kernel threads, thread ids, missing processes and crashwatch's own tracees are refused, each saying why")
    func refusals() throws {
        let initProcess = try run(Paths.crashwatch, ["snapshot", "1"])
        #expect(initProcess.termination == .exited(69) && initProcess.stderr.contains("init process"))
        let kernelThread = try run(Paths.crashwatch, ["snapshot", "2"])
        #expect(kernelThread.termination == .exited(69) && kernelThread.stderr.contains("kernel thread"), "\(kernelThread.stderr)")
        let missing = try run(Paths.crashwatch, ["snapshot", "2147483646"])
        #expect(missing.termination == .exited(66) && missing.stderr.contains("no process"))
        let usage = try run(Paths.crashwatch, ["snapshot", "abc"])
        #expect(usage.termination == .exited(64))

        let target = try startTarget()
        let threadID = try #require(LiveProcess.threadStates(of: target.pid).keys.first { $0 != target.pid })
        let thread = try run(Paths.crashwatch, ["snapshot", String(threadID)])
        #expect(thread.termination == .exited(64) && thread.stderr.contains("is a thread of process \(target.pid)"))
        let notItsThread = try run(Paths.crashwatch, ["snapshot", "--threads", "2147483646", String(target.pid)])
        #expect(notItsThread.termination == .exited(64) && notItsThread.stderr.contains("is not a thread of process \(target.pid)"))
        _ = try target.finish()
    }

    @Test("a process a crashwatch supervisor traces is captured by that supervisor (its control socket), where eu-stack -p cannot attach")
    func supervisedProcess() throws {
        let spool = try TemporaryDirectory("cw-spool")
        defer { spool.remove() }
        let supervisor = try LiveProcess(Paths.crashwatch, ["run", "--spool", spool.path, "--", Paths.fixture("snapshot_target")],
                                         launcher: Paths.fixture("clean_exec"))
        try #require(supervisor.waitForLine("ready"))
        let child = try #require(ProcFS.children(of: supervisor.pid).first)
        if let euStack = Paths.which("eu-stack") {
            // The documented comparison: a process has one tracer, and eu-stack is refused.
            let eu = try run(euStack, ["-p", String(child)])
            #expect(eu.termination != .exited(0))
        }
        let taken = try run(Paths.crashwatch, ["snapshot", String(child)])
        #expect(taken.termination == .exited(0), "\(taken.stderr)")
        let path = taken.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.hasPrefix(spool.path + "/"), "the supervisor's spool: \(path)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(report["kind"] as? String == "snapshot")
        #expect(((report["process"] as? [String: Any])?["pid"] as? Int).map(Int32.init) == child)
        #expect(((report["threads"] as? [[String: Any]]) ?? []).allSatisfy { !(($0["frames"] as? [Any]) ?? []).isEmpty })
        // -o and --threads are the caller's own capture's: the supervisor writes into its spool.
        let misused = try run(Paths.crashwatch, ["snapshot", "-o", "-", String(child)])
        #expect(misused.termination == .exited(64) && misused.stderr.contains("--output does not apply"), "\(misused.stderr)")
        #expect(!anyStopped(child))
        #expect(try supervisor.finish().stdout == "ready\nreads 0\nsignals 0\ndone\n")
    }

    @Test("another user's process is refused with the kernel's reason (unprivileged crashwatch)")
    func anotherUsersProcess() throws {
        guard geteuid() == 0, let setpriv = Paths.which("setpriv") else { return }
        let target = try startTarget()
        let refused = try run(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", Paths.crashwatch, "snapshot", "-o", "/tmp/cw-never-written.json",
                                        String(target.pid)])
        // setpriv could not run crashwatch as nobody (its build directory is closed to others): nothing to check.
        if refused.termination == .exited(126) || refused.termination == .exited(127) || refused.stderr.contains("setpriv:") { return }
        #expect(refused.termination == .exited(77), "\(refused.stderr)")
        #expect(refused.stderr.contains("another user") || refused.stderr.contains("ptrace_scope"), "\(refused.stderr)")
        #expect(!anyStopped(target.pid))
        _ = try target.finish()
    }

    @Test("a Python process's snapshot has its interpreter's frames and the system call it sleeps in")
    func pythonProcess() throws {
        guard let python = Paths.which("python3") else { return }
        let target = try LiveProcess(python, ["-c", "import time\nprint('ready', flush=True)\nwhile True: time.sleep(1)"],
                                     launcher: Paths.fixture("clean_exec"))
        try #require(target.waitForLine("ready"))
        let report = try snapshot(target.pid)
        let main = try #require(report.threads.first { $0.tid == target.pid })
        #expect(main.state == .syscall && ["clock_nanosleep", "select", "pselect6", "nanosleep"].contains(main.syscall?.name ?? ""),
                "\(String(describing: main.syscall))")
        #expect(main.frames.contains { $0.function?.contains("Py") == true || $0.function?.contains("sleep") == true })
        #expect(!anyStopped(target.pid))
        kill(target.pid, SIGKILL)
    }
}
