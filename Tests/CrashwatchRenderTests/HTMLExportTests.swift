// HTMLExportTests.swift — the `export --format html` page: every section present for the sample reports (and
// left out when it has nothing to say), in-app rows highlighted, the page self-contained (no URL, the policy's
// hashes those of its own style and script, recomputed with sha256sum), and a hostile report — markup, script,
// quotes, escape sequences and bidirectional overrides in every string — rendered as inert text.
import CrashwatchModel
import CrashwatchRender
import CrashwatchTestSupport
import Foundation
import Testing

/// The text between the first `start` and the next `end` after it, or nil.
private func between(_ page: String, _ start: String, _ end: String) -> String? {
    guard let open = page.range(of: start), let close = page.range(of: end, range: open.upperBound..<page.endIndex) else {
        return nil
    }
    return String(page[open.upperBound..<close.lowerBound])
}

/// Every markup tag of a page outside its style and script: the text from each `<` to the next `>`.
private func tags(_ page: String) -> [String] {
    var page = page
    for (start, end) in [("<style>", "</style>"), ("<script>", "</script>")] {
        if let inner = between(page, start, end) { page = page.replacingOccurrences(of: start + inner + end, with: "") }
    }
    var tags: [String] = []
    var rest = page[...]
    while let open = rest.firstIndex(of: "<") {
        guard let close = rest[open...].firstIndex(of: ">") else {
            tags.append(String(rest[open...]))
            break
        }
        tags.append(String(rest[open...close]))
        rest = rest[rest.index(after: close)...]
    }
    return tags
}

