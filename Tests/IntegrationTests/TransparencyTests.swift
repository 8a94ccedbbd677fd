// TransparencyTests.swift — `crashwatch run` behaves like the bare command where a terminal, signals or
// timing are involved: stdin, forwarded signals, Ctrl-C, job control, raw mode, inherited attributes, a
// killed supervisor, orphans, exit statuses, command errors, stops of the program alone, of the cgroup, the freezer. Each case lives in transparency.py (Python's
// pty/termios make them short); this test runs one case per argument and shows the script's output.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct TransparencyTests {
    /// The script beside this file.
    static let script = "\(Paths.root)/Tests/IntegrationTests/transparency.py"

    /// python3, from the usual places or else through PATH.
    static let python: (executable: String, arguments: [String]) = {
        for path in ["/usr/bin/python3", "/usr/local/bin/python3"] where FileManager.default.isExecutableFile(atPath: path) {
            return (path, [])
        }
        return ("/usr/bin/env", ["python3"])
    }()

    /// The script's exit status for "the machine forbids something this case needs".
    static let skipStatus: Int32 = 77

    @Test("crashwatch run is transparent", arguments: [
        "stdin_pipe", "forward_signals", "group_signals_once", "ctrl_c_once", "job_control", "job_control_stops",
        "stop_cont_app_alone", "cgroup_stop_cont", "cgroup_freezer", "raw_terminal",
        "inherited_attributes", "supervisor_killed", "orphans_reaped", "exit_status_signal", "pid1_exit_status", "command_errors",
        "notify_relay_and_hang", "notify_relay_filter", "abnormal_exit_report", "pid_file_daemon", "forking_without_pid_file", "ptrace_refused", "mincore_refused",
    ])
    func transparency(_ name: String) throws {
        let result = try run(Self.python.executable, Self.python.arguments + [Self.script, Paths.crashwatch, Paths.fixtures, name],
                             timeout: 60)
        let output = "\(result.stdout)\(result.stderr)".trimmingCharacters(in: .whitespacesAndNewlines)
        if result.termination == .exited(Self.skipStatus) {
            try Test.cancel("skipped: \(output)")
        }
        #expect(result.termination == .exited(0), "transparency.py \(name) ended with \(result.termination):\n\(output)")
    }
}
