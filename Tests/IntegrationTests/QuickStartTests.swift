// QuickStartTests.swift — the README's quick start, run as written: every ```sh block of its "Quick start"
// section, in order, with the built binary first on PATH and a private spool (CRASHWATCH_SPOOL), must exit as
// the block says (0, or the status a `# exits N` comment names) and print what the ```text block right after
// it shows. Blocks marked `<!-- quickstart: package -->` (installing the package, a systemd drop-in) need a
// root with the package and a systemd: Tests/systemd/test_package.py runs those, taken from the README the
// same way. So the quick start cannot drift from what the tests run.
import CrashwatchTestSupport
import Foundation
import Testing

/// One ```sh block of the README's quick start, with the output shown after it.
struct QuickStartBlock: CustomStringConvertible {
    /// The shell text, as the README has it.
    let script: String
    /// The lines of the ```text block that follows it (empty when none does).
    let expected: [String]
    /// Whether the block needs the installed package or a systemd (`<!-- quickstart: package -->`).
    let needsPackage: Bool
    /// The README line the block starts on, for messages.
    let line: Int

    /// The exit status the block's `# exits N` comment names, else 0.
    var expectedStatus: Int32 {
        script.firstMatch(of: #/#.*\bexits (\d+)/#).flatMap { Int32($0.1) } ?? 0
    }

    var description: String { "README.md:\(line)" }

    /// The quick start's blocks: from the `## Quick start` heading to the next `## ` heading.
    static func parse(_ readme: String) -> [QuickStartBlock] {
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "## Quick start") else { return [] }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.count
        var blocks: [QuickStartBlock] = []
        var index = start + 1
        /// The lines of the fenced block opening at `open`, and the index after its closing fence.
        func fenced(_ open: Int) -> ([String], Int) {
            var body: [String] = [], i = open + 1
            while i < end, lines[i] != "```" { body.append(lines[i]); i += 1 }
            return (body, i + 1)
        }
        while index < end {
            guard lines[index] == "```sh" else { index += 1; continue }
            let marker = lines[start..<index].last { !$0.isEmpty } ?? ""
            var (body, next) = fenced(index)
            var expected: [String] = []
            var after = next
            while after < end, lines[after].isEmpty { after += 1 }
            if after < end, lines[after] == "```text" { (expected, next) = fenced(after) }
            blocks.append(QuickStartBlock(script: body.joined(separator: "\n"), expected: expected,
                                          needsPackage: marker == "<!-- quickstart: package -->", line: index + 1))
            body = []
            index = next
        }
        return blocks
    }

    /// Whether `output` shows every expected line, in order: runs of blanks count as one, leading and trailing
    /// ones none, and `…` stands for any text. Returns the first expected line not found, nil when all are.
    func missingLine(in output: String) -> String? {
        func squeezed(_ text: some StringProtocol) -> String {
            text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        }
        var outputLines = output.split(separator: "\n").map(squeezed)[...]
        for line in expected.map(squeezed) where !line.isEmpty {
            let pattern = line.split(separator: "…", omittingEmptySubsequences: false)
                .map { NSRegularExpression.escapedPattern(for: String($0)) }.joined(separator: ".*")
            guard let regex = try? Regex("^" + pattern + "$"),
                  let found = outputLines.firstIndex(where: { $0.wholeMatch(of: regex) != nil })
            else { return line }
            outputLines = outputLines[(found + 1)...]
        }
        return nil
    }
}

@Suite(.serialized) struct QuickStartTests {
    static let blocks = QuickStartBlock.parse((try? String(contentsOfFile: "\(Paths.root)/README.md", encoding: .utf8)) ?? "")

    /// Stands in for the OTLP/HTTP collector the quick start ships to (`http://localhost:4318`): answers every
    /// POST with 200, runs the block (argv[1]) with that address pointing at it, exits with the block's status,
    /// and fails a block that succeeded without sending it anything.
    static let collector = #"""
    import http.server, os, signal, subprocess, sys, threading
    received = []
    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.append(self.path)
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
        def log_message(self, *args): pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    block = sys.argv[1].replace("localhost:4318", "127.0.0.1:%d" % server.server_address[1])
    status = subprocess.run(["/bin/sh", "-ec", "exec 2>&1\n" + block]).returncode
    status = 128 - status if status < 0 else status
    if status == 0 and not received:
        print("collector: the block sent nothing"); status = 1
    sys.exit(status)
    """#

    @Test("the quick start has blocks run here and blocks run by the package suite")
    func shape() {
        #expect(Self.blocks.contains { !$0.needsPackage && $0.expectedStatus == 139 }, "a wrapped crash")
        #expect(Self.blocks.contains { $0.needsPackage && $0.script.contains("apt-get install") }, "the package's install")
        #expect(Self.blocks.contains { $0.needsPackage && $0.script.contains(".service.d/") }, "a drop-in")
        #expect(Self.blocks.contains { $0.script.contains("localhost:4318") }, "shipping")
    }

    @Test("every quick-start block exits as it says and prints what the README shows")
    func runEveryBlock() throws {
        let spool = try TemporaryDirectory("cw-quickstart", mode: 0o700)
        defer { spool.remove() }
        let bin = URL(fileURLWithPath: Paths.crashwatch).deletingLastPathComponent().path
        let environment = [
            "PATH": "\(bin):\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")",
            "CRASHWATCH_SPOOL": spool.path, "NO_COLOR": "1", "PAGER": "cat", "LC_ALL": "C.UTF-8",
        ]
        for block in Self.blocks where !block.needsPackage {
            let result = block.script.contains("localhost:4318")
                ? try run("/usr/bin/python3", ["-c", Self.collector, block.script], workingDirectory: spool.path, environment: environment)
                : try run("/bin/sh", ["-ec", "exec 2>&1\n" + block.script], workingDirectory: spool.path, environment: environment)
            let output = result.stdout + result.stderr
            #expect(result.termination == .exited(block.expectedStatus), "\(block): \(block.script)\n\(output)")
            if let missing = block.missingLine(in: output) {
                Issue.record("\(block): the README shows “\(missing)”, the block printed:\n\(output)")
            }
        }
    }

    @Test("the matcher: … is any text, blanks are squeezed, lines come in order")
    func matcher() {
        let block = QuickStartBlock(script: "", expected: ["crashwatch: sh[…] crashed: SIGSEGV …", "", "b   c"],
                                    needsPackage: false, line: 1)
        #expect(block.missingLine(in: "x\ncrashwatch: sh[12] crashed: SIGSEGV (SI_USER)\n  b c\n") == nil)
        #expect(block.missingLine(in: "b c\ncrashwatch: sh[12] crashed: SIGSEGV (SI_USER)\n") == "b c")
        #expect(block.missingLine(in: "crashwatch: sh[12] crashed: SIGBUS x\nb c") == "crashwatch: sh[…] crashed: SIGSEGV …")
    }
}
