// Support.swift — the integration tests' harness: where the built binary and fixtures are, what each
// fixture's header says it must produce, and running a process to completion with a time limit.
import Foundation
import Testing

/// Paths of the package, the built crashwatch binary and the built fixtures.
enum Paths {
    /// The package root, found from this file's location.
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The crashwatch binary under test: `$CRASHWATCH_BIN`, else the debug build.
    static let crashwatch: String = ProcessInfo.processInfo.environment["CRASHWATCH_BIN"] ?? "\(root)/.build/debug/crashwatch"

    /// Where `make fixtures` (Fixtures/build.sh) puts the compiled fixtures.
    static let fixtures = "\(root)/.build/fixtures"

    /// A fixture's executable.
    static func fixture(_ name: String) -> String { "\(fixtures)/\(name)" }
}

/// How a process ended.
enum Termination: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    /// Parses a fixture header's `EXIT:` value: `code 42` or `signal SIGSEGV`.
    init?(header: String) {
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

    var description: String {
        switch self {
        case .exited(let code): "exit code \(code)"
        case .signaled(let signal): "signal \(signal)"
        }
    }
}

let signalNumbers: [String: Int32] = [
    "SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8,
    "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15,
    "SIGCHLD": 17, "SIGCONT": 18, "SIGSTOP": 19, "SIGTSTP": 20, "SIGXCPU": 24, "SIGXFSZ": 25, "SIGWINCH": 28,
    "SIGSYS": 31,
]

/// A C fixture and the expectations its header comment states (`KEY: value` lines).
struct Fixture: CustomTestStringConvertible, Sendable {
    let name: String
    let keys: [String: String]

    var testDescription: String { name }

    /// The languages fixtures are written in, by file extension.
    static let extensions = ["c", "cpp", "swift"]

    /// Reads `Fixtures/<name>.<extension>` (the first of `extensions` that exists) and parses its header block.
    init(_ name: String, extensions: [String] = Fixture.extensions) {
        self.name = name
        let source = extensions.lazy
            .compactMap { try? String(contentsOfFile: "\(Paths.root)/Fixtures/\(name).\($0)", encoding: .utf8) }
            .first ?? ""
        var keys: [String: String] = [:]
        if let end = source.range(of: "*/") {
            for rawLine in source[..<end.lowerBound].split(separator: "\n") {
                let line = rawLine.trimmingCharacters(in: .whitespaces).drop(while: { $0 == "/" || $0 == "*" })
                    .trimmingCharacters(in: .whitespaces)
                guard let colon = line.firstIndex(of: ":") else { continue }
                let key = String(line[..<colon])
                guard key.allSatisfy({ $0.isUppercase || $0 == "-" }), !key.isEmpty else { continue }
                keys[key] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        self.keys = keys
    }

    /// Every fixture program (not the `lib*.c` shared objects), sorted by name; not those whose header says
    /// `RUN: alone` (only their own test runs them: fuse_stall's core dump alone would wait on its FUSE server).
    static var all: [Fixture] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(Paths.root)/Fixtures")) ?? []
        return names.compactMap { name -> Fixture? in
            guard !name.hasPrefix("lib"), let dot = name.lastIndex(of: "."),
                  extensions.contains(String(name[name.index(after: dot)...])) else { return nil }
            return Fixture(String(name[..<dot]))
        }.filter { $0.keys["RUN"] != "alone" }.sorted { $0.name < $1.name }
    }

    /// `crashwatch run` options the fixture needs: its separate debug directory for `DEBUG: separate`.
    var captureOptions: [String] { keys["DEBUG"] == "separate" ? ["--debug-dir", "\(Paths.fixtures)/debug"] : [] }

    /// Environment variables the fixture must run with (`ENV: NAME=value ...`).
    var environment: [String: String] {
        var result: [String: String] = [:]
        for assignment in (keys["ENV"] ?? "").split(separator: " ") {
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            result[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return result
    }

    var arguments: [String] { (keys["ARGS"] ?? "").split(separator: " ").map(String.init) }
    var expectedExit: Termination? { keys["EXIT"].flatMap(Termination.init(header:)) }
    var expectedCrashes: Int { Int(keys["CRASHES"] ?? "0") ?? 0 }
    /// Expected stdout with `\n` escapes turned into newlines, plus the final newline.
    var expectedStdout: String? {
        keys["STDOUT"].map { $0.isEmpty ? "" : $0.replacingOccurrences(of: "\\n", with: "\n") + "\n" }
    }
}

/// The outcome of running a process.
struct RunResult {
    let termination: Termination
    let stdout: String
    let stderr: String
    /// The pid the process had.
    let pid: Int32

    /// Lines crashwatch printed about crashes (`crashwatch: …[pid] crashed: …`).
    var crashLines: [CrashLine] { stderr.split(separator: "\n").compactMap { CrashLine(String($0)) } }
    /// Every line crashwatch itself printed.
    var crashwatchLines: [String] { stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("crashwatch: ") } }
}

/// A parsed crash line: `crashwatch: EXE[PID] crashed: SIG (CODE) at ADDR, thread TID "NAME"; original fault: …`.
struct CrashLine {
    let executable: String
    let pid: Int32
    let signal: String
    let code: String
    let address: String?
    let tid: Int32
    let threadName: String?
    let originalSignal: String?
    let originalCode: String?

    init?(_ line: String) {
        let pattern = #/^crashwatch: (.+)\[(\d+)\] crashed: (SIG\w+) \((\w+)\)(?: at (0x[0-9a-f]+))?(?: from pid \d+)?, thread (\d+)(?: "([^"]*)")?(?:; original fault: (SIG\w+) \((\w+)\).*)?$/#
        guard let match = line.wholeMatch(of: pattern) else { return nil }
        executable = String(match.1)
        pid = Int32(match.2)!
        signal = String(match.3)
        code = String(match.4)
        address = match.5.map(String.init)
        tid = Int32(match.6)!
        threadName = match.7.map(String.init)
        originalSignal = match.8.map(String.init)
        originalCode = match.9.map(String.init)
    }
}

/// Runs `executable` with `arguments` to completion (killed after `timeout` seconds), capturing output;
/// `environment` adds to (or overrides) the test process's environment.
func run(_ executable: String, _ arguments: [String] = [], stdin: String? = nil, workingDirectory: String? = nil,
         environment: [String: String]? = nil, timeout: Double = 60) throws -> RunResult
{
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cw-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let outURL = directory.appendingPathComponent("stdout"), errURL = directory.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)

    // Through clean_exec: the test runner's threads block most signals, and a child inherits that mask.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Paths.fixture("clean_exec"))
    process.arguments = [executable] + arguments
    if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
    if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let outHandle = try FileHandle(forWritingTo: outURL), errHandle = try FileHandle(forWritingTo: errURL)
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
        stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "",
        pid: pid)
}

/// Runs `executable` bare and under `crashwatch run` with the same arguments.
func runBareAndSupervised(_ executable: String, _ arguments: [String], extraOptions: [String] = [],
                          stdin: String? = nil, environment: [String: String] = [:]) throws -> (bare: RunResult, supervised: RunResult)
{
    let bare = try run(executable, arguments, stdin: stdin, environment: environment)
    let spool = FileManager.default.temporaryDirectory.appendingPathComponent("cw-spool-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: spool) }
    let supervised = try run(Paths.crashwatch, ["run", "--spool", spool] + extraOptions + ["--", executable] + arguments,
                             stdin: stdin, environment: environment)
    return (bare, supervised)
}
