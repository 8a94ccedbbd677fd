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
