// SnapshotChurnTests.swift — many snapshots of a process that keeps changing (Fixtures/snapshot_churn.c: a storm
// of queued real-time signals, sent all along the snapshots, that it counts and checks for order, thread churn,
// fork churn): no signal lost or
// reordered, no thread left stopped after any snapshot, and the same output and exit status as a run without
// snapshots. 100 snapshots here (CRASHWATCH_SNAPSHOT_CHURN=N for more: `make stress-snapshot` takes 1,000).
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

@Suite(.serialized) struct SnapshotChurnTests {
    /// One run of `snapshot_churn - - -` with the sender going all along, and `snapshots` snapshots taken
    /// meanwhile (at least `minimumSeconds` of storm): its end, how many snapshots were written, the sender's output.
    private func churn(snapshots: Int, minimumSeconds: Double = 2) throws -> (end: RunResult, taken: Int, sent: String) {
        let clean = Paths.fixture("clean_exec")
        let target = try LiveProcess(Paths.fixture("snapshot_churn"), ["-", "-", "-"], launcher: clean)
        try #require(target.waitForLine("ready"))
        let sender = try LiveProcess(Paths.fixture("snapshot_churn"), ["send", String(target.pid), "-"], launcher: clean)
        let started = Date()
        let directory = try TemporaryDirectory("cw-churn")
        defer { directory.remove() }
        var taken = 0
        for index in 0..<snapshots {
            let result = try run(Paths.crashwatch, ["snapshot", "--symbolicate", "none", "-o", directory.join("report.json"), String(target.pid)])
            #expect(result.termination == .exited(0), "snapshot \(index): \(result.stderr)")
            if result.termination == .exited(0) { taken += 1 }
            // crashwatch has exited: every thread it held was detached; none may be stopped.
            let stopped = LiveProcess.threadStates(of: target.pid).filter { $0.value == "t" || $0.value == "T" }
            #expect(stopped.isEmpty, "after snapshot \(index): stopped threads \(stopped)")
            if !stopped.isEmpty { break }
        }
        while Date().timeIntervalSince(started) < minimumSeconds { usleep(10_000) }
        let sent = try sender.finish(timeout: 120)
        #expect(sent.termination == .exited(0))
        return (try target.finish(timeout: 300), taken, sent.stdout)
    }

    @Test("snapshots during a signal storm, thread churn and fork churn lose no signal, stop nothing and change no output",
          .timeLimit(.minutes(30)))
    func churnUnharmed() throws {
        let count = ProcessInfo.processInfo.environment["CRASHWATCH_SNAPSHOT_CHURN"].flatMap(Int.init) ?? 100
        let without = try churn(snapshots: 0)
        let expected = "ready\nsignals: every one, in order\nthreads joined\nforks statuses right\n"
        #expect(without.end.termination == .exited(0) && without.end.stdout == expected, "\(without.end.stdout)")
        let with = try churn(snapshots: count)
        #expect(with.taken == count)
        #expect(with.end.termination == without.end.termination)
        #expect(with.end.stdout == without.end.stdout)
        // The storm went on through the snapshots: thousands of signals, every one counted in order.
        let sent = Int(with.sent.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(sent > 1000, "the sender said: \(with.sent)")
    }
}
