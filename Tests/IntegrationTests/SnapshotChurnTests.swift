// SnapshotChurnTests.swift — many snapshots of a process that keeps changing (Fixtures/snapshot_churn.c: a storm
// of queued real-time signals it counts and checks for order, thread churn, fork churn): no signal lost or
// reordered, no thread left stopped after any snapshot, and the same output and exit status as a run without
// snapshots. 100 snapshots here (CRASHWATCH_SNAPSHOT_CHURN=N for more: `make stress-snapshot` takes 1,000).
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

@Suite(.serialized) struct SnapshotChurnTests {
    /// Real-time signals sent during the run.
    static let signals = 20_000

    /// One run of `snapshot_churn SIGNALS - -` with the sender going, and `snapshots` snapshots taken meanwhile:
    /// its end, and how many snapshots were written.
    private func churn(snapshots: Int) throws -> (end: RunResult, taken: Int) {
        let clean = Paths.fixture("clean_exec")
        let target = try LiveProcess(Paths.fixture("snapshot_churn"), [String(Self.signals), "-", "-"], launcher: clean)
        try #require(target.waitForLine("ready"))
        let sender = try LiveProcess(Paths.fixture("snapshot_churn"), ["send", String(target.pid), String(Self.signals)], launcher: clean)
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
        #expect(try sender.finish(timeout: 120).termination == .exited(0))
        return (try target.finish(timeout: 300), taken)
    }

    @Test("snapshots during a signal storm, thread churn and fork churn lose no signal, stop nothing and change no output",
          .timeLimit(.minutes(30)))
    func churnUnharmed() throws {
        let count = ProcessInfo.processInfo.environment["CRASHWATCH_SNAPSHOT_CHURN"].flatMap(Int.init) ?? 100
        let without = try churn(snapshots: 0)
        let expected = "ready\nsignals \(Self.signals) in order\nthreads joined\nforks statuses right\n"
        #expect(without.end.termination == .exited(0) && without.end.stdout == expected, "\(without.end.stdout)")
        let with = try churn(snapshots: count)
        #expect(with.taken == count)
        #expect(with.end.termination == without.end.termination)
        #expect(with.end.stdout == without.end.stdout)
    }
}