/// The tags and attributes the page is made of; anything else in a page is markup a report injected.
private var allowedTag: Regex<(Substring, Substring, Substring, Substring)> { #/<(/?)(html|head|meta|title|style|body|header|main|footer|section|h1|h2|h3|p|dl|dt|dd|div|table|thead|tbody|tr|th|td|span|details|summary|ul|li|button|script)((?: (?:id|class|title|open|hidden|type|lang|charset|name|content|http-equiv)(?:="[^"<>]*")?)*)>/# }

/// A string carrying every kind of trouble a hostile report can hold.
private let payload = "</td></table><script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
    + "'\"&amp;\u{1B}[31m\u{202E}end"

/// `ExportFixture.report` with the payload in every string a person would see.
private func hostileReport() -> CrashReport {
    var report = ExportFixture.report
    let bad = payload
    report.id = bad
    report.kind = ReportKind(rawValue: bad)
    report.captureTime = bad
    report.crashwatchVersion = bad
    report.source = bad
    report.coreFile = bad
    report.runID = bad
    report.hangReportID = bad
    report.hang = HangRecord(source: bad, startTime: bad, durationMs: 5, watchdogTimeoutMs: nil)
    report.exit = ExitRecord(reason: bad, source: bad, evidence: bad)
    report.signal.name = bad
    report.signal.codeName = bad
    report.signal.description = bad
    report.signal.originalFault?.name = bad
    report.signal.originalFault?.description = bad
    report.signal.originalFault?.time = bad
    report.process = ProcessRecord(pid: 1, ppid: 0, executable: bad, commandLine: [bad, bad], cwd: bad, uid: 0, gid: 0,
                                   startTime: bad, comm: bad, cgroup: bad, systemdUnit: bad, systemdInvocationID: bad,
                                   app: AppRecord(name: bad, version: bad, release: bad), environment: [bad: bad])
    report.host = HostRecord(hostname: bad, kernelRelease: bad, kernelVersion: bad, osName: bad, osVersion: bad,
                             architecture: bad, bootID: bad)
    for thread in report.threads.indices {
        report.threads[thread].name = bad
        report.threads[thread].unwindStopReason = bad
        report.threads[thread].registers = report.threads[thread].registers.map { RegisterValue(bad, $0.value) }
        for frame in report.threads[thread].frames.indices {
            report.threads[thread].frames[frame].function = bad
            report.threads[thread].frames[frame].symbol = bad + "raw"
            report.threads[thread].frames[frame].file = bad
        }
    }
    report.images = report.images.map { image in
        var image = image
        image.path = bad
        image.name = bad
        image.buildID = bad
        image.architecture = bad
        image.package = PackageRecord(type: bad, name: bad, version: bad, architecture: bad)
        return image
    }
    report.softErrors = [SoftError(stage: bad, tid: 3, image: bad, message: bad)]
    report.fingerprint = FingerprintRecord(algorithm: bad, value: bad, kind: bad, signal: bad, program: bad, frames: [bad, bad])
    report.annotations = [bad: bad]
    report.breadcrumbs = [BreadcrumbRecord(time: bad, level: bad, message: bad)]
    return report
}

/// `HTMLExport.render` pages.
@Suite struct HTMLExportTests {
    /// The section ids of a page, in order.
    static func sections(_ page: String) -> [String] {
        page.matches(of: #/<section id="([a-z-]+)">/#).map { String($0.1) }
    }

    @Test("every section is there, in order, for the sample reports", arguments: ["ExportFixture", "SampleReport"])
    func everySection(sample: String) throws {
        let report = sample == "ExportFixture" ? ExportFixture.report : SampleReport.report
        let page = HTMLExport.render(report)
        let fingerprint = report.fingerprint == nil ? [] : ["fingerprint"]
        let context = (report.annotations?.isEmpty == false ? ["annotations"] : [])
            + (report.breadcrumbs?.isEmpty == false ? ["breadcrumbs"] : [])
        #expect(Self.sections(page) == ["crashed-thread", "faults"] + context + fingerprint
            + ["threads", "images", "soft-errors", "process", "host", "capture"])
        if let value = report.fingerprint?.value {
            #expect(page.contains("<dd class=\"mono\">\(value)</dd>"))
        }
        #expect(page.contains("<h1 id=\"headline\">"))
        #expect(page.contains("<dl class=\"facts\" id=\"summary\">"))
        // The crashed thread comes first, with its frames' functions and source positions, and open registers.
        let crashed = try #require(between(page, "<section id=\"crashed-thread\">", "</section>"))
        for frame in try #require(report.crashedThread).frames {
            if let function = frame.function { #expect(crashed.contains(">\(function)"), "\(function)") }
            if let file = frame.file, let line = frame.line { #expect(crashed.contains("\(file):\(line)")) }
        }
        #expect(crashed.contains("<details class=\"registers\" open=\"\">"))
        // The original fault, with its stack.
        let original = try #require(report.signal.originalFault)
        let faults = try #require(between(page, "<section id=\"faults\">", "</section>"))
        #expect(faults.contains("Original fault: \(original.name) (\(original.codeName))"))
        #expect(faults.contains("<table class=\"frames\">"))
        // Other threads folded, named with their top frame.
        let threads = try #require(between(page, "<section id=\"threads\">", "</section>"))
        for thread in report.threads where !thread.crashed {
            #expect(threads.contains("<details class=\"thread\" id=\"thread-\(thread.tid)\"><summary>Thread \(thread.tid)"))
        }
        #expect(!threads.contains("<details class=\"thread\" id=\"thread-\(report.crashedThread!.tid)\""))
        // Every image with its build-id; every soft error.
        for image in report.images { #expect(page.contains(image.buildID ?? "none") && page.contains(image.path)) }
        for error in report.softErrors { #expect(page.contains(error.message)) }
        #expect(page.contains(report.host.kernelRelease) && page.contains(report.process.executable))
    }

    @Test("the fingerprint section shows the value, the algorithm and what was hashed; none without a fingerprint")
    func fingerprintSection() throws {
        let report = ExportFixture.report.fingerprinted()
        let fingerprint = try #require(report.fingerprint)
        let section = try #require(between(HTMLExport.render(report), "<section id=\"fingerprint\">", "</section>"))
        #expect(section.contains("<dd class=\"mono\">\(fingerprint.value)</dd>") && section.contains(fingerprint.algorithm))
        #expect(section.contains("\(fingerprint.kind), \(fingerprint.signal), program \(fingerprint.program)"))
        #expect(!fingerprint.frames.isEmpty && section.contains(fingerprint.frames.joined(separator: ", ")))
        var without = report
        without.fingerprint = nil
        #expect(!HTMLExport.render(without).contains("<section id=\"fingerprint\">"))
    }

    @Test("in-app frames and images are the highlighted rows, and only they")
    func inAppRowsHighlighted() {
        let report = ExportFixture.report
        let page = HTMLExport.render(report)
        let inApp: (FrameRecord) -> Bool = { frame in frame.imageIndex.map { report.images[$0].inApp } ?? false }
        let frames = report.threads.flatMap(\.frames) + (report.signal.originalFault?.frames ?? [])
        let expected = frames.filter(inApp).count + report.images.filter(\.inApp).count
        #expect(page.components(separatedBy: "<tr class=\"app\">").count - 1 == expected)
        #expect(expected > 0 && expected < frames.count + report.images.count)
    }

    @Test("sections with nothing to say are left out: no original fault, no other thread, no soft error")
    func emptySectionsLeftOut() {
        var report = ExportFixture.report
        report.signal.originalFault = nil
        report.threads = report.threads.filter(\.crashed)
        report.softErrors = []
        report.diagnostics.captureErrors = 0
        #expect(Self.sections(HTMLExport.render(report)) == ["crashed-thread", "images", "process", "host", "capture"])
        report.threads = []
        #expect(Self.sections(HTMLExport.render(report)) == ["images", "process", "host", "capture"])
    }

    @Test("frames above the one the signal interrupted are marked as the signal handler's")
    func handlerFramesMarked() {
        var report = ExportFixture.report
        report.threads[0].frames = [
            FrameRecord(index: 0, address: 0x7000, function: "abort", how: .context),
            FrameRecord(index: 1, address: 0x7100, function: "handler", how: .cfi),
            FrameRecord(index: 2, address: 0x7200, function: "crash_here", how: .context),
        ]
        let rows = HTMLExport.render(report).split(separator: "\n").filter { $0.hasPrefix("<tr") }
        #expect(rows.filter { $0.contains("[signal handler]") }.count == 2)
        #expect(rows.contains { $0.contains(">crash_here") && !$0.contains("[signal handler]") })
    }

    @Test("every fault whose handler still ran has its own block: the original first, then the active ones")
    func activeFaults() throws {
        var report = ExportFixture.report
        let original = try #require(report.signal.originalFault)
        var nested = original
        nested.codeName = "SEGV_ACCERR"
        nested.faultAddress = 0x7f00_dead_0000
        nested.frames = [FrameRecord(index: 0, address: 0x7000, function: "probe_guard", how: .context)]
        report.signal.activeFaults = [original, nested]
        let page = HTMLExport.render(report)
        let faults = try #require(between(page, "<section id=\"faults\">", "</section>"))
        #expect(faults.contains("<h2>Original fault and active faults (2)</h2>"))
        let first = try #require(faults.range(of: "Original fault: SIGSEGV (SEGV_MAPERR) at 0x10"))
        let second = try #require(faults.range(of: "Active fault 2: SIGSEGV (SEGV_ACCERR) at 0x7f00dead0000"))
        #expect(first.upperBound < second.lowerBound)
        #expect(faults.components(separatedBy: "<div class=\"fault\">").count == 3 && faults.contains(">probe_guard"))
    }

    @Test("a hang report says how long, has no signal line, and lists its threads as threads")
    func hangReport() {
        var report = ExportFixture.report
        report.kind = .hang
        report.signal = .none
        report.hang = HangRecord(source: "watchdog", startTime: "2026-11-30T09:01:50.000Z", durationMs: 7123, watchdogTimeoutMs: 5000)
        report.threads = report.threads.map { var thread = $0; thread.crashed = false; return thread }
        let page = HTMLExport.render(report)
        #expect(page.contains("Hang report · "))
        #expect(page.contains("hung: no watchdog ping for 7123 ms"))
        #expect(!page.contains("<dt>Signal</dt>"))
        #expect(page.contains("<h2>Threads (2)</h2>"))
    }

    @Test("the page loads nothing: no URL, no source, no font; only its own style and script, by hash")
    func selfContained() throws {
        let page = HTMLExport.render(ExportFixture.report)
        for reference in ["http:", "https:", "src=", "href=", "url(", "@import", "@font-face", "<link", "<img", "<iframe"] {
            #expect(!page.contains(reference), "\(reference)")
        }
        #expect(page.components(separatedBy: "<script").count == 2 && page.components(separatedBy: "<style").count == 2)
        let style = try #require(between(page, "<style>", "</style>"))
        let script = try #require(between(page, "<script>", "</script>"))
        let policy = try #require(between(page, "http-equiv=\"Content-Security-Policy\" content=\"", "\""))
        #expect(policy.hasPrefix("default-src 'none';"))
        #expect(policy.contains("style-src 'sha256-\(try Self.sha256Base64(style))'"), "\(policy)")
        #expect(policy.contains("script-src 'sha256-\(try Self.sha256Base64(script))'"), "\(policy)")
    }

    /// The SHA-256 of `text`'s UTF-8, base64: what a CSP hash source holds. Computed by coreutils' sha256sum.
    static func sha256Base64(_ text: String) throws -> String {
        let directory = try TemporaryDirectory("cw-html")
        defer { directory.remove() }
        let file = directory.join("text")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let result = try Subprocess.run(try #require(Paths.which("sha256sum")), [file])
        let hex = try #require(result.stdout.split(separator: " ").first)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        #expect(bytes.count == 32)
        return Data(bytes).base64EncodedString()
    }

    @Test("a hostile report cannot add markup: every tag is the page's own, every string is shown as text")
    func hostileReportIsText() {
        let page = HTMLExport.render(hostileReport())
        for tag in tags(page) {
            #expect(tag.wholeMatch(of: allowedTag) != nil || tag == "<!DOCTYPE html>", "\(tag)")
        }
        #expect(page.components(separatedBy: "<script").count == 2, "one script: the page's own")
        #expect(!page.contains("<img") && !page.contains("pwned'<") && !page.contains("\u{1B}") && !page.contains("\u{202E}"))
        // The payload is there, as visible text: escaped markup, quotes and ampersands, the controls as \x escapes.
        let shown = "&lt;/td&gt;&lt;/table&gt;&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"
            + "&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;&#39;&quot;&amp;amp;\\x1b[31m\\u{202e}end"
        #expect(page.components(separatedBy: shown).count > 40, "the payload shown in every place it was put")
        #expect(page.contains("<title>") && between(page, "<title>", "</title>")?.contains("<") == false)
    }

    @Test("a frame's raw symbol is its tooltip when it differs from the function name")
    func rawSymbolTooltip() {
        let page = HTMLExport.render(ExportFixture.report)
        #expect(page.contains("<td class=\"function\" title=\"_ZN4shop5Queue3popEv\">shop::Queue::pop()"))
        #expect(page.contains("<td class=\"function\">handle_request + 0x19"))
    }
}
