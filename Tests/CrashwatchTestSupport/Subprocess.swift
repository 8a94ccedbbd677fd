// Subprocess.swift — the one process runner of the test targets: a program run to completion with a time
// limit, its output captured through files (no pipe to fill), and how it ended.
import Foundation
import Glibc
import Testing

/// How a process ended.
public enum Termination: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    /// Parses a fixture header's `EXIT:` value: `code 42` or `signal SIGSEGV`.
    public init?(header: String) {
        let parts = header.split(separator: " ")
        guard parts.count == 2 else { return nil }
        if parts[0] == "code", let code = Int32(parts[1]) {
            self = .exited(code)
        } else if parts[0] == "signal", let number = signalNumbers[String(parts[1])] {
            self = .signaled(number)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): "exit code \(code)"
        case .signaled(let signal): "signal \(signal)"
        }
    }
}

/// Signal numbers on Linux by name, as fixture headers and crash lines spell them.
public let signalNumbers: [String: Int32] = [
    "SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8,
    "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15,
    "SIGCHLD": 17, "SIGCONT": 18, "SIGSTOP": 19, "SIGTSTP": 20, "SIGXCPU": 24, "SIGXFSZ": 25, "SIGWINCH": 28,
    "SIGSYS": 31,
]

/// The outcome of running a process.
public struct RunResult: Sendable {
    public let termination: Termination
    public let stdout: String
    public let stderr: String
    /// The pid the process had.
    public let pid: Int32

    /// Whether the process exited with status 0.
    public var succeeded: Bool { termination == .exited(0) }
}

/// Runs programs to completion for tests.
public enum Subprocess {
    /// Runs `executable` with `arguments` to completion (killed, and an issue recorded, after `timeout`
    /// seconds), capturing stdout and stderr; `environment` adds to (or overrides) the test process's.
    /// With a `launcher` (the clean_exec fixture), the launcher runs `executable arguments…` instead.
    public static func run(_ executable: String, _ arguments: [String] = [], stdin: String? = nil,
                           workingDirectory: String? = nil, environment: [String: String]? = nil,
                           timeout: Double = 60, launcher: String? = nil) throws -> RunResult
    {
        let directory = try TemporaryDirectory("cw-run", mode: 0o700)
        let outPath = directory.join("stdout"), errPath = directory.join("stderr")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher ?? executable)
        process.arguments = launcher == nil ? arguments : [executable] + arguments
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = outHandle
        process.standardError = errHandle
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle(forReadingAtPath: "/dev/null") : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        let pid = process.processIdentifier
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            Issue.record("\(executable) \(arguments) did not finish within \(timeout) s; killed")
        }
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let termination: Termination = process.terminationReason == .uncaughtSignal
            ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
        return RunResult(
            termination: termination,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "",
            pid: pid)
    }

    /// Runs `executable` and returns its standard output; a failure (not exit status 0) fails the test.
    public static func output(_ executable: String, _ arguments: [String] = [], workingDirectory: String? = nil,
                              environment: [String: String]? = nil) throws -> String
    {
        let result = try run(executable, arguments, workingDirectory: workingDirectory, environment: environment)
        try #require(result.succeeded, "\(executable) \(arguments.joined(separator: " ")) failed: \(result.termination)\n\(result.stderr)")
        return result.stdout
    }
}

/// Core dumps made by the kernel in a test's own directory (`core_pattern` is a file name there).
public enum Cores {
    /// Why no core can be dumped into a directory here, or nil when one can (`core_pattern` is not a pipe).
    public static var skipReason: String? {
        let pattern = (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? ""
        return pattern.hasPrefix("|") ? "core_pattern pipes cores to a helper here; skip" : nil
    }

    /// Ends the test (as a skip, saying why) when the kernel does not dump cores into the crashing process's directory.
    public static func requireDumpedHere() throws {
        try #require(skipReason == nil, Comment(rawValue: skipReason ?? ""))
    }

    /// Runs `argv` in `directory` with `ulimit -c unlimited` and returns how it ended.
    @discardableResult
    public static func run(_ argv: [String], in directory: String, timeout: Double = 60) throws -> RunResult {
        try Subprocess.run("/bin/sh", ["-c", "ulimit -c unlimited; exec \"$@\"", "sh"] + argv,
                           workingDirectory: directory, timeout: timeout)
    }
}
