// SnapshotRenderingTests.swift — a report of kind `snapshot` as people and receivers see it: the headline counts
// the threads' states, `show` names each thread's state and system call, OTLP makes it a `crashwatch.snapshot`
// event at INFO (a hang stays `apsio.hang`), Sentry an event of level `info`, and it has no signal anywhere.
import CrashwatchModel
import CrashwatchRender
import CrashwatchTestSupport
import Testing

@Suite struct SnapshotRenderingTests {
    /// The render fixture as a snapshot: no signal; the main thread blocked in read, the others running, and one
    /// more thread in a job-control stop.
    private var snapshot: CrashReport {
        var report = ExportFixture.report
        report.kind = .snapshot
        report.signal = .none
        report.holdDurationMs = 1.25
        for index in report.threads.indices {
            report.threads[index].crashed = false
            report.threads[index].state = index == 0 ? .syscall : .running
            report.threads[index].syscall = index == 0 ? SyscallRecord(number: 0, name: "read") : nil
        }
        var stopped = report.threads[0]
        stopped.tid = 4299
        stopped.name = "paused"
        stopped.state = .stopped
        stopped.syscall = nil
        report.threads.append(stopped)
        return report
    }

    @Test("the headline says snapshot and counts the threads by state, with the system calls named")
    func headline() {
        let text = Headline.text(snapshot)
        let count = snapshot.threads.count
        #expect(text.hasPrefix("Process 4242 (checkout) of unit checkout.service snapshot: \(count) threads: "))
        #expect(text.contains("1 in system call (read 1)") && text.contains("1 stopped"))
        #expect(!text.contains("SIG"))
    }

    @Test("show gives each thread's state in its title and the states and the hold in the header")
    func show() {
        let page = ShowRenderer.render(snapshot, style: Style(color: false))
        #expect(page.contains("Kind") && page.contains("snapshot"))
        #expect(page.contains(", in read (system call 0)"))
        #expect(page.contains(", running") && page.contains(", stopped (job control)"))
        #expect(page.contains("Threads") && page.contains("Held"))
        // A crash report has no states: its page is unchanged.
        #expect(!ShowRenderer.render(ExportFixture.report, style: Style(color: false)).contains("Held"))
    }

    @Test("OTLP: a snapshot is a crashwatch.snapshot event at INFO; a hang stays apsio.hang")
    func otlp() {
        let text = String(decoding: OTLPLogs.request(for: snapshot, reportText: nil, scope: OTLPLogs.Scope(version: "1")), as: UTF8.self)
        #expect(text.contains(#""eventName":"crashwatch.snapshot""#))
        #expect(text.contains(#""severityText":"INFO""#) && text.contains(#""severityNumber":9"#))
        #expect(!text.contains("app.crash.id") && !text.contains("exception.type"))
        var hang = snapshot
        hang.kind = .hang
        #expect(String(decoding: OTLPLogs.request(for: hang, reportText: nil, scope: OTLPLogs.Scope(version: "1")), as: UTF8.self)
            .contains(#""eventName":"apsio.hang""#))
    }

    @Test("Sentry: a snapshot is an event of level info, its exception a handled Snapshot, no signal tags")
    func sentry() {
        let text = String(decoding: SentryEvent.event(for: snapshot, settings: SentryEvent.Settings(version: "1")), as: UTF8.self)
        #expect(text.contains(#""level":"info""#))
        #expect(text.contains(#""type":"Snapshot""#) && text.contains(#""type":"crashwatch.snapshot""#))
        #expect(!text.contains(#""signal":"#))
    }
}
