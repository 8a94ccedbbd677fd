// ConfigFileTests.swift — the settings file: syntax, errors naming file and line, command line winning; the
// spool's place from --spool, $CRASHWATCH_SPOOL and the file, in that order.
@testable import CrashwatchCLI
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

@Suite struct ConfigFileTests {
    @Test func parsesKeysCommentsAndQuotes() throws {
        let config = try ConfigFile(parsing: """
            # crashwatch settings
            spool = "/srv/crash reports"

              max-reports=20
            max-bytes = 100M
            max-age = 7d\r
            max-per-exe = 5
            max-reports = 30
            """, path: "/etc/crashwatch.conf")
        #expect(config.values == ["spool": "/srv/crash reports", "max-reports": "30", "max-bytes": "100M", "max-age": "7d",
                                  "max-per-exe": "5"])
    }

    @Test func errorsNameFileAndLine() {
        #expect(throws: UsageError("/c.conf:2: unknown setting (the known ones: annotate, annotation-deny, batch, ca-file, client-cert, client-key, debuginfod, endpoint, gzip, headers, max-age, max-backoff, max-body, max-bytes, max-per-exe, max-reports, sentry, sentry-environment, spool, timeout)")) {
            try ConfigFile(parsing: "spool = /x\ncolour = red\n", path: "/c.conf")
        }
        #expect(throws: UsageError("/c.conf:1: not a 'key = value' line (it has no '=')")) {
            try ConfigFile(parsing: "spool /x", path: "/c.conf")
        }
        #expect(throws: UsageError("/c.conf:1: 'max-age' has no value")) {
            try ConfigFile(parsing: "max-age =  ", path: "/c.conf")
        }
    }

    @Test func commandLineWins() throws {
        let config = try ConfigFile(parsing: "spool = /from/file\nmax-reports = 9\n", path: "f")
        let parsed = try parseArguments(["--spool", "/from/cli"], specs: [OptionSpec("spool", value: "DIR", help: "")],
                                        operandsEndOptions: false)
        #expect(config.value("spool", overriddenBy: parsed) == "/from/cli")
        #expect(config.value("max-reports", overriddenBy: parsed) == "9")
        #expect(config.value("max-age", overriddenBy: parsed) == nil)
    }
}

