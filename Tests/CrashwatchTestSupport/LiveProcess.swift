// LiveProcess.swift — a program left running in the background for a test to look at (snapshots): started
// through clean_exec (a clean signal mask, as from a shell), its stdin a pipe the test writes to, its output in
// files; `waitForLine` waits for a readiness line (no sleeps as synchronization), `finish` closes stdin and
// collects how it ended. A test that forgets it kills it in deinit.
import Foundation
import Glibc

/// A program running in the background for a test.
public final class LiveProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let directory: TemporaryDirectory
    private let outPath: String
    private let errPath: String
    private var finished = false

    /// Starts `executable arguments…` through `launcher` (the clean_exec fixture).
    public init(_ executable: String, _ arguments: [String] = [], launcher: String) throws {
        directory = try TemporaryDirectory("cw-live", mode: 0o700)
        outPath = directory.join("stdout")
        errPath = directory.join("stderr")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: launcher)
        process.arguments = [executable] + arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardInput = input
        try process.run()
    }

    deinit {
        if !finished, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        directory.remove()
    }

    /// The process id (clean_exec execs the program: the same process).
    public var pid: Int32 { process.processIdentifier }

    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// What it has written to stdout so far.
    public var output: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }

    /// What it has written to stderr so far.
    public var errors: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// Waits until its stdout has the line `line`; false when it has not after `timeout` seconds or it ended.
    public func waitForLine(_ line: String, timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if output.split(separator: "\n").contains(Substring(line)) { return true }
            if !process.isRunning { return output.split(separator: "\n").contains(Substring(line)) }
            usleep(2_000)
        }
        return false
    }

    /// Writes `text` to its stdin.
    public func send(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Closes its stdin and waits (at most `timeout` seconds, then SIGKILL) for it to end: how it ended and its output.
    public func finish(timeout: Double = 60) throws -> RunResult {
        try input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        finished = true
        let termination: Termination = process.terminationReason == .uncaughtSignal
            ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
        return RunResult(termination: termination, stdout: output,
                         stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "", pid: pid)
    }

    /// The state letters of its threads (`/proc/PID/task/TID/stat`), by tid.
    public func threadStates() -> [Int32: Character] {
        Self.threadStates(of: pid)
    }

    /// The state letters of process `pid`'s threads, by tid (`t` a ptrace stop, `T` a job-control stop).
    public static func threadStates(of pid: Int32) -> [Int32: Character] {
        let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var states: [Int32: Character] = [:]
        for tid in tids {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let rest = stat[stat.index(after: close)...].drop { $0 == " " }
            if let state = rest.first, let id = Int32(tid) { states[id] = state }
        }
        return states
    }
}
