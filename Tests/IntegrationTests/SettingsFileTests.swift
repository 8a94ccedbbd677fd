// SettingsFileTests.swift — `--config FILE` as the built binary reads it: a control character in a value is
// refused with the key and line, and no error prints a byte of the file (it may be one the caller may not
// read, such as /etc/shadow under a privileged wrapper); `run` fails open: a bad or unreadable file never stops
// the program it wraps.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct SettingsFileTests {
    private let secret = "s3cr3t-9f8e7d6c"

    /// Runs `crashwatch COMMAND --config FILE` where FILE holds `text`.
    private func withSettings(_ text: [UInt8], _ command: [String]) throws -> RunResult {
        let directory = try TemporaryDirectory("cw-settings")
        let path = "\(directory.path)/crashwatch.conf"
        try Data(text).write(to: URL(fileURLWithPath: path))
        return try run(Paths.crashwatch, command + ["--config", path, "--spool", directory.path])
    }

    @Test("a NUL or another control byte in a value is refused, naming the key and the line")
    func controlBytes() throws {
        for byte: UInt8 in [0x00, 0x1b, 0x7f] {
            let result = try withSettings(Array("max-reports = 3\nmax-bytes = 10".utf8) + [byte] + Array("M\n".utf8), ["prune"])
            #expect(result.termination == .exited(64), "\(result.stderr)")
            #expect(result.stderr.contains(":2: the value of 'max-bytes' holds a control character"), "\(result.stderr)")
        }
    }

    @Test("errors about the file never print its contents", arguments: [
        ["list"], ["prune"], ["ship", "--check"],
    ])
    func noEcho(_ command: [String]) throws {
        let files = ["root:$y$j9T$\(secret):19000:0:99999:7:::\n", "\(secret) = yes\n", "max-reports = \(secret)\n",
                     "max-bytes = \(secret)\n", "max-age = \(secret)\n", "endpoint = \(secret)\n", "headers = \(secret)\n",
                     "ca-file = /nonexistent/\(secret)\n", "timeout = \(secret)\n", "batch = \(secret)\n", "gzip = \(secret)\n",
                     "debuginfod = \(secret)\n", "sentry = https://\(secret)@h/x\n", "annotate = \(secret)\n"]
        for text in files {
            // ship reads its other settings once it has an endpoint: one comes first, on line 1.
            let prefix = command[0] == "ship" && !text.hasPrefix("endpoint") ? "endpoint = http://127.0.0.1:9\n" : ""
            let result = try withSettings(Array((prefix + text).utf8), command)
            // Every command reads the whole file; each checks the values it uses.
            let checkedBy: [String: [String]] = ["list": [], "prune": ["max-"],
                                                 "ship": ["endpoint", "headers", "ca-file", "timeout", "batch", "gzip", "sentry"]]
            let key = text.prefix { $0 != " " }
            if !ConfigFileKeys.all.contains(String(key)) || key == "debuginfod"
                || checkedBy[command[0], default: []].contains(where: { key.hasPrefix($0) }) {
                #expect(result.termination == .exited(64), "\(command) with \(text): \(result.stderr)")
                #expect(result.stderr.contains("crashwatch.conf:\(prefix.isEmpty ? 1 : 2): "), "\(command) with \(text): \(result.stderr)")
            }
            #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret), "\(command) with \(text): \(result.stderr)")
        }
    }

    @Test("run fails open: each kind of mistake in the settings file, or an unreadable one, is named and left out; the program runs, supervised with the defaults",
          arguments: ["max-repots = 3\n", "max-age = 30 days\n", "max-reports\n", "max-bytes = \"\"\n", "spool = /x # ours\n",
                      "debuginfod = ftp://x\n", "max-reports = 3\u{1b}\n", "\u{ff}\n", "annotate = region\n",
                      "annotate = a b=c\n", "annotation-deny = ,\n", "unreadable"])
    func runFailsOpen(_ mistake: String) throws {
        let directory = try TemporaryDirectory("cw-failopen")
        let spool = "\(directory.path)/spool"
        let path = mistake == "unreadable" ? "\(directory.path)/no-such.conf" : "\(directory.path)/crashwatch.conf"
        if mistake != "unreadable" {
            // Line 1 is good and must still count; the mistake is on line 2.
            let bytes = mistake == "\u{ff}\n" ? [0xff, 0x0a] : Array(mistake.utf8)
            try Data(Array("max-per-exe = 7\n".utf8) + bytes).write(to: URL(fileURLWithPath: path))
        }
        let result = try run(Paths.crashwatch, ["run", "--config", path, "--spool", spool, "--", Paths.fixture("null_deref")])
        #expect(result.termination == .signaled(11), "\(mistake): \(result.stderr)")
        let warning = result.crashwatchLines.filter { $0.contains("settings left out, their defaults used: ") }
        #expect(warning.count == 1, "\(mistake): \(result.stderr)")
        #expect(warning.first?.contains(mistake == "unreadable" ? "cannot read settings file \(path)" : "crashwatch.conf:2: ") == true,
                "\(mistake): \(result.stderr)")
        #expect(!(warning.first ?? "").contains("crashwatch.conf:1:"), "\(mistake): \(result.stderr)")
        // Supervised: the crash is reported in the spool the command line named.
        let reports = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".json") }
        #expect(reports.count == 1, "\(mistake): \(result.stderr)")
    }

    @Test("run: a mistake on the command line is still a usage error, and the program does not start")
    func commandLineStaysStrict() throws {
        let directory = try TemporaryDirectory("cw-strict")
        let marker = "\(directory.path)/started"
        let result = try run(Paths.crashwatch, ["run", "--max-reports", "x", "--", "/bin/touch", marker])
        #expect(result.termination == .exited(64), "\(result.stderr)")
        #expect(result.stderr.contains("--max-reports needs a whole number, not 'x'"))
        #expect(!FileManager.default.fileExists(atPath: marker))
    }
}

/// The settings file's keys (README "Settings file").
private enum ConfigFileKeys {
    static let all: Set<String> = ["spool", "max-reports", "max-bytes", "max-age", "max-per-exe", "debuginfod", "endpoint", "headers",
                                   "ca-file", "client-cert", "client-key", "timeout", "batch", "gzip", "max-body", "max-backoff",
                                   "sentry", "sentry-environment", "annotate", "annotation-deny"]
}
