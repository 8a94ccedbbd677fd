// HeadlineTests.swift — a report in one line for the journal's MESSAGE: the wording for a plain crash, a
// handled-then-re-raised one, other kinds, no unit and no frame, the frame chosen as `list` chooses it (with a
// fallback to the first frame with a function), and hostile names kept on one line.
import CrashwatchModel
import CrashwatchRender
import CrashwatchTestSupport
import Testing

@Suite struct HeadlineTests {
    /// The render fixture without its original fault: a plain crash of a unit's process.
    private var plain: CrashReport {
        var report = ExportFixture.report
        report.signal = SignalRecord(SignalInfo(signo: 11, code: 1, address: 0))
        return report
    }

    @Test("a crash reads like systemd-coredump's line: process, comm, unit, signal, code, address, top in-app frame")
    func plainCrash() {
        #expect(Headline.text(plain)
            == "Process 4242 (checkout) of unit checkout.service crashed: SIGSEGV (SEGV_MAPERR) at 0x0 in parse_digit (parse.c:12)")
        #expect(Headline.frame(of: plain)?.function == "parse_digit")
    }

    @Test("a handled fault re-raised: the final signal with its sender, then the original fault and where it happened")
    func originalFault() {
        #expect(Headline.text(ExportFixture.report)
            == "Process 4242 (checkout) of unit checkout.service crashed: SIGABRT (SI_TKILL) from pid 4242; "
            + "original fault: SIGSEGV (SEGV_MAPERR) at 0x10 in parse_digit (parse.c:12)")
    }

    @Test("without a unit or any frame the line just ends; other kinds have their own verb", arguments: [
        ("crash", "crashed"), ("abnormalExit", "was killed"), ("hang", "hung"), ("someday", "ended (someday)"),
    ])
    func kindsWithoutUnitOrFrame(kind: String, verb: String) {
        var report = plain
        report.kind = ReportKind(rawValue: kind)
        report.process.systemdUnit = nil
        report.threads = []
        #expect(Headline.text(report) == "Process 4242 (checkout) \(verb): SIGSEGV (SEGV_MAPERR) at 0x0")
        #expect(Headline.frame(of: report) == nil)
    }

    @Test("a hang: how long the pings stopped, and where the main thread was (no thread crashed)")
    func hang() throws {
        var report = plain
        report.kind = .hang
        report.signal = .none
        report.hang = HangRecord(source: "watchdog", startTime: "2026-11-30T09:01:55.623Z", durationMs: 1500.4, watchdogTimeoutMs: 3000)
        for index in report.threads.indices { report.threads[index].crashed = false }
        let main = try #require(report.threads.firstIndex { $0.tid == report.process.pid })
        #expect(Headline.text(report)
            == "Process 4242 (checkout) of unit checkout.service hung: no watchdog ping for 1500 ms in parse_digit (parse.c:12)")
        #expect(Headline.frame(of: report)?.function == report.threads[main].frames.first?.function)
        #expect(ReportSummary(report).topFrame == "parse_digit (parse.c:12)")
        report.hang?.durationMs = .infinity
        #expect(Headline.text(report).contains("no watchdog ping for 1000000000000000 ms"), "a hostile number is clamped, not trapped on")
    }

    @Test("a SIGKILL death captured at the exit stops: no crashed thread, the main thread's top in-app frame")
    func killedWithStacks() {
        var report = plain
        report.kind = .abnormalExit
        report.signal = .seenAtExit(.kill, sentByKernel: false)
        report.exit = ExitRecord(reason: "signal", source: "inferred", evidence: nil)
        for index in report.threads.indices { report.threads[index].crashed = false }
        #expect(Headline.text(report) == "Process 4242 (checkout) of unit checkout.service was killed: SIGKILL (SI_USER) in parse_digit (parse.c:12)")
        #expect(ReportSummary(report).topFrame == "parse_digit (parse.c:12)")
        #expect(report.signal.senderPID == nil && report.signal.description == "Killed: seen at the process's exit; who sent it is not known")
    }

    @Test("an OOM kill: the line names the OOM killer and its evidence, as the report and the stderr line do")
    func oomKill() {
        var report = plain
        report.kind = .abnormalExit
        report.signal = .seenAtExit(.kill, sentByKernel: true)
        report.exit = ExitRecord(reason: "memory", source: "platform", evidence: "memory cgroup /system.slice/x.service: oom_kill 0 -> 1")
        for index in report.threads.indices { report.threads[index].crashed = false }
        #expect(Headline.text(report).hasPrefix(
            "Process 4242 (checkout) of unit checkout.service was killed: SIGKILL (SI_KERNEL); the OOM killer: memory cgroup /system.slice/x.service: oom_kill 0 -> 1"),
                "\(Headline.text(report))")
    }

    @Test("with no in-app frame, the first frame that has a function is named; frames without one are skipped")
    func fallbackFrame() {
        var report = plain
        report.images[0].inApp = false
        report.threads[0].frames.insert(FrameRecord(index: 0, address: 0x1000, how: .context), at: 0)
        #expect(Headline.frame(of: report)?.function == "parse_digit")
        #expect(ReportSummary(report).topFrame == nil, "list still shows no in-app frame")
    }

    @Test("names the crashed program chose cannot break the line or reach a terminal raw")
    func hostileNames() {
        var report = plain
        report.process.comm = "evil\nMESSAGE=x"
        report.process.systemdUnit = "a\u{1b}[2J.service"
        let line = Headline.text(report)
        #expect(!line.contains("\n") && !line.contains("\u{1b}"))
        #expect(line.hasPrefix("Process 4242 (evil\\x0aMESSAGE=x) of unit a\\x1b[2J.service crashed: "))
    }
}
