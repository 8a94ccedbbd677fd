// ShowRendererTests.swift — the `crashwatch show` page compared whole for the fixture, its coloured lines, the text
// export, and the edge cases: no in-app frame, no frames, no crashed thread, a redacted or hostile command line,
// hostile thread names, a deleted executable, a missed capture deadline.
import CrashwatchRender
import CrashwatchModel
import CrashwatchTestSupport
import Testing

/// The lines of `page` from the line equal to `heading` up to (not including) the next empty line.
private func section(_ page: String, _ heading: String) -> [String] {
    let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(of: heading) else { return [] }
    return Array(lines[start...].prefix { !$0.isEmpty })
}

/// The value of the header field `label` (`       Label: value`), or nil when the page has no such line.
private func field(_ page: String, _ label: String) -> String? {
    let prefix = String(repeating: " ", count: max(14 - label.count, 0)) + label + ": "
    return page.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
}

/// `ShowRenderer.render` and `TextExport.render` pages.
@Suite struct ShowRendererTests {
    /// Frames above the one a signal interrupted ran in the handler: each says so; the interrupted frame
    /// and those below it do not.
    @Test func handlerFramesAreMarked() {
        var report = ExportFixture.report
        report.threads[0].frames = [
            FrameRecord(index: 0, address: 0x7000, function: "abort", how: .context),
            FrameRecord(index: 1, address: 0x7100, function: "handler", how: .cfi),
            FrameRecord(index: 2, address: 0x7200, function: "__restore_rt", how: .cfi),
            FrameRecord(index: 3, address: 0x7300, function: "crash_here", how: .context),
            FrameRecord(index: 4, address: 0x7400, function: "main", how: .cfi),
        ]
        let page = ShowRenderer.render(report, style: .plain).split(separator: "\n").map(String.init)
        let marked = page.filter { $0.hasSuffix("[signal handler]") }
        #expect(marked.count == 3, "\(page)")
        #expect(marked.first?.contains("abort") == true && marked.last?.contains("__restore_rt") == true)
        #expect(page.contains { $0.contains("crash_here") && !$0.contains("[signal handler]") })
        report.signal.originalFault = nil
        #expect(!ShowRenderer.render(report, style: .plain).contains("[signal handler]"), "no handler ran without an original fault")
    }

