// ThreadStates.swift — what the threads of a process stopped from outside (a snapshot, a hang) were doing, in
// words: one thread's state (`in futex (system call 202)`), and a report's count of them (`3 threads: 1 running,
// 2 in system calls`), for `show`, the headline and the shipped records. Sanitized: the names come from a file.
import CrashwatchModel

/// Thread states as text.
public enum ThreadStates {
    /// `running`, `in read (system call 0)`, `in system call 450`, `stopped (job control)`; nil without a state.
    public static func text(of thread: ThreadRecord) -> String? {
        guard let state = thread.state else { return nil }
        switch state {
        case .running: return "running"
        case .stopped: return "stopped (job control)"
        case .syscall:
            guard let syscall = thread.syscall else { return "in a system call" }
            let number = String(syscall.number)
            return syscall.name.map { "in \(TextFormatting.sanitized($0)) (system call \(number))" } ?? "in system call \(number)"
        default: return TextFormatting.sanitized(state.rawValue)
        }
    }

    /// `5 threads: 1 running, 3 in system calls (futex 2, read 1), 1 stopped`: the report's threads by state; nil
    /// when none has one (a crash report).
    public static func summary(of report: CrashReport) -> String? {
        let states = report.threads.compactMap(\.state)
        guard !states.isEmpty else { return nil }
        var parts: [String] = []
        let running = states.filter { $0 == .running }.count
        if running > 0 { parts.append("\(running) running") }
        let calls = report.threads.filter { $0.state == .syscall }
        if !calls.isEmpty {
            var counts: [String: Int] = [:]
            for thread in calls {
                counts[thread.syscall.map { $0.name.map(TextFormatting.sanitized) ?? "#\($0.number)" } ?? "?", default: 0] += 1
            }
            let named = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(6)
                .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            parts.append("\(calls.count) in system call\(calls.count == 1 ? "" : "s") (\(named)\(counts.count > 6 ? ", …" : ""))")
        }
        let stopped = states.filter { $0 == .stopped }.count
        if stopped > 0 { parts.append("\(stopped) stopped") }
        let noState = report.threads.count - states.count
        if noState > 0 { parts.append("\(noState) not stopped") }
        return "\(report.threads.count) thread\(report.threads.count == 1 ? "" : "s"): " + parts.joined(separator: ", ")
    }
}
