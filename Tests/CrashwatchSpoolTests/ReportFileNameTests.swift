// ReportFileNameTests.swift — report file names: exact text, executable tags, round trips through parsing
// (legacy names without a tag included), time order, and refusal of everything the spool did not write.
@testable import CrashwatchSpool
import Foundation
import Testing

/// Report file names: their text, parsing, calendar arithmetic and order.
@Suite struct ReportFileNameTests {
    /// A report id given in uppercase, to show the name uses the lowercase form.
    static let id = UUID(uuidString: "0F8FAD5B-D9CB-469F-A165-70867728950E")!

    /// A known time, pid and id give exactly the documented name and temporary name.
    @Test func exactText() {
        // 2024-02-29T23:59:59Z is 1709251199; the sub-millisecond part is truncated.
        let name = ReportFileName(timeNanoseconds: 1_709_251_199_123_456_789, pid: 4242, executable: "/usr/sbin/nginx", id: Self.id)
        #expect(name.text == "20240229T235959.123Z-4242-nginx-0f8fad5b-d9cb-469f-a165-70867728950e.json")
        #expect(name.tag == "nginx")
        #expect(name.temporaryName == ".tmp-0f8fad5b-d9cb-469f-a165-70867728950e")
        #expect(name.timeNanoseconds == 1_709_251_199_123_000_000)
    }

    /// Times before the epoch and beyond Int64 nanoseconds are clamped; a negative pid becomes 0.
    @Test func epochAndLimits() {
        #expect(ReportFileName(timeNanoseconds: 0, pid: 1, executable: "/usr/bin/app", id: Self.id).timestampText == "19700101T000000.000Z")
        #expect(ReportFileName(timeNanoseconds: -5, pid: 1, executable: "/usr/bin/app", id: Self.id).timestampText == "19700101T000000.000Z")
        #expect(ReportFileName(timeNanoseconds: .max, pid: 1, executable: "/usr/bin/app", id: Self.id).timestampText == "22620411T234716.854Z")
        #expect(ReportFileName(timeNanoseconds: 0, pid: -3, executable: "/usr/bin/app", id: Self.id).pid == 0)
    }

    /// Executable paths become tags of `[A-Za-z0-9_.+]`, at most 32 bytes, `unknown` when empty.
    @Test(arguments: [
        ("/usr/bin/python3.11", "python3.11"),
        ("/opt/app/bin/my server", "my_server"),  // space
        ("/opt/app/bin/crash-loop", "crash_loop"),  // a dash would make the name ambiguous
        ("/opt/app/bin/café", "caf__"),  // é is two UTF-8 bytes
        ("/opt/app/bin/日本", "______"),
        ("/usr/bin/g++", "g++"),
        ("relative/tool", "tool"),
        ("tool", "tool"),
        ("/usr/bin/app (deleted)", "app"),
        ("/usr/bin/app/", "app"),
        ("/memfd:payload (deleted)", "memfd_payload"),
        ("", "unknown"),
        ("/", "unknown"),
        ("/usr/bin/" + String(repeating: "x", count: 40), String(repeating: "x", count: 32)),
        ("/usr/bin/a\nb\tc:d", "a_b_c_d"),
    ])
    func tags(executable: String, tag: String) throws {
        #expect(ReportFileName.tag(forExecutable: executable) == tag)
        let name = ReportFileName(timeNanoseconds: 1_709_251_199_123_000_000, pid: 7, executable: executable, id: Self.id)
        #expect(name.tag == tag)
        #expect(name.text == "20240229T235959.123Z-7-\(tag)-0f8fad5b-d9cb-469f-a165-70867728950e.json")
        let parsed = try #require(ReportFileName(parsing: name.text))
        #expect(parsed == name)
        #expect(parsed.text == name.text)
    }

    /// Names written before tags existed still parse, with no tag, and print back unchanged.
    @Test func legacyNamesParse() throws {
        let text = "20240229T235959.123Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json"
        let name = try #require(ReportFileName(parsing: text))
        #expect(name.tag == nil)
        #expect(name.pid == 4242)
        #expect(name.idText == "0f8fad5b-d9cb-469f-a165-70867728950e")
        #expect(name.text == text)
        // A legacy name and a tagged name of the same crash are different names, ordered legacy first.
        let tagged = ReportFileName(timeNanoseconds: name.timeNanoseconds, pid: 4242, executable: "app", id: Self.id)
        #expect(tagged != name)
        #expect(name < tagged)
    }

    /// Names at calendar edges parse back to the same value and the same text.
    @Test(arguments: [
        Int64(0), 951_782_400_000, 951_868_800_000, 951_868_799_999,  // 2000-02-29, 2000-03-01 and just before
        4_107_456_000_000,  // 2100-02-28 (2100 is not a leap year)
        1_709_251_199_123, 1_735_689_599_999, 1_735_689_600_000,  // leap day, new year's eve, new year
        9_223_372_036_854,  // 2262-04-11T23:47:16.854Z, the last millisecond Int64 nanoseconds can hold
    ])
    func roundTrip(milliseconds: Int64) throws {
        // The largest pid and the longest tag: the longest name there is.
        let executable = "/bin/" + String(repeating: "z", count: 32)
        let name = ReportFileName(timeNanoseconds: milliseconds * 1_000_000, pid: 2_147_483_647, executable: executable, id: Self.id)
        #expect(name.text.utf8.count == 106)
        let parsed = try #require(ReportFileName(parsing: name.text))
        #expect(parsed == name)
        #expect(parsed.text == name.text)
        #expect(parsed.timeMilliseconds == milliseconds)
    }

