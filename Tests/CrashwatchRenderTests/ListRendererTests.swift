// ListRendererTests.swift — `crashwatch list` output compared whole: plain, coloured, empty, a very long executable
// path with and without a width limit, and report strings that try to smuggle terminal escapes or are not ASCII.
import CrashwatchRender
import CrashwatchModel
import CrashwatchTestSupport
import Testing

/// `ListRenderer.render` output, compared whole.
@Suite struct ListRendererTests {
    /// The fixture (newest) and an older report without an in-app frame, as `list` passes them.
    let summaries = [ReportSummary(ExportFixture.report), ReportSummary(ExportFixture.olderReport)]

    /// The columns before KIND, UNIT and VERSION: the width tests are about elision, not the column set.
    static let classic = ["time", "pid", "signal", "executable", "frame", "id"]

    /// A summary whose executable path is 111 characters long.
    let longPathSummary = ReportSummary(
        time: "2026-11-28T12:00:00.000Z", pid: 31337,
        executable: "/srv/deployments/2026-11-30/shop-checkout-release-candidate-7/opt/shop/libexec/checkout-worker-with-a-long-name",
        signal: "SIGBUS", code: "BUS_ADRERR", topFrame: nil, id: "00aa11bb-5c6d-4e7f-8a9b-0c1d2e3f4a5b", app: nil)

    /// Plain: aligned columns, PID right-aligned, `-` for no in-app frame, short ids, no escape codes.
    @Test func plain() {
        // Each literal's last line is empty so the text ends in a newline.
        let expected = """
        TIME (UTC)            PID  KIND   SIGNAL   UNIT              VERSION  EXECUTABLE                       TOP FRAME                 ID
        2026-11-30 09:01:57  4242  crash  SIGABRT  checkout.service  3.1.0    /opt/shop/bin/checkout           parse_digit (parse.c:12)  3f2b8c1e
        2026-11-29 23:59:59   987  crash  SIGSEGV  checkout.service  -        /usr/local/libexec/shop/reindex  -                         00aa11bb

        """
        #expect(ListRenderer.render(summaries, spool: "/var/lib/crashwatch", style: .plain) == expected)
    }

    /// Coloured: bold titles, bold red signals, green top frames; padding stays outside the codes.
    @Test func colored() {
        let b = "\u{1B}[1m", red = "\u{1B}[1;31m", green = "\u{1B}[32m", off = "\u{1B}[0m"
        let expected = """
        \(b)TIME (UTC)\(off)            \(b)PID\(off)  \(b)KIND\(off)   \(b)SIGNAL\(off)   \(b)UNIT\(off)              \(b)VERSION\(off)  \(b)EXECUTABLE\(off)                       \(b)TOP FRAME\(off)                 \(b)ID\(off)
        2026-11-30 09:01:57  4242  crash  \(red)SIGABRT\(off)  checkout.service  3.1.0    /opt/shop/bin/checkout           \(green)parse_digit (parse.c:12)\(off)  3f2b8c1e
        2026-11-29 23:59:59   987  crash  \(red)SIGSEGV\(off)  checkout.service  -        /usr/local/libexec/shop/reindex  -                         00aa11bb

        """
        #expect(ListRenderer.render(summaries, spool: "/var/lib/crashwatch", style: Style(color: true)) == expected)
    }

    /// A report that failed to ship adds a SHIP column with its failed attempts; the others leave it empty.
    @Test func failedShippingAttempts() {
        var kept = summaries
        kept[1].shipAttempts = 3
        kept[1].shipError = "HTTP 503"
        let expected = """
        TIME (UTC)            PID  KIND   SIGNAL   UNIT              VERSION  EXECUTABLE                       TOP FRAME                 ID        SHIP
        2026-11-30 09:01:57  4242  crash  SIGABRT  checkout.service  3.1.0    /opt/shop/bin/checkout           parse_digit (parse.c:12)  3f2b8c1e
        2026-11-29 23:59:59   987  crash  SIGSEGV  checkout.service  -        /usr/local/libexec/shop/reindex  -                         00aa11bb  3 failed

        """
        #expect(ListRenderer.render(kept, spool: "/var/lib/crashwatch", style: .plain) == expected)
    }

