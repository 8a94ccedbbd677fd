// LimitTextTests.swift — sizes (`10M`) and durations (`1d12h`) as the commands accept them, as tables of
// text and value, and of text and the error it must give.
import CrashwatchSpool
import Testing

/// Parsing sizes and durations for retention options.
@Suite struct LimitTextTests {
    /// Sizes: plain bytes, K/M/G/T in powers of 1024, any case, optional B or iB, spaces around.
    @Test(arguments: [
        ("0", Int64(0)), ("4096", 4096), ("100B", 100), ("100b", 100),
        ("1K", 1024), ("1k", 1024), ("512KB", 524_288), ("2KiB", 2048),
        ("10M", 10_485_760), ("10m", 10_485_760), ("10MB", 10_485_760), ("10MiB", 10_485_760),
        ("2G", 2_147_483_648), ("1T", 1_099_511_627_776), ("8388607T", 9_223_370_937_343_148_032),
        (" 7M ", 7_340_032), ("9223372036854775807", Int64.max), ("007K", 7168),
    ])
    func sizes(text: String, value: Int64) throws {
        #expect(try ByteSize.parse(text) == value)
    }

    /// Sizes that are refused, and how.
    @Test(arguments: [
        ("", LimitParseError.empty), ("   ", .empty),
        ("-1", .negative(text: "-1")), ("-5M", .negative(text: "-5M")),
        ("9223372036854775808", .overflow(text: "9223372036854775808")),
        ("8388608T", .overflow(text: "8388608T")), ("99999999999999999999K", .overflow(text: "99999999999999999999K")),
        ("M", .invalid(text: "M", expected: "")), ("10Q", .invalid(text: "10Q", expected: "")),
        ("1.5G", .invalid(text: "1.5G", expected: "")), ("10 M", .invalid(text: "10 M", expected: "")),
        ("+10", .invalid(text: "+10", expected: "")), ("10MBB", .invalid(text: "10MBB", expected: "")),
        ("0x10", .invalid(text: "0x10", expected: "")), ("１０", .invalid(text: "１０", expected: "")),
        ("10KiBi", .invalid(text: "10KiBi", expected: "")),
    ])
    func badSizes(text: String, error: LimitParseError) {
        #expect(sameKind(Result { () throws(LimitParseError) in try ByteSize.parse(text) }, error))
    }

    /// Durations: s/m/h/d/w parts that add up, a lone number as seconds, spaces between parts.
    @Test(arguments: [
        ("0", Int64(0)), ("90", 90), ("90s", 90), ("15m", 900), ("12h", 43_200), ("7d", 604_800),
        ("2w", 1_209_600), ("1d12h", 129_600), ("1h30m", 5400), ("1h 30m", 5400), ("30m1h", 5400),
        ("1w1d1h1m1s", 694_861), (" 3d ", 259_200), ("0d", 0), ("9223372036854775807s", Int64.max),
    ])
    func durations(text: String, seconds: Int64) throws {
        #expect(try DurationText.parse(text) == .seconds(seconds))
    }

    /// Durations that are refused, and how.
    @Test(arguments: [
        ("", LimitParseError.empty), (" ", .empty),
        ("-7d", .negative(text: "-7d")),
        ("9223372036854775808", .overflow(text: "9223372036854775808")),
        ("15250284452472w", .overflow(text: "15250284452472w")),
        ("9223372036854775807s1s", .overflow(text: "9223372036854775807s1s")),
        ("d", .invalid(text: "d", expected: "")), ("7x", .invalid(text: "7x", expected: "")),
        ("7D", .invalid(text: "7D", expected: "")), ("1.5h", .invalid(text: "1.5h", expected: "")),
        ("1d12", .invalid(text: "1d12", expected: "")), ("7 d", .invalid(text: "7 d", expected: "")),
        ("1y", .invalid(text: "1y", expected: "")), ("1dd", .invalid(text: "1dd", expected: "")),
    ])
    func badDurations(text: String, error: LimitParseError) {
        #expect(sameKind(Result { () throws(LimitParseError) in try DurationText.parse(text) }, error))
    }

    /// Error messages quote the text and say what was expected.
    @Test func messages() {
        #expect(LimitParseError.empty.description == "empty value")
        #expect(throws: LimitParseError.invalid(text: "10Q", expected: "a size (bytes, or a number with K, M, G or T, e.g. 10M)")) {
            try ByteSize.parse("10Q")
        }
        let error = LimitParseError.invalid(text: "7x", expected: "a duration (a number with s, m, h, d or w, e.g. 7d or 1d12h)")
        #expect(error.description == "\"7x\" is not a duration (a number with s, m, h, d or w, e.g. 7d or 1d12h)")
        #expect(LimitParseError.negative(text: "-1").description == "\"-1\" is negative")
        #expect(LimitParseError.overflow(text: "99T").description == "\"99T\" is too large")
    }

    /// Whether a parse failed with the same kind of error as `expected` (and the same text; `expected`'s
    /// explanation is not compared, the messages test checks it).
    private func sameKind<Value>(_ result: Result<Value, LimitParseError>, _ expected: LimitParseError) -> Bool {
        guard case .failure(let error) = result else { return false }
        switch (error, expected) {
        case (.invalid(let text, _), .invalid(let expectedText, _)): return text == expectedText
        default: return error == expected
        }
    }
}
