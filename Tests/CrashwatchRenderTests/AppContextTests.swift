// AppContextTests.swift — the app's annotations and breadcrumbs on the show page, in the text export and in the HTML
// export: their sections whole and where they stand, the newest breadcrumbs only (with how many earlier ones were
// left out), times relative to the capture, a report with none or with annotations only, and hostile keys,
// values, levels and messages shown as visible escapes (terminal) or as text (HTML).
import CrashwatchModel
import CrashwatchRender
import CrashwatchTestSupport
import Foundation
import Testing

/// The lines of `page` from the line equal to `heading` up to (not including) the next empty line.
private func section(_ page: String, _ heading: String) -> [String] {
    let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(of: heading) else { return [] }
    return Array(lines[start...].prefix { !$0.isEmpty })
}

/// The page's section headings (the lines that follow an empty line), in order.
private func headings(_ page: String) -> [String] {
    let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    return zip(lines, lines.dropFirst()).filter { $0.0.isEmpty && !$0.1.isEmpty }.map(\.1)
}

/// ExportFixture's report (captured at 09:01:57.123) with three annotations, one redacted, and three breadcrumbs,
/// the last with no time the app could vouch for.
private let annotated: CrashReport = {
    var report = ExportFixture.report
    report.annotations = ["request_id": "7f3a-19", "region": "eu-west-1", "session_token": "<redacted>"]
    report.breadcrumbs = [
        BreadcrumbRecord(time: "2026-11-30T09:01:55.919Z", level: "info", message: "GET /orders/42"),
        BreadcrumbRecord(time: "2026-11-30T09:01:57.019Z", level: "warning", message: "cache miss for user 42"),
        BreadcrumbRecord(time: nil, level: "unknown", message: "clock said 1970"),
    ]
    return report
}()

