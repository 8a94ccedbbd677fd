// JSONSyntaxTests.swift — the one-pass well-formedness check the supervisor applies to a worker's report.
import CrashwatchModel
import Testing

@Suite struct JSONSyntaxTests {
    @Test("well-formed documents pass", arguments: [
        #"{}"#, #"[]"#, #" {"a": [1, -2.5e+3, 0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} "#,
        #""é 🦀""#, #"0"#, #"-0.0E-1"#, "{\"a\":{\"b\":{\"c\":[[[]]]}}}\n",
    ])
    func wellFormed(_ text: String) {
        #expect(JSONSyntax.isWellFormed(Array(text.utf8)), "\(text)")
    }

    @Test("malformed documents fail", arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\"}", "{\"a\":1,}", "{a:1}", "01", "1.", "1e", "-", "+1", ".5",
        "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12g4\"", "\"tab\tin\"", "{} {}", "[1 2]", "{\"a\" 1}",
    ])
    func malformed(_ text: String) {
        #expect(!JSONSyntax.isWellFormed(Array(text.utf8)), "\(text)")
    }

    @Test("invalid UTF-8 in a string, and nesting past the limit, fail")
    func bytesAndDepth() {
        #expect(!JSONSyntax.isWellFormed([0x22, 0xff, 0xfe, 0x22]))
        #expect(JSONSyntax.isWellFormed(Array((String(repeating: "[", count: 10) + String(repeating: "]", count: 10)).utf8), maximumDepth: 10))
        #expect(!JSONSyntax.isWellFormed(Array((String(repeating: "[", count: 11) + String(repeating: "]", count: 11)).utf8), maximumDepth: 10))
    }

    @Test("an object's members and an array's elements are found where they are, strings with brackets and all")
    func membersAndElements() throws {
        let text = #" {"a": [1, {"x": "]}\"["}, []], "b\u0022": {"c": null} , "d":"}" } "#
        let bytes = Array(text.utf8)
        func slice(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        let members = try #require(JSONSyntax.members(of: bytes))
        #expect(members.map { slice($0.key) } == [#""a""#, #""b\u0022""#, #""d""#])
        #expect(members.map { slice($0.value) } == [#"[1, {"x": "]}\"["}, []]"#, #"{"c": null}"#, #""}""#])
        #expect(JSONSyntax.key(in: bytes, members[0].key, is: "a"))
        #expect(!JSONSyntax.key(in: bytes, members[1].key, is: "b\""), "keys are compared as written, escapes and all")
        let elements = try #require(JSONSyntax.elements(of: bytes, in: members[0].value))
        #expect(elements.map(slice) == ["1", #"{"x": "]}\"["}"#, "[]"])
        #expect(try #require(JSONSyntax.members(of: bytes, in: elements[1])).map { slice($0.value) } == [#""]}\"[""#])
        #expect(JSONSyntax.elements(of: bytes, in: elements[2]) == [])
        #expect(JSONSyntax.members(of: Array(" {} ".utf8))?.isEmpty == true)
    }

    @Test("no members or elements where no well-formed object or array starts, or where it runs past the range")
    func membersOfWhatIsNot() {
        #expect(JSONSyntax.members(of: Array("[1]".utf8)) == nil)
        #expect(JSONSyntax.elements(of: Array("{}".utf8), in: 0..<2) == nil)
        #expect(JSONSyntax.members(of: Array(#"{"a": 1,}"#.utf8)) == nil)
        #expect(JSONSyntax.members(of: Array(#"{"a" 1}"#.utf8)) == nil)
        #expect(JSONSyntax.members(of: Array(#"{"a": [1}"#.utf8)) == nil)
        let bytes = Array(#"[[1, 2], 3]"#.utf8)
        #expect(JSONSyntax.elements(of: bytes, in: 1..<5) == nil, "the inner array ends past the range")
        #expect(JSONSyntax.elements(of: bytes, in: 1..<7) == [2..<3, 5..<6])
        #expect(JSONSyntax.elements(of: bytes, in: 5..<99) == nil)
    }

    @Test("every report the writer makes is well-formed")
    func writerOutput() throws {
        let report = CrashReport(id: "x", kind: .crash, captureTime: "2026-01-01T00:00:00.000Z", captureDurationMs: 1,
                                 crashwatchVersion: "1", signal: SignalRecord(SignalInfo(signo: 11, code: 1)),
                                 process: ProcessRecord(pid: 1, ppid: 0, executable: "/bin/\u{1}x\"", commandLine: ["a\nb"], uid: 0, gid: 0, comm: "c"),
                                 host: HostRecord(hostname: "h", kernelRelease: "r", kernelVersion: "v", osName: "o", osVersion: nil,
                                                  architecture: "x86_64", bootID: nil),
                                 threads: [], images: [], diagnostics: Diagnostics(ptraceScope: nil, seccompMode: nil))
        #expect(JSONSyntax.isWellFormed(try report.encodedJSON()))
    }
}
