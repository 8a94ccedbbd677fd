// ConfigFileTests.swift — the settings file: syntax, errors naming file and line, command line winning; the
// spool's place from --spool, $CRASHWATCH_SPOOL and the file, in that order.
@testable import CrashwatchCLI
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
        #expect(throws: UsageError("/c.conf:2: unknown setting 'colour' (known: batch, ca-file, client-cert, client-key, debuginfod, endpoint, gzip, headers, max-age, max-backoff, max-body, max-bytes, max-per-exe, max-reports, spool, timeout)")) {
            try ConfigFile(parsing: "spool = /x\ncolour = red\n", path: "/c.conf")
        }
        #expect(throws: UsageError("/c.conf:1: expected 'key = value', got 'spool /x'")) {
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

    @Test("text that is not UTF-8 is refused with its line, never repaired into another path")
    func invalidUTF8() {
        let bytes = Array("max-reports = 3\n".utf8) + Array("spool = /var/".utf8) + [0xff, 0xfe] + Array("\n".utf8)
        #expect(throws: UsageError("/c.conf:2: not valid UTF-8")) { try ConfigFile(parsing: bytes, path: "/c.conf") }
    }
}

@Suite struct SpoolPrecedenceTests {
    /// A settings file naming `/conf/spool`, in a fresh temporary directory; returns its path.
    private func settingsFile() throws -> String {
        let path = "/tmp/crashwatch-settings-\(UInt64.random(in: 0...UInt64.max)).conf"
        guard let file = fopen(path, "w") else { throw UsageError("cannot create \(path)") }
        fputs("spool = /conf/spool\nmax-reports = 7\n", file)
        fclose(file)
        return path
    }

    @Test("--spool beats $CRASHWATCH_SPOOL, which beats the settings file: a unit's Environment= wins over the shared file")
    func precedence() throws {
        let config = try settingsFile()
        defer { unlink(config) }
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
