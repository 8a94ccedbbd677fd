// HTMLBrowserTests.swift — `crashwatch export --format html` opened in a real browser: a real fixture's crash
// (segv_reraise: a handler re-raises after a NULL store) is captured by `crashwatch run`, exported as HTML, and
// loaded by headless Chromium (Debian's `chromium`, which `make test` installs). Chromium logs every console
// message — errors, uncaught exceptions, Content-Security-Policy violations — to stderr with `--enable-logging`
// as `…:CONSOLE…] "message"`: the page must log none. `--dump-dom` gives the document after its script ran:
// it must hold the crashed function and the original fault, and show that the script ran (the toolbar it
// unhides). The same report made hostile (markup and script in its function names, command line, annotations
// and breadcrumbs) must render as text: no element of its own, no script run, nothing logged. Skipped, saying
// why, without chromium.
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// A page loaded by headless Chromium: the document after load, and the console lines it logged.
struct BrowserPage {
    /// Chromium from Debian (`chromium`), nil when it is not installed.
    static let chromium = Paths.which("chromium")

    /// The serialized DOM after the page's scripts ran.
    let dom: String
    /// Chromium's log lines that carry a console message of the page.
    let console: [String]

    /// Loads the file at `path` in a fresh headless Chromium profile (no sandbox as root: it refuses to start).
    init(file path: String) throws {
        let profile = try TemporaryDirectory("cw-chromium", mode: 0o700)
        defer { profile.remove() }
        let chromium = try #require(Self.chromium)
        var arguments = ["--headless", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile.path)",
                         "--enable-logging=stderr", "--v=0", "--dump-dom"]
        if geteuid() == 0 { arguments.append("--no-sandbox") }
        let result = try run(chromium, arguments + ["file://\(path)"], timeout: 120)
        #expect(result.succeeded, "chromium: \(result.termination)\n\(result.stderr)")
        dom = result.stdout
        console = result.stderr.split(separator: "\n").map(String.init).filter { $0.contains(":CONSOLE") }
    }
}

@Suite(.serialized) struct HTMLBrowserTests {
    /// The report of a real segv_reraise crash, as JSON text.
    static func fixtureReport(in spool: TemporaryDirectory) throws -> String {
        let fixture = Fixture("segv_reraise")
        let supervised = try run(Paths.crashwatch, ["run", "--spool", spool.path, "--", Paths.fixture(fixture.name)])
        #expect(supervised.termination == fixture.expectedExit, "\(supervised.stderr)")
        let export = try run(Paths.crashwatch, ["export", "--spool", spool.path, "latest"])
        #expect(export.succeeded, "\(export.stderr)")
        return export.stdout
    }

    /// `crashwatch export --format html REPORT` written to `page.html` in `directory`; returns its path.
    static func exportHTML(_ report: String, spool: TemporaryDirectory) throws -> String {
        let result = try run(Paths.crashwatch, ["export", "--spool", spool.path, "--format", "html", report])
        #expect(result.succeeded && result.stderr.isEmpty, "\(result.stderr)")
        let page = spool.join("page.html")
        try Data(result.stdout.utf8).write(to: URL(fileURLWithPath: page))
        return page
    }

    @Test("a fixture's report opens in headless Chromium with no console message and shows the crashed function and the original fault",
          .enabled(if: BrowserPage.chromium != nil, "chromium is not installed (make test installs Debian's chromium)"))
    func fixtureReportInChromium() throws {
        let spool = try TemporaryDirectory("cw-html")
        defer { spool.remove() }
        let fixture = Fixture("segv_reraise")
        _ = try Self.fixtureReport(in: spool)
        let page = try BrowserPage(file: try Self.exportHTML("latest", spool: spool))
        #expect(page.console.isEmpty, "\(page.console)")
        let function = try #require(fixture.keys["CRASH-FUNCTION"])
        #expect(page.dom.contains("<section id=\"crashed-thread\">"))
        #expect(page.dom.contains(">\(function)"), "the crashed function \(function)")
        let original = "Original fault: \(fixture.keys["ORIGINAL-SIGNAL"] ?? "?") (\(fixture.keys["ORIGINAL-CODE"] ?? "?")) at \(fixture.keys["ORIGINAL-ADDR"] ?? "?")"
        #expect(page.dom.contains(original), "\(original)")
        #expect(page.dom.contains("<p id=\"toolbar\"><button"), "the page's script ran and showed its buttons")
    }

    @Test("a hostile report's markup stays text in the browser: no element added, no script run, nothing logged",
          .enabled(if: BrowserPage.chromium != nil, "chromium is not installed (make test installs Debian's chromium)"))
    func hostileReportInChromium() throws {
        let spool = try TemporaryDirectory("cw-html")
        defer { spool.remove() }
        let json = try Self.fixtureReport(in: spool)
        // Markup in every function name, in the command line, and in an annotation and a breadcrumb the app
        // declared (JSON-escaped: quotes as \").
        let markup = #"<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script><b>bold</b>"#
        let hostile = json.replacingOccurrences(of: "\"function\": \"", with: "\"function\": \"" + markup)
            .replacingOccurrences(of: "\"commandLine\": [", with: "\"commandLine\": [\"" + markup + "\", ")
            .replacingOccurrences(of: "\"annotations\": null", with: "\"annotations\": {\"" + markup + "\": \"" + markup + "\"}")
            .replacingOccurrences(of: "\"breadcrumbs\": null",
                                  with: "\"breadcrumbs\": [{\"time\": null, \"level\": \"" + markup + "\", \"message\": \"" + markup + "\"}]")
        #expect(hostile.contains("\"annotations\": {") && hostile.contains("\"breadcrumbs\": [{"), "the fixture's report held annotations or breadcrumbs of its own (null expected, to replace)")
        #expect(hostile != json)
        let file = spool.join("hostile.json")
        try Data(hostile.utf8).write(to: URL(fileURLWithPath: file))
        let page = try BrowserPage(file: try Self.exportHTML(file, spool: spool))
        #expect(page.console.isEmpty, "\(page.console)")
        #expect(!page.dom.contains("pwned</title>") && !page.dom.contains("<img") && !page.dom.contains("<b>"))
        #expect(page.dom.components(separatedBy: "<script").count == 2, "the page's own script only")
        #expect(page.dom.contains("&lt;img src=x onerror=\"document.title='pwned'\"&gt;&lt;script&gt;"), "the markup shown as text")
        #expect(page.dom.contains("<section id=\"annotations\">") && page.dom.contains("<section id=\"breadcrumbs\">"),
                "the annotation and the breadcrumb were rendered (as text)")
    }
}
