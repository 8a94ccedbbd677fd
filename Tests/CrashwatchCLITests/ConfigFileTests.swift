// ConfigFileTests.swift — the settings file: syntax, errors naming file and line, command line winning.
@testable import CrashwatchCLI
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
        #expect(throws: UsageError("/c.conf:2: unknown setting 'colour' (known: debuginfod, max-age, max-bytes, max-per-exe, max-reports, spool)")) {
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