@Suite struct AppContextShowTests {
    @Test("the show page has an Annotations and a Breadcrumbs section, keys sorted and aligned, times relative to the capture")
    func sectionsWhole() {
        let page = ShowRenderer.render(annotated, style: .plain)
        #expect(section(page, "Annotations (3)") == [
            "Annotations (3)",
            "  region        = eu-west-1",
            "  request_id    = 7f3a-19",
            "  session_token = <redacted>",
        ])
        #expect(section(page, "Breadcrumbs (3)") == [
            "Breadcrumbs (3)",
            "  -1.204s  info     GET /orders/42",
            "  -0.104s  warning  cache miss for user 42",
            "        ?  unknown  clock said 1970",
        ])
    }

    @Test("the app's context stands after where it died (crashed thread, original fault) and before the other threads")
    func placement() {
        let page = ShowRenderer.render(annotated, style: .plain)
        #expect(headings(page) == [#"Crashed thread 4242 "checkout""#, "Original fault on thread 4242 at 2026-11-30 09:01:57.120 UTC",
                                   "Annotations (3)", "Breadcrumbs (3)", "Other threads (1)", "Images (* = in-app)"])
        #expect(TextExport.render(annotated) == page, "the text export is the plain page, context included")
    }

    @Test("only the newest 20 breadcrumbs are listed, oldest first, after how many earlier ones were left out")
    func newestBreadcrumbs() throws {
        var report = ExportFixture.report
        let captured = try #require(RFC3339.parse(report.captureTime))
        report.breadcrumbs = (0..<45).map { step in
            BreadcrumbRecord(time: RFC3339.format(nanosecondsSinceEpoch: captured - Int64(45 - step) * 250_000_000),
                             level: "debug", message: "step \(step)")
        }
        let lines = section(ShowRenderer.render(report, style: .plain), "Breadcrumbs (45)")
        #expect(lines.count == 22, "\(lines)")
        #expect(lines.dropFirst().first == "  (25 earlier)")
        #expect(lines.dropFirst(2).map { String($0.split(separator: "  ").last!) } == (25..<45).map { "step \($0)" })
        #expect(lines.dropFirst(2).first == "  -5.000s  debug  step 25")
        #expect(lines.last == "  -0.250s  debug  step 44")
    }

    @Test("show --breadcrumbs N lists the newest N; 0 none (no section); Int.max every one")
    func breadcrumbCount() {
        var report = ExportFixture.report
        report.breadcrumbs = (0..<30).map { BreadcrumbRecord(time: nil, level: "info", message: "step \($0)") }
        let one = section(ShowRenderer.render(report, style: .plain, breadcrumbs: 1), "Breadcrumbs (30)")
        #expect(one == ["Breadcrumbs (30)", "  (29 earlier)", "  ?  info  step 29"])
        #expect(!ShowRenderer.render(report, style: .plain, breadcrumbs: 0).contains("Breadcrumbs"))
        let all = section(ShowRenderer.render(report, style: .plain, breadcrumbs: .max), "Breadcrumbs (30)")
        #expect(all.count == 31 && all[1] == "  ?  info  step 0")
        #expect(ShowRenderer.render(report, style: .plain) == ShowRenderer.render(report, style: .plain, breadcrumbs: 20))
    }

    @Test("a time after the capture (the app's clock ahead) is signed +, an unreadable one is ?")
    func timesAfterTheCaptureAndUnreadable() {
        var report = ExportFixture.report
        report.breadcrumbs = [BreadcrumbRecord(time: "2026-11-30T09:01:57.133Z", level: "fatal", message: "late"),
                              BreadcrumbRecord(time: "not a time", level: "error", message: "odd"),
                              BreadcrumbRecord(time: "2026-11-30T08:01:57.123Z", level: "info", message: "an hour before")]
        #expect(section(ShowRenderer.render(report, style: .plain), "Breadcrumbs (3)") == [
            "Breadcrumbs (3)",
            "     +0.010s  fatal  late",
            "           ?  error  odd",
            "  -3600.000s  info   an hour before",
        ])
    }

    @Test("no annotations and no breadcrumbs, or empty ones: no section; annotations alone: no Breadcrumbs section")
    func noneAndAnnotationsOnly() {
        var report = ExportFixture.report
        let plain = ShowRenderer.render(report, style: .plain)
        #expect(!plain.contains("Annotations") && !plain.contains("Breadcrumbs"))
        report.annotations = [:]
        report.breadcrumbs = []
        #expect(ShowRenderer.render(report, style: .plain) == plain)
        report.annotations = ["build": "3.1.0-rc2"]
        let page = ShowRenderer.render(report, style: .plain)
        #expect(section(page, "Annotations (1)") == ["Annotations (1)", "  build = 3.1.0-rc2"])
        #expect(!page.contains("Breadcrumbs"))
    }

    @Test("a long key does not push every value: keys align up to 32 columns")
    func longKeys() {
        var report = ExportFixture.report
        let long = String(repeating: "k", count: 40)
        report.annotations = [long: "1", "a": "2"]
        #expect(section(ShowRenderer.render(report, style: .plain), "Annotations (2)") == [
            "Annotations (2)",
            "  a" + String(repeating: " ", count: 31) + " = 2",
            "  " + long + " = 1",
        ])
    }

    @Test("--brief shows neither annotations nor breadcrumbs: it is where the process died and nothing else")
    func briefLeavesThemOut() {
        let brief = ShowRenderer.renderBrief(annotated, style: .plain)
        #expect(!brief.contains("Annotations") && !brief.contains("Breadcrumbs") && !brief.contains("eu-west-1"))
    }

    @Test("control characters and terminal escapes in keys, values, levels and messages are shown as visible escapes")
    func hostileStrings() {
        var report = ExportFixture.report
        report.annotations = ["k\u{1B}[2J": "v\nnext", "bidi": "a\u{202E}b"]
        report.breadcrumbs = [BreadcrumbRecord(time: "2026-11-30T09:01:57.000Z", level: "i\u{07}", message: "m\u{9B}31m\r\n")]
        let page = ShowRenderer.render(report, style: Style(color: true))
        let stripped = page.replacing("\u{1B}[1m", with: "").replacing("\u{1B}[1;31m", with: "").replacing("\u{1B}[0m", with: "")
        #expect(!stripped.contains("\u{1B}") && !page.contains("\u{9B}") && !page.contains("\u{202E}") && !page.contains("\u{07}"))
        #expect(section(stripped, "Annotations (2)") == ["Annotations (2)", #"  bidi     = a\u{202e}b"#, #"  k\x1b[2J = v\x0anext"#])
        #expect(section(stripped, "Breadcrumbs (1)") == ["Breadcrumbs (1)", #"  -0.123s  i\x07  m\x9b31m\x0d\x0a"#])
    }
}