    /// `--columns` picks the columns and their order; a hang shows its kind where a crash shows `crash`.
    @Test func chosenColumns() {
        var hang = summaries[1]
        hang.kind = "hang"
        hang.signal = "none"
        let expected = """
        ID        KIND   UNIT              VERSION
        3f2b8c1e  crash  checkout.service  3.1.0
        00aa11bb  hang   checkout.service  -

        """
        #expect(ListRenderer.render([summaries[0], hang], spool: "/s", style: .plain, columns: ["id", "kind", "unit", "version"]) == expected)
    }

    /// No reports: one sentence naming the spool.
    @Test func empty() {
        #expect(ListRenderer.render([], spool: "/var/lib/crashwatch", style: .plain) == "No crash reports in /var/lib/crashwatch.\n")
        #expect(ListRenderer.render([], spool: "/tmp/x", style: Style(color: true)) == "No crash reports in /tmp/x.\n")
    }

    /// A very long path widens its column; every other column stays aligned across lines.
    @Test func longExecutablePathKeepsColumnsAligned() {
        let text = ListRenderer.render([summaries[0], longPathSummary], spool: "/s", style: .plain, columns: Self.classic)
        let expected = """
        TIME (UTC)             PID  SIGNAL   EXECUTABLE                                                                                                       TOP FRAME                 ID
        2026-11-30 09:01:57   4242  SIGABRT  /opt/shop/bin/checkout                                                                                           parse_digit (parse.c:12)  3f2b8c1e
        2026-11-28 12:00:00  31337  SIGBUS   /srv/deployments/2026-11-30/shop-checkout-release-candidate-7/opt/shop/libexec/checkout-worker-with-a-long-name  -                         00aa11bb

        """
        #expect(text == expected)
    }

    /// With a terminal width, the path loses its start and the top frame its end until the line fits.
    @Test func widthLimitElidesPathAndFrame() {
        let text = ListRenderer.render([summaries[0], longPathSummary], spool: "/s", style: Style(color: false, width: 100), columns: Self.classic)
        let expected = """
        TIME (UTC)             PID  SIGNAL   EXECUTABLE                   TOP FRAME                 ID
        2026-11-30 09:01:57   4242  SIGABRT  /opt/shop/bin/checkout       parse_digit (parse.c:12)  3f2b8c1e
        2026-11-28 12:00:00  31337  SIGBUS   …ut-worker-with-a-long-name  -                         00aa11bb

        """
        #expect(text == expected)
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 100 })

        let narrow = ListRenderer.render(summaries, spool: "/s", style: Style(color: false, width: 80), columns: Self.classic)
        let expectedNarrow = """
        TIME (UTC)            PID  SIGNAL   EXECUTABLE        TOP FRAME         ID
        2026-11-30 09:01:57  4242  SIGABRT  …op/bin/checkout  parse_digit (pa…  3f2b8c1e
        2026-11-29 23:59:59   987  SIGSEGV  …ec/shop/reindex  -                 00aa11bb

        """
        #expect(narrow == expectedNarrow)
    }

    /// Below the columns' minimum widths lines overflow rather than lose the time, pid, signal or id.
    @Test func widthLimitHasAFloor() {
        let text = ListRenderer.render(summaries, spool: "/s", style: Style(color: false, width: 20))
        #expect(text == ListRenderer.render(summaries, spool: "/s", style: Style(color: false, width: 80)))
    }

    /// Escape sequences in report strings are shown as text; non-ASCII names count one column per Character.
    @Test func hostileAndNonASCIIStrings() {
        let hostile = ReportSummary(time: "not a time", pid: 1, executable: "/opt/café/bin/ünïcode", signal: "SIGSEGV",
                                    code: "SEGV_MAPERR", topFrame: "evil\u{1B}]0;pwned\u{07} (e.c:1)", id: "ffffffff-0",
                                    app: nil)
        let text = ListRenderer.render([hostile, summaries[1]], spool: "/tmp/\u{1B}[2J", style: .plain)
        let expected = #"""
        TIME (UTC)           PID  KIND   SIGNAL   UNIT              EXECUTABLE                       TOP FRAME                     ID
        not a time             1  crash  SIGSEGV  -                 /opt/café/bin/ünïcode            evil\x1b]0;pwned\x07 (e.c:1)  ffffffff
        2026-11-29 23:59:59  987  crash  SIGSEGV  checkout.service  /usr/local/libexec/shop/reindex  -                             00aa11bb

        """#
        #expect(text == expected)
        #expect(!text.contains("\u{1B}"))
        #expect(ListRenderer.render([], spool: "/tmp/\u{1B}[2J", style: .plain) == #"No crash reports in /tmp/\x1b[2J.\#n"#)
    }
}
