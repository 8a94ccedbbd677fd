// Support.swift — the integration tests' harness over CrashwatchTestSupport: every run goes through the
// clean_exec fixture, crash lines parsed from crashwatch's stderr, a fixture run bare and supervised.
import CrashwatchTestSupport
import Foundation
import Testing

/// What crashwatch printed, read from a run's stderr.
extension RunResult {
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
/// `environment` adds to (or overrides) the test process's environment. Through the clean_exec fixture: the
/// test runner's threads block most signals, and a child inherits that mask.
func run(_ executable: String, _ arguments: [String] = [], stdin: String? = nil, workingDirectory: String? = nil,
         environment: [String: String]? = nil, timeout: Double = 60) throws -> RunResult
{
    try Subprocess.run(executable, arguments, stdin: stdin, workingDirectory: workingDirectory, environment: environment,
                       timeout: timeout, launcher: Paths.fixture("clean_exec"))
}

/// Runs `executable` bare and under `crashwatch run` with the same arguments.
func runBareAndSupervised(_ executable: String, _ arguments: [String], extraOptions: [String] = [],
                          stdin: String? = nil, environment: [String: String] = [:]) throws -> (bare: RunResult, supervised: RunResult)
{
    let bare = try run(executable, arguments, stdin: stdin, environment: environment)
    let spool = try TemporaryDirectory("cw-spool")
    defer { spool.remove() }
    let supervised = try run(Paths.crashwatch, ["run", "--spool", spool.path] + extraOptions + ["--", executable] + arguments,
                             stdin: stdin, environment: environment)
    return (bare, supervised)
}