@Suite struct AppContextHTMLTests {
    /// The text between the first `start` and the next `end` after it, or nil.
    func between(_ page: String, _ start: String, _ end: String) -> String? {
        guard let open = page.range(of: start), let close = page.range(of: end, range: open.upperBound..<page.endIndex) else {
            return nil
        }
        return String(page[open.upperBound..<close.lowerBound])
    }

    @Test("the HTML page has the annotations and breadcrumbs sections after the faults, each value as text")
    func sections() throws {
        let page = HTMLExport.render(annotated)
        let ids = page.matches(of: #/<section id="([a-z-]+)">/#).map { String($0.1) }
        #expect(ids == ["crashed-thread", "faults", "annotations", "breadcrumbs", "threads", "images", "soft-errors", "process", "host", "capture"])
        let annotations = try #require(between(page, "<section id=\"annotations\">", "</section>"))
        #expect(annotations.contains("<h2>Annotations (3)</h2>"))
        #expect(annotations.contains("<dt>region</dt><dd class=\"mono\">eu-west-1</dd>\n<dt>request_id</dt><dd class=\"mono\">7f3a-19</dd>\n"
            + "<dt>session_token</dt><dd class=\"mono\">&lt;redacted&gt;</dd>"))
        let breadcrumbs = try #require(between(page, "<section id=\"breadcrumbs\">", "</section>"))
        #expect(breadcrumbs.contains("<tr><td class=\"time\" title=\"2026-11-30 09:01:55.919 UTC\">-1.204s</td><td class=\"level\">info</td>"
            + "<td class=\"message\">GET /orders/42</td></tr>"))
        #expect(breadcrumbs.contains("<tr><td class=\"time\">?</td><td class=\"level\">unknown</td><td class=\"message\">clock said 1970</td></tr>"))
        #expect(!breadcrumbs.contains("earlier"))
    }

    @Test("the HTML page lists the newest 20 breadcrumbs and says how many earlier ones it leaves out; none: no section")
    func newestAndNone() throws {
        var report = ExportFixture.report
        #expect(!HTMLExport.render(report).contains("<section id=\"breadcrumbs\">"))
        #expect(!HTMLExport.render(report).contains("<section id=\"annotations\">"))
        report.breadcrumbs = (0..<30).map { BreadcrumbRecord(time: nil, level: "info", message: "step \($0)") }
        let breadcrumbs = try #require(between(HTMLExport.render(report), "<section id=\"breadcrumbs\">", "</section>"))
        #expect(breadcrumbs.contains("<h2>Breadcrumbs (30)</h2>") && breadcrumbs.contains("<p class=\"muted\">10 earlier, not shown.</p>"))
        #expect(breadcrumbs.components(separatedBy: "<td class=\"message\">").count == 21)
        #expect(!breadcrumbs.contains(">step 9<") && breadcrumbs.contains(">step 10<") && breadcrumbs.contains(">step 29<"))
    }

    @Test("markup in annotations and breadcrumbs stays text: escaped, never a tag of the page")
    func hostileIsText() throws {
        var report = ExportFixture.report
        let bad = "</td><script>alert(1)</script>\u{1B}[31m\"'&"
        report.annotations = [bad: bad]
        report.breadcrumbs = [BreadcrumbRecord(time: bad, level: bad, message: bad)]
        let page = HTMLExport.render(report)
        #expect(page.components(separatedBy: "<script").count == 2, "one script: the page's own")
        let shown = "&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m&quot;&#39;&amp;"
        let context = try #require(between(page, "<section id=\"annotations\">", "<section id=\"threads\">"))
        #expect(context.components(separatedBy: shown).count == 6, "key, value, time tooltip, level and message: \(context)")
        #expect(!page.contains("\u{1B}"))
    }
}
