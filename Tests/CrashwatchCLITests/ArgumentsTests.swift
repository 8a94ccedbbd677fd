// ArgumentsTests.swift — crashwatch's own option parser: spellings, operands, errors.
@testable import CrashwatchCLI
import Testing

@Suite struct ArgumentsTests {
    let specs = [
        OptionSpec("no-follow-forks", help: "flag"),
        OptionSpec("spool", value: "DIR", help: "value"),
        OptionSpec("app-root", value: "DIR", repeatable: true, help: "repeatable"),
        OptionSpec("help", short: "h", help: "help"),
        OptionSpec("output", short: "o", value: "FILE", help: "short value"),
    ]

    @Test func commandEndsOptions() throws {
        let parsed = try parseArguments(["--no-follow-forks", "./app", "--spool", "x"], specs: specs, operandsEndOptions: true)
        #expect(parsed.has("no-follow-forks"))
        #expect(parsed.operands == ["./app", "--spool", "x"])
        #expect(parsed.value("spool") == nil)
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try parseArguments(["--spool=/s", "--", "--help", "x"], specs: specs, operandsEndOptions: true)
        #expect(parsed.value("spool") == "/s")
        #expect(parsed.operands == ["--help", "x"])
        #expect(!parsed.has("help"))
    }

    @Test func valueSpellings() throws {
        let parsed = try parseArguments(["--spool", "/a", "-o", "out", "--app-root=/x", "--app-root", "/y"],
                                        specs: specs, operandsEndOptions: false)
        #expect(parsed.value("spool") == "/a")
        #expect(parsed.value("output") == "out")
        #expect(parsed.all("app-root") == ["/x", "/y"])
        let attached = try parseArguments(["-oout", "-h"], specs: specs, operandsEndOptions: false)
        #expect(attached.value("output") == "out")
        #expect(attached.has("help"))
    }

    @Test func operandsInterleaveWhenAllowed() throws {
        let parsed = try parseArguments(["a", "--spool", "/s", "b"], specs: specs, operandsEndOptions: false)
        #expect(parsed.operands == ["a", "b"])
        #expect(parsed.value("spool") == "/s")
    }

    @Test func errorsNameTheProblem() {
        #expect(throws: UsageError("unknown option '--bogus'")) {
            try parseArguments(["--bogus"], specs: specs, operandsEndOptions: true)
        }
        #expect(throws: UsageError("unknown option '-x'")) {
            try parseArguments(["-x"], specs: specs, operandsEndOptions: true)
        }
        #expect(throws: UsageError("option '--spool' needs a value (DIR)")) {
            try parseArguments(["--spool"], specs: specs, operandsEndOptions: true)
        }
        #expect(throws: UsageError("option '--no-follow-forks=1' takes no value")) {
            try parseArguments(["--no-follow-forks=1"], specs: specs, operandsEndOptions: true)
        }
        #expect(throws: UsageError("option '--spool' given more than once")) {
            try parseArguments(["--spool", "a", "--spool", "b"], specs: specs, operandsEndOptions: true)
        }
    }

    @Test func helpListsEveryOption() {
        let text = renderOptions(specs)
        for spec in specs { #expect(text.contains("--\(spec.name)")) }
        #expect(text.contains("-o, --output FILE"))
        #expect(text.contains("(repeatable)"))
    }

    @Test func loneDashIsAnOperand() {
        // A single-dash operand like "-" is an operand, not an option.
        #expect((try? parseArguments(["-"], specs: specs, operandsEndOptions: true))?.operands == ["-"])
    }
}