    /// The whole plain page for the fixture.
    @Test func plainPage() {
        // The literal's last line is empty so the text ends in a newline.
        let expected = #"""
                Report: 3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13
                  Time: 2026-11-30 09:01:57.123 UTC (capture took 18.8 ms)
               Process: 4242 (checkout), parent 4200
            Executable: /opt/shop/bin/checkout
               Command: /opt/shop/bin/checkout --config /etc/shop/checkout.toml --banner 'it'\''s open'
             Directory: /srv/shop
                   App: checkout 3.1.0 (3.1.0+g1a2b3c)
                Signal: 6 (SIGABRT), code -6 (SI_TKILL), Aborted: sent by tkill() or raise() by pid 4242 uid 1000
        Original fault: SIGSEGV (SEGV_MAPERR) at 0x10 on thread 4242 at 2026-11-30 09:01:57.120 UTC
                  Host: build-01, Debian GNU/Linux 12, kernel 6.1.0-28-amd64, x86_64
                  Unit: checkout.service
           Environment: LANG=C.UTF-8
           Soft errors: 1
                        unwind (thread 4243): libunwind: no unwind info for 0x7f3a9c29d134

        Crashed thread 4242 "checkout"
          * #0 0x55812a401189 parse_digit (parse.c:12) in checkout [inlined]
          * #1 0x55812a401189 parse_amount (parse.c:40) in checkout [inlined]
          * #2 0x55812a401189 handle_request (server.c:88) in checkout
          * #3 0x55812a401203 main (main.c:17) in checkout
            #4 0x7f3a9c23b24a __libc_start_call_main in libc.so.6
            #5 0x7f3a9c23b305 ? in libc.so.6+0x27305
          * #6 0x55812a4010a1 _start in checkout
            Unwinding stopped: end of stack
            Registers:
                   rax 0x0                      rbx 0x7ffd5e3ca1f8           rcx 0x10
                   rsp 0x7ffd5e3ca0a0           rip 0x55812a401189        eflags 0x10246
              orig_rax 0xffffffffffffffff

        Original fault on thread 4242 at 2026-11-30 09:01:57.120 UTC
          * #0 0x55812a401189 parse_digit (parse.c:12) in checkout [inlined]
          * #1 0x55812a401189 parse_amount (parse.c:40) in checkout [inlined]
          * #2 0x55812a401189 handle_request (server.c:88) in checkout
            Registers:
              rip 0x55812a401189  rsp 0x7ffd5e3ca0f0

        Other threads (1)
        Thread 4243 "worker"
            #0 0x7f3a9c29ee96 __futex_abstimed_wait_common in libc.so.6
          * #1 0x55812a401310 shop::Queue::pop() (queue.cc:77) in checkout [via frame pointer]
            #2 0x7f3a9c29d134 start_thread in libc.so.6 [via stack scan]
            Unwinding stopped: no unwind info

        Images (* = in-app)
          * checkout   0x55812a400000  9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3  /opt/shop/bin/checkout
            libc.so.6  0x7f3a9c214000  c047672cae7964324658491e7dee26748ae5d2f8  /usr/lib/x86_64-linux-gnu/libc.so.6 [package deb libc6 2.36-9+deb12u9 amd64]

        """#
        #expect(ShowRenderer.render(ExportFixture.report, style: .plain) == expected)
    }

    /// The text export is the plain page; the width limit never changes a page.
    @Test func textExportIsThePlainPage() {
        let plain = ShowRenderer.render(ExportFixture.report, style: .plain)
        #expect(TextExport.render(ExportFixture.report) == plain)
        #expect(ShowRenderer.render(ExportFixture.report, style: Style(color: false, width: 40)) == plain)
        #expect(!plain.contains("\u{1B}"))
    }

    /// With colour: the signal bold red, headings and in-app frames and images bold; without it the same text.
    @Test func coloredLines() {
        let colored = ShowRenderer.render(ExportFixture.report, style: Style(color: true))
        let lines = colored.split(separator: "\n").map(String.init)
        let b = "\u{1B}[1m", red = "\u{1B}[1;31m", off = "\u{1B}[0m"
        #expect(lines.contains("        Signal: 6 (\(red)SIGABRT\(off)), code -6 (SI_TKILL), Aborted: sent by tkill() or raise() by pid 4242 uid 1000"))
        #expect(lines.contains("\(b)Crashed thread 4242 \"checkout\"\(off)"))
        #expect(lines.contains("  \(b)* #0 0x55812a401189 parse_digit (parse.c:12) in checkout [inlined]\(off)"))
        #expect(lines.contains("    #4 0x7f3a9c23b24a __libc_start_call_main in libc.so.6"))
        #expect(lines.contains("  \(b)* checkout\(off)   0x55812a400000  9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3  /opt/shop/bin/checkout"))
        let stripped = colored.replacing(red, with: "").replacing(b, with: "").replacing(off, with: "")
        #expect(stripped == ShowRenderer.render(ExportFixture.report, style: .plain))
    }

    /// No in-app image: no frame carries the marker, the images list none, and nothing is bold but headings.
    @Test func noInAppFrame() {
        let page = ShowRenderer.render(ExportFixture.olderReport, style: .plain)
        #expect(section(page, #"Crashed thread 4242 "checkout""#).prefix(8) == [
            #"Crashed thread 4242 "checkout""#,
            "    #0 0x55812a401189 parse_digit (parse.c:12) in checkout [inlined]",
            "    #1 0x55812a401189 parse_amount (parse.c:40) in checkout [inlined]",
            "    #2 0x55812a401189 handle_request (server.c:88) in checkout",
            "    #3 0x55812a401203 main (main.c:17) in checkout",
            "    #4 0x7f3a9c23b24a __libc_start_call_main in libc.so.6",
            "    #5 0x7f3a9c23b305 ? in libc.so.6+0x27305",
            "    #6 0x55812a4010a1 _start in checkout",
        ])
        #expect(section(page, "Images (* = in-app)") == [
            "Images (* = in-app)",
            "    checkout   0x55812a400000  9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3  /opt/shop/bin/checkout",
            "    libc.so.6  0x7f3a9c214000  c047672cae7964324658491e7dee26748ae5d2f8  /usr/lib/x86_64-linux-gnu/libc.so.6 [package deb libc6 2.36-9+deb12u9 amd64]",
        ])
        #expect(field(page, "Fault addr.") == "0x0")
        #expect(field(page, "Original fault") == nil)
        #expect(field(page, "App") == nil)
    }

    /// No frames and no registers anywhere: each thread says so; the original fault without a snapshot gets no section.
    @Test func noFrames() {
        var report = ExportFixture.report
        for index in report.threads.indices {
            report.threads[index].frames = []
            report.threads[index].registers = []
            report.threads[index].unwindStopReason = nil
        }
        report.signal.originalFault?.frames = []
        report.signal.originalFault?.registers = []
        report.images = []
        let page = ShowRenderer.render(report, style: .plain)
        let body = page.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("Crashed") }
        #expect(Array(body) == [
            #"Crashed thread 4242 "checkout""#,
            "    (no frames)",
            "",
            "Other threads (1)",
            #"Thread 4243 "worker""#,
            "    (no frames)",
            "",
        ])
    }

    /// Without a crashed thread (an abnormal exit) every thread is listed under `Threads`, and the kind is named.
    @Test func noCrashedThread() {
        var report = ExportFixture.report
        report.kind = .abnormalExit
        report.signal = SignalRecord(SignalInfo(signo: 9, code: 0x80))
        report.threads[0].crashed = false
        report.threads = [report.threads[0]]
        report.threads[0].frames = Array(report.threads[0].frames.prefix(1))
        let page = ShowRenderer.render(report, style: .plain)
        #expect(field(page, "Kind") == "abnormalExit")
        #expect(field(page, "Signal") == "9 (SIGKILL), code 128 (SI_KERNEL), Killed: sent by the kernel")
        #expect(!page.contains("Crashed thread"))
        #expect(section(page, "Threads (1)") == [
            "Threads (1)",
            #"Thread 4242 "checkout""#,
            "  * #0 0x55812a401189 parse_digit (parse.c:12) in checkout [inlined]",
        ])
    }

    /// A redacted command line keeps argv[0] (quoted as needed) and bare `<redacted>` placeholders.
    @Test func redactedCommandLine() {
        var report = ExportFixture.report
        report.process.redacted = true
        report.process.commandLine = ["/opt/shop/bin/check out", "<redacted>", "<redacted>"]
        #expect(field(ShowRenderer.render(report, style: .plain), "Command") == "'/opt/shop/bin/check out' <redacted> <redacted>")
        report.process.commandLine = []
        #expect(field(ShowRenderer.render(report, style: .plain), "Command") == "<redacted>")
        report.process.redacted = false
        #expect(field(ShowRenderer.render(report, style: .plain), "Command") == "<unknown>")
        report.process.commandLine = ["app", "<redacted>"]
        #expect(field(ShowRenderer.render(report, style: .plain), "Command") == "app '<redacted>'",
                "a literal <redacted> argument of an unredacted command is quoted")
    }

    /// Arguments are quoted the way a shell needs them; control characters are escaped, never printed.
    @Test func commandLineQuoting() {
        var report = ExportFixture.report
        report.process.commandLine = ["/bin/app", "", "a b", "x=1,y=2", "naïve", "two\nlines", "bell\u{07}", "$HOME", "it's",
                                      "no\u{A0}break"]
        let command = field(ShowRenderer.render(report, style: .plain), "Command")
        #expect(command == #"/bin/app '' 'a b' x=1,y=2 naïve $'two\nlines' $'bell\x07' '$HOME' 'it'\''s' 'no\#u{A0}break'"#)
    }

    /// Terminal escapes in names, paths and messages are written as visible text.
    @Test func hostileStrings() {
        var report = ExportFixture.report
        report.threads[1].name = "w\u{1B}[2J"
        report.process.comm = "c\u{9B}31m"
        report.threads[0].frames[0].function = "f\u{202E}dlrow"
        report.softErrors[0].message = "line one\nline two"
        let page = ShowRenderer.render(report, style: .plain)
        #expect(!page.contains("\u{1B}") && !page.contains("\u{9B}") && !page.contains("\u{202E}"))
        #expect(page.contains(#"Thread 4243 "w\x1b[2J""#))
        #expect(field(page, "Process") == #"4242 (c\x9b31m), parent 4200"#)
        #expect(page.contains(#"  * #0 0x55812a401189 f\u{202e}dlrow (parse.c:12) in checkout [inlined]"#))
        #expect(page.contains(#"unwind (thread 4243): line one\x0aline two"#))
    }

    /// A deleted executable, a missed deadline, extra capture errors and a package-less image without a build-id.
    @Test func headerVariations() {
        var report = ExportFixture.report
        report.images[0].deleted = true
        report.images[0].buildID = nil
        report.diagnostics.deadlineExceeded = true
        report.diagnostics.captureErrors = 3
        report.host.osVersion = nil
        report.process.app = AppRecord(release: "nightly")
        report.process.environment = ["B": "2", "A": "1"]
        report.process.cwd = nil
        report.process.systemdUnit = nil
        let page = ShowRenderer.render(report, style: .plain)
        #expect(field(page, "Executable") == "/opt/shop/bin/checkout (deleted)")
        #expect(field(page, "Time") == "2026-11-30 09:01:57.123 UTC (capture took 18.8 ms, deadline exceeded)")
        report.captureTime = "yesterday"
        report.captureDurationMs = .nan
        #expect(field(ShowRenderer.render(report, style: .plain), "Time") == "yesterday (capture took ? ms, deadline exceeded)")
        #expect(field(page, "Soft errors") == "1 (3 capture errors in all)")
        #expect(field(page, "Host") == "build-01, Debian GNU/Linux, kernel 6.1.0-28-amd64, x86_64")
        #expect(field(page, "App") == "nightly")
        #expect(field(page, "Directory") == nil && field(page, "Unit") == nil)
        #expect(page.contains("   Environment: A=1\n                B=2\n"))
        #expect(page.contains("  * checkout   0x55812a400000  -" + String(repeating: " ", count: 41) + "/opt/shop/bin/checkout (deleted)\n"),
                "a missing build-id is `-`, padded to the column")
    }
}

/// Choosing colour for a stream.
@Suite struct StyleTests {
    /// Colour needs a terminal, no non-empty `NO_COLOR`, and a `TERM` other than `dumb`.
    @Test func terminalDecision() {
        #expect(Style(isTerminal: true, environment: [:]).color)
        #expect(!Style(isTerminal: false, environment: [:]).color)
        #expect(!Style(isTerminal: true, environment: ["NO_COLOR": "1"]).color)
        #expect(Style(isTerminal: true, environment: ["NO_COLOR": ""]).color)
        #expect(!Style(isTerminal: true, environment: ["TERM": "dumb"]).color)
        #expect(Style(isTerminal: true, environment: ["TERM": "xterm-256color"], width: 120) == Style(color: true, width: 120))
    }
}
