// ProcStatTests.swift — the one `/proc/PID/stat` parser and the one bounded decimal parser, from text.
import CrashwatchModel
import CrashwatchSystem
import Testing

@Suite struct ProcStatTests {
    /// A stat line whose comm holds spaces and parentheses; field N holds N * 10 but where set below.
    static func line(comm: String = "a) b (c", state: String = "S", set: [Int: String] = [:]) -> String {
        var fields = (4...52).map { String($0 * 10) }
        for (number, value) in set { fields[number - 4] = value }
        return "4242 (\(comm)) \(state) " + fields.joined(separator: " ") + "\n"
    }

    @Test func fieldsAfterTheLastParenthesis() throws {
        let stat = try #require(ProcStat(text: Self.line(set: [22: "1234567", 48: "140737488347136"])))
        #expect(stat.state == UInt8(ascii: "S"))
        #expect(stat.number(4) == 40)
        #expect(stat.number(22) == 1_234_567)
        #expect(stat.number(48) == 140_737_488_347_136)
        #expect(stat.number(52) == 520)
        #expect(stat.field(53) == nil && stat.number(53) == nil)
        #expect(stat.field(2) == nil)
    }

    @Test func zombieStateAndNegativeFields() throws {
        let stat = try #require(ProcStat(text: Self.line(state: "Z", set: [16: "-2"])))
        #expect(stat.state == UInt8(ascii: "Z"))
        #expect(stat.field(16).map { Array($0) } == Array("-2".utf8))
        #expect(stat.number(16) == nil)
    }

    @Test func notAStatLine() {
        #expect(ProcStat(text: "garbage") == nil)
        #expect(ProcStat(text: "4242 (a)")?.state == nil)
        #expect(ProcessClock.startTicks(statText: "4242 (a) S 1 2") == nil)
        #expect(ProcessClock.startTicks(statText: Self.line(set: [22: "99"])) == 99)
    }

    @Test func decimalNumbersAreBounded() {
        #expect(decimalNumber("0") == 0)
        #expect(decimalNumber("18446744073709551615") == UInt64.max)
        #expect(decimalNumber("18446744073709551616") == nil)
        #expect(decimalNumber("000000000000000000001") == nil)  // 21 digits
        #expect(decimalNumber("") == nil && decimalNumber("+1") == nil && decimalNumber("-1") == nil && decimalNumber(" 1") == nil)
        #expect(decimalNumber("12345", maxDigits: 4) == nil && decimalNumber("1234", maxDigits: 4) == 1234)
        #expect(decimalNumber("007") == 7 && decimalNumber("007", leadingZeros: false) == nil)
        #expect(decimalNumber("0", leadingZeros: false) == 0)
    }
}