    /// Names carry the same calendar date as Foundation's Gregorian UTC calendar from 1970 to 2259 (sampled;
    /// nanoseconds in an Int64 end in 2262).
    @Test func calendarAgreesWithFoundation() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for days in stride(from: Int64(0), to: 105_900, by: 1) where days % 97 == 0 || days < 1500 {
            let name = ReportFileName(timeNanoseconds: days * 86_400_000_000_000, pid: 1, executable: "/a", id: testID(0))
            let components = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86400))
            let expected = String(format: "%04d%02d%02dT000000.000Z", components.year!, components.month!, components.day!)
            #expect(name.timestampText == expected)
            #expect(ReportFileName(parsing: name.text)?.timeMilliseconds == days * 86_400_000)
        }
    }

    /// Sorting names as text gives the same order as sorting them by time.
    @Test func namesSortByTime() {
        let times: [Int64] = [1_709_251_199_123, 5, 1_000_000_000_000, 999_999_999_999, 9_223_372_036_854, 1_709_251_199_122]
        let names = times.enumerated().map { ReportFileName(timeNanoseconds: $1 * 1_000_000, pid: Int32(100_000 - $0), executable: "/usr/bin/app", id: testID($0)) }
        #expect(names.map(\.text).sorted() == names.sorted().map(\.text))
        #expect(names.sorted().map(\.timeMilliseconds) == times.sorted())
    }

    /// Anything the spool did not write, including near misses, is not a report name.
    @Test(arguments: [
        "",
        "notes.txt",
        ".tmp-0f8fad5b-d9cb-469f-a165-70867728950e",
        "20240229T235959.123Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json.bak",
        "20240229T235959.123Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e",
        "20240229T235959.123Z-4242-0F8FAD5B-D9CB-469F-A165-70867728950E.json",  // not the canonical lowercase
        "20240229T235959.123Z-04242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // leading zero
        "20240229T235959.123Z--4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // sign
        "20240229T235959.123Z-2147483648-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // beyond Int32
        "20240229T235959.123Z--0f8fad5b-d9cb-469f-a165-70867728950e.json",  // no pid
        "20230229T235959.123Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // 2023 is not a leap year
        "20241301T000000.000Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // month 13
        "20240100T000000.000Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // day 0
        "20240101T240000.000Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // hour 24
        "20240101T236000.000Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // minute 60
        "20240101T235960.000Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // second 60
        "19691231T235959.999Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // before the epoch
        "22620411T234716.855Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // beyond Int64 nanoseconds
        "99991231T235959.999Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",
        "2024-02-29T23:59:59.123Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // RFC 3339 with colons
        "20240229T235959.123-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // no Z
        "20240229T235959.123Z-4242-0f8fad5bd9cb-469f-a165-70867728950e0.json",  // hyphen moved
        "20240229T235959.123Z-4242-0f8fad5b-d9cb-469f-a165-70867728950g.json",  // not hex
        "20240229T235959.12Z-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // short milliseconds
        "20240229T235959.123Z-42a2-0f8fad5b-d9cb-469f-a165-70867728950e.json",
        "20240229T235959.123Z-4242-0f8fad5b-d9cb-469f-a165-70867728950é.json",
        "20240229T235959.123Z-4242--0f8fad5b-d9cb-469f-a165-70867728950e.json",  // empty tag
        "20240229T235959.123Z-4242-a-b-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // dash in the tag
        "20240229T235959.123Z-4242-a b-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // space in the tag
        "20240229T235959.123Z-4242-a/b-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // slash in the tag
        "20240229T235959.123Z-4242-é-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // non-ASCII tag
        "20240229T235959.123Z-4242-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // 33
        "20240229T235959.123Z-app-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // tag without pid
        "20240229T235959.123Z-app-4242-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // tag before pid
        "20240229T235959.123Z-04242-app-0f8fad5b-d9cb-469f-a165-70867728950e.json",  // leading zero, tagged
        "20240229T235959.123Z-4242-app-0f8fad5b-d9cb-469f-a165-70867728950e.json.4242-99",  // a claim
        "../20240229T235959.123Z-4242-app-0f8fad5b-d9cb-469f-a165-70867728950e.json",
    ])
    func rejectsForeignNames(text: String) {
        #expect(ReportFileName(parsing: text) == nil)
    }

    /// Only `.tmp-` followed by a canonical UUID counts as a temporary report file.
    @Test func recognizesTemporaryNames() {
        let name = ReportFileName(timeNanoseconds: 0, pid: 1, executable: "/usr/bin/app", id: Self.id)
        #expect(ReportFileName.isTemporaryName(name.temporaryName))
        #expect(!ReportFileName.isTemporaryName(".tmp-"))
        #expect(!ReportFileName.isTemporaryName(".tmp-notes"))
        #expect(!ReportFileName.isTemporaryName(name.text))
        #expect(!ReportFileName.isTemporaryName(name.temporaryName + "x"))
    }
}