@Suite struct ConfigFileHardeningTests {
    @Test("an inline '# comment' is refused, not made part of the value; a quoted value may hold ' #'")
    func inlineComment() throws {
        #expect(throws: UsageError("/c.conf:2: '#' starts a comment only at the start of a line; quote the value if it holds ' #'")) {
            try ConfigFile(parsing: "max-reports = 9\nspool = /var/crash # ours\n", path: "/c.conf")
        }
        let quoted = try ConfigFile(parsing: "spool = \"/srv/a #b\"\n# a comment line\n", path: "/c.conf")
        #expect(quoted.values["spool"] == "/srv/a #b")
        #expect(try ConfigFile(parsing: "spool = /srv/a#b\n", path: "/c.conf").values["spool"] == "/srv/a#b")
    }

    @Test("NUL and other control characters in a value are refused, naming the key and the line",
          arguments: ["\u{0}", "\u{1}", "\t", "\r", "\u{1B}", "\u{7F}", "\u{85}"])
    func controlCharacters(_ control: String) {
        let code = String(control.unicodeScalars.first!.value, radix: 16, uppercase: true)
        let expected = "/c.conf:2: the value of 'spool' holds a control character (U+\(String(repeating: "0", count: 4 - code.count) + code)); values are one line of text"
        #expect(throws: UsageError(expected)) { try ConfigFile(parsing: "max-reports = 3\nspool = /var/a\(control)b\n", path: "/c.conf") }
        #expect(throws: UsageError(expected)) { try ConfigFile(parsing: "max-reports = 3\nspool = \"/var/a\(control)b\"\n", path: "/c.conf") }
        // As bytes, the way a file is read.
        #expect(throws: UsageError(expected)) {
            try ConfigFile(parsing: Array("max-reports = 3\nspool = /var/a\(control)b\n".utf8), path: "/c.conf")
        }
    }

    @Test("an error never quotes the file: a secret on a line that is not a setting, an unknown key, a bad value")
    func errorsDoNotEchoTheFile() throws {
        let secret = "s3cr3t-hash-9f8e7d"
        for text in ["root:$y$\(secret):19000:0:99999:7:::\n", "\(secret) = 1\n", "max-reports = 3\nspool \(secret)\n",
                     "debuginfod = \(secret)\n"] {
            #expect {
                try ConfigFile(parsing: text, path: "/etc/shadow")
            } throws: { error in
                let message = (error as? UsageError)?.message ?? ""
                return message.hasPrefix("/etc/shadow:") && !message.contains(secret)
            }
        }
        // Values the file holds and a command later refuses: named by key and line, not quoted.
        let parsed = try parseArguments([], specs: SpoolSettings.retentionSpecs, operandsEndOptions: false)
        let count = try ConfigFile(parsing: "spool = /x\nmax-reports = \(secret)\n", path: "/etc/shadow")
        #expect(throws: UsageError("/etc/shadow:2: the value of 'max-reports' is not a whole number", settingsKey: "max-reports")) {
            try SpoolSettings(spool: "/x", config: count).retention(parsed)
        }
        let age = try ConfigFile(parsing: "spool = /x\n\nmax-age = 1\(secret)\n", path: "/etc/shadow")
        #expect(throws: UsageError("/etc/shadow:3: the value of 'max-age' is not a duration of at least 1m, such as 12h, 7d or 1d12h",
                                  settingsKey: "max-age")) {
            try SpoolSettings(spool: "/x", config: age).retention(parsed)
        }
        // The same value on the command line is the caller's own: quoted.
        let given = try parseArguments(["--max-reports", "x1"], specs: SpoolSettings.retentionSpecs, operandsEndOptions: false)
        #expect(throws: UsageError("--max-reports needs a whole number, not 'x1'")) {
            try SpoolSettings(spool: "/x", config: try ConfigFile(parsing: "spool = /x\n", path: "/c.conf")).retention(given)
        }
    }

    @Test("text that is not UTF-8 is refused with its line, never repaired into another path")
    func invalidUTF8() {
        let bytes = Array("max-reports = 3\n".utf8) + Array("spool = /var/".utf8) + [0xff, 0xfe] + Array("\n".utf8)
        #expect(throws: UsageError("/c.conf:2: not valid UTF-8")) { try ConfigFile(parsing: bytes, path: "/c.conf") }
    }
}

@Suite struct SpoolPrecedenceTests {
    /// A settings file naming `/conf/spool`, in a fresh temporary directory.
    private func settingsFile(in directory: TemporaryDirectory) throws -> String {
        let path = directory.join("crashwatch.conf")
        try "spool = /conf/spool\nmax-reports = 7\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("--spool beats $CRASHWATCH_SPOOL, which beats the settings file: a unit's Environment= wins over the shared file")
    func precedence() throws {
        let directory = try TemporaryDirectory("crashwatch-settings")
        defer { directory.remove() }
        let config = try settingsFile(in: directory)
        let environment = ["CRASHWATCH_SPOOL": "/env/spool", "HOME": "/home/ann"]
        let withOption = try parseArguments(["--config", config, "--spool", "/opt/x"], specs: SpoolSettings.locationSpecs,
                                            operandsEndOptions: false)
        #expect(try SpoolSettings(withOption, environment: environment).spool == "/opt/x")
        let plain = try parseArguments(["--config", config], specs: SpoolSettings.locationSpecs, operandsEndOptions: false)
        #expect(try SpoolSettings(plain, environment: environment).spool == "/env/spool")
        #expect(try SpoolSettings(plain, environment: ["CRASHWATCH_SPOOL": "", "HOME": "/home/ann"]).spool == "/conf/spool")
        #expect(try SpoolSettings(plain, environment: ["HOME": "/home/ann"]).spool == "/conf/spool")
        // The file's other settings are read whichever spool wins.
        #expect(try SpoolSettings(plain, environment: environment).config.values["max-reports"] == "7")
    }
}
