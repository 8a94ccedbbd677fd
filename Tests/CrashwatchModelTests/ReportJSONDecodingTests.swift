// ReportJSONDecodingTests.swift — the one-pass report decoder behind `CrashReport.decode`: for every report the
// tests have (the golden file, the sample, awkward, sparse and large reports) it gives what the Codable decoding
// through `JSONDecoder` gave (kept below as a reference), and on hostile input — truncations, wrong types, deep
// nesting, huge numbers, invalid UTF-8, escapes, repeated members, random mutations — it refuses what that
// decoding refused or what is not well-formed JSON, without crashing, and accepts the rest with the same result.
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

/// The decoding `CrashReport.decode` did before the one-pass decoder: `JSONDecoder` over the Codable conformances.
enum ReferenceReportDecoder {
    private struct Header: Decodable {
        var format: String?
        var schemaVersion: Int?
    }

    /// The report, or the error `JSONDecoder` (or the header check) threw.
    static func decode(_ bytes: [UInt8]) throws -> CrashReport {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let header = try decoder.decode(Header.self, from: data)
        guard header.format == CrashReport.formatName else { throw ReportDecodingError.notAReport(format: header.format) }
        guard let version = header.schemaVersion, (1...CrashReport.currentSchemaVersion).contains(version) else {
            throw ReportDecodingError.unsupportedSchemaVersion(header.schemaVersion)
        }
        return try decoder.decode(CrashReport.self, from: data)
    }
}

/// What a decoder made of some bytes: the report, or the kind of error and its path.
enum DecodeOutcome: Equatable, CustomStringConvertible {
    case report(CrashReport)
    case refused(String)

    init(_ decode: () throws -> CrashReport) {
        do { self = .report(try decode()) } catch let error as ReportDecodingError {
            self = .refused("\(error)")
        } catch let error as DecodingError {
            self = .refused(DecodeOutcome.describe(error))
        } catch {
            self = .refused("other: \(error)")
        }
    }

    /// The error's case and coding path (not its wording, which differs between the decoders).
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String { context.codingPath.map(\.stringValue).joined(separator: ".") }
        switch error {
        case .typeMismatch(_, let context): return "typeMismatch at \(path(context))"
        case .valueNotFound(_, let context): return "valueNotFound at \(path(context))"
        case .keyNotFound(let key, let context): return "keyNotFound \(key.stringValue) at \(path(context))"
        case .dataCorrupted: return "dataCorrupted"
        @unknown default: return "unknown"
        }
    }

    var accepted: Bool { if case .report = self { true } else { false } }

    var description: String {
        switch self {
        case .report(let report): "report \(report.id)"
        case .refused(let reason): "refused: \(reason)"
        }
    }
}

/// A small deterministic random generator (SplitMix64), so a failing mutation can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct ReportJSONDecodingTests {
    static func ours(_ bytes: [UInt8]) -> DecodeOutcome { DecodeOutcome { try CrashReport.decode(bytes) } }
    static func reference(_ bytes: [UInt8]) -> DecodeOutcome { DecodeOutcome { try ReferenceReportDecoder.decode(bytes) } }

    /// Every report the tests have, as JSON: the golden file and the writer's output for the test reports.
    static func reportTexts() throws -> [(name: String, bytes: [UInt8])] {
        var texts = [("example-report.json", SampleReport.exampleBytes)]
        for name in ["sample", "awkward", "sparse", "large"] {
            texts.append((name, try JSONTestReports.named(name).encodedJSON()))
        }
        texts.append(("export", try ExportFixture.report.encodedJSON()))
        texts.append(("older", try ExportFixture.olderReport.encodedJSON()))
        var annotated = SampleReport.report
        annotated.annotations = ["build": "r1", "é": "\u{1F980}", "": ""]
        annotated.breadcrumbs = [BreadcrumbRecord(time: nil, level: "info", message: "a \"b\"\n"),
                                 BreadcrumbRecord(time: "2026-01-01T00:00:00.000Z", level: "fatal", message: "")]
        texts.append(("annotated", try annotated.encodedJSON()))
        return texts
    }

    @Test("every report the tests have decodes to exactly what JSONDecoder gives")
    func sameAsJSONDecoder() throws {
        let texts = try Self.reportTexts()
        #expect(!SampleReport.exampleBytes.isEmpty)
        for (name, bytes) in texts {
            let ours = Self.ours(bytes)
            #expect(ours.accepted, "\(name): \(ours)")
            #expect(ours == Self.reference(bytes), "\(name)")
        }
        for name in ["sample", "awkward", "sparse", "large"] {
            let report = JSONTestReports.named(name)
            #expect(try CrashReport.decode(report.encodedJSON()) == report, "\(name) round-trips")
        }
    }

    @Test("decoding the crashed and main threads alone gives the whole report without the other threads")
    func threadSelection() throws {
        var report = JSONTestReports.large()
        report.process.pid = report.threads[7].tid
        let bytes = try report.encodedJSON()
        let slim = try CrashReport.decode(bytes, threads: .crashedAndMain)
        #expect(slim.threads.map(\.tid) == [report.threads[0].tid, report.threads[7].tid])
        var expected = report
        expected.threads = [report.threads[0], report.threads[7]]
        #expect(slim == expected)
        #expect(try CrashReport.decode(bytes, threads: .all) == report)
    }

    @Test("a report cut short at any byte is refused, as JSONDecoder refuses it")
    func truncations() throws {
        let bytes = try SampleReport.report.encodedJSON()
        #expect(bytes.last == UInt8(ascii: "\n"))
        for length in 0..<(bytes.count - 1) {
            let prefix = Array(bytes[..<length])
            let ours = Self.ours(prefix)
            #expect(!ours.accepted, "accepted a prefix of \(length) bytes")
            if ours.accepted { break }
        }
        #expect(Self.ours(Array(bytes.dropLast())).accepted)
    }

    /// Each member of `bytes` (every object at every depth), as its key and value ranges.
    static func allMembers(_ bytes: [UInt8], in range: Range<Int>? = nil) -> [(key: Range<Int>, value: Range<Int>)] {
        var found: [(key: Range<Int>, value: Range<Int>)] = []
        let start = range ?? bytes.indices
        var pending: [Range<Int>] = [start]
        while let next = pending.popLast() {
            if let members = JSONSyntax.members(of: bytes, in: next) {
                found += members
                pending += members.map(\.value)
            } else if let elements = JSONSyntax.elements(of: bytes, in: next) {
                pending += elements
            }
        }
        return found
    }

    @Test("a member of another type is refused, naming the member as JSONDecoder does")
    func wrongTypes() throws {
        var report = SampleReport.report
        report.annotations = ["k": "v"]
        report.breadcrumbs = [BreadcrumbRecord(time: nil, level: "info", message: "m")]
        report.hang = HangRecord(source: "watchdog", startTime: "t", durationMs: 1.5, watchdogTimeoutMs: nil)
        let bytes = try report.encodedJSON()
        let members = Self.allMembers(bytes)
        #expect(members.count > 100)
        var checked = 0
        for member in members {
            let replacement: String
            switch bytes[member.value.lowerBound] {
            case UInt8(ascii: "\""): replacement = "12"
            case UInt8(ascii: "{"): replacement = "[]"
            case UInt8(ascii: "["): replacement = "{}"
            case UInt8(ascii: "n"): replacement = "true"
            default: replacement = #""x""#
            }
            let mutated = Array(bytes[..<member.value.lowerBound]) + Array(replacement.utf8) + Array(bytes[member.value.upperBound...])
            let key = String(decoding: bytes[member.key].dropFirst().dropLast(), as: UTF8.self)
            let ours = Self.ours(mutated), reference = Self.reference(mutated)
            #expect(ours == reference, "\(key) → \(replacement)")
            // Environment and annotation values are the member itself; every other wrong type is refused.
            if !ours.accepted { checked += 1 }
            if case .refused(let reason) = ours, !reason.hasPrefix("not a crashwatch") {
                #expect(reason.hasSuffix(key) || reason.contains(key), "\(reason) does not name \(key)")
            }
        }
        #expect(checked > 100)
    }

    /// The sample report's text with `value` as the value of a new first member named `name`.
    static func withMember(_ name: String, _ value: String) throws -> [UInt8] {
        let bytes = try SampleReport.report.encodedJSON()
        return [UInt8(ascii: "{")] + Array("\"\(name)\": \(value),".utf8) + Array(bytes.dropFirst())
    }

    /// The sample report with the text of one member's value replaced.
    static func replacing(_ old: String, with new: String) throws -> [UInt8] {
        let text = String(decoding: try SampleReport.report.encodedJSON(), as: UTF8.self)
        #expect(text.contains(old))
        return Array(text.replacingOccurrences(of: old, with: new).utf8)
    }

    @Test("nesting is bounded: an unknown member 200 deep is skipped, 300 deep is refused")
    func deepNesting() throws {
        let shallow = try Self.withMember("later", String(repeating: "[", count: 200) + String(repeating: "]", count: 200))
        #expect(Self.ours(shallow).accepted)
        #expect(Self.ours(shallow) == Self.reference(shallow))
        let deep = try Self.withMember("later", String(repeating: "[", count: 300) + String(repeating: "]", count: 300))
        #expect(!Self.ours(deep).accepted)
        let deepObjects = try Self.withMember("later", String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000))
        #expect(!Self.ours(deepObjects).accepted)
        let unclosed = try Self.withMember("later", String(repeating: "[", count: 1_000_000))
        #expect(!Self.ours(unclosed).accepted)
    }

    @Test("numbers are converted as JSONDecoder converts them, huge ones refused", arguments: [
        "1", "-0", "1.0", "1e2", "1E+2", "1.5", "15e-1", "1e-400", "2147483648", "-2147483649", "99999999999999999999",
        "9223372036854775807", "9223372036854775808", "1e18", "1.5e17", "123456789012345678.9", "0.9999999999999999999999",
        "1e400", "-1e400", "4e-324", "2e-324", "0e-999", "1.7976931348623159e308", "01", "1.", ".5", "+1", "-", "1e",
    ])
    func numbers(_ number: String) throws {
        for member in [#""pid": 4242"#, #""uid": 1000"#, #""captureDurationMs": 12.5"#, #""size": 20496"#, #""line": 31"#] {
            let name = member.prefix { $0 != ":" }
            let text = String(decoding: try SampleReport.report.encodedJSON(), as: UTF8.self)
            guard let range = text.range(of: member) else { continue }
            let mutated = Array(text.replacingCharacters(in: range, with: "\(name): \(number)").utf8)
            let ours = Self.ours(mutated)
            #expect(ours == Self.reference(mutated), "\(name): \(number)")
            if !JSONSyntax.isWellFormed(mutated) { #expect(!ours.accepted) }
        }
    }

    @Test("strings: escapes and surrogate pairs decode; invalid UTF-8 and unpaired surrogates are refused")
    func strings() throws {
        let accepted = [#"\ud83e\udd80 \u00e9 \/ \" \\ \b\f\n\r\t \u0000"#, "é 中文 🦀", #"\uD83D\uDE00"#]
        for text in accepted {
            let bytes = try Self.replacing(#""comm": "segv_reraise""#, with: "\"comm\": \"\(text)\"")
            let ours = Self.ours(bytes)
            #expect(ours.accepted, "\(text)")
            #expect(ours == Self.reference(bytes), "\(text)")
        }
        #expect(try CrashReport.decode(Self.replacing(#""comm": "segv_reraise""#, with: #""comm": "\ud83e\udd80""#)).process.comm == "🦀")
        for text in [#"\ud83d"#, #"\ude00"#, #"\ud83dx"#, #"\ud83d\u0041"#, #"\ud83d\ud83d"#, #"\x"#, #"\u00"#, #"\u00g0"#, "tab\there"] {
            let bytes = try Self.replacing(#""comm": "segv_reraise""#, with: "\"comm\": \"\(text)\"")
            #expect(!Self.ours(bytes).accepted, "\(text)")
            #expect(!Self.reference(bytes).accepted, "\(text)")
        }
        // An unpaired surrogate in a member nobody reads is only syntax, for JSONDecoder as for this decoder.
        let skipped = try Self.withMember("later", #""\ud83d""#)
        #expect(Self.ours(skipped).accepted && Self.ours(skipped) == Self.reference(skipped))
        let base = try SampleReport.report.encodedJSON()
        let at = try #require(base.firstRange(of: Array("segv_reraise".utf8))).lowerBound
        for invalid: [UInt8] in [[0xff], [0xc3], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]] {
            var bytes = base
            bytes.insert(contentsOf: invalid, at: at)
            #expect(!Self.ours(bytes).accepted, "\(invalid)")
            // In a member nobody reads, too (JSONDecoder would skip it; the bytes are not well-formed JSON).
            var unreadBytes = try Self.withMember("later", #""a""#)
            unreadBytes.insert(contentsOf: invalid, at: 11)  // after `{"later": "`
            #expect(!JSONSyntax.isWellFormed(unreadBytes) && !Self.ours(unreadBytes).accepted, "\(invalid)")
        }
    }

    @Test("members in another order, escaped keys, unknown and repeated members: as JSONDecoder reads them")
    func memberOrder() throws {
        let bytes = try SampleReport.report.encodedJSON()
        let top = try #require(JSONSyntax.members(of: bytes))
        var reversed: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in top.reversed().enumerated() {
            if index > 0 { reversed.append(UInt8(ascii: ",")) }
            reversed += bytes[member.key] + [UInt8(ascii: ":")] + bytes[member.value]
        }
        reversed.append(UInt8(ascii: "}"))
        #expect(try CrashReport.decode(reversed) == SampleReport.report)
        let cases: [[UInt8]] = [
            try Self.replacing(#""comm": "segv_reraise""#, with: #""c\u006fmm": "crasher""#),
            try Self.replacing(#""comm": "segv_reraise""#, with: #""comm": "first", "comm": "second""#),
            try Self.replacing(#""comm": "segv_reraise""#, with: #""comm": "first", "comm": 12"#),
            try Self.replacing(#""comm": "segv_reraise""#, with: #""comm": 12, "comm": "second""#),
            try Self.replacing(#""cwd": "/srv/demo""#, with: #""cwd": null, "cwd": "/x""#),
            try Self.replacing(#""cwd": "/srv/demo""#, with: #""later": {"a": [1, 2.5e3, true, null, {"b": "\u00e9"}]}"#),
            try Self.replacing(#""comm": "segv_reraise""#, with: #""kommm": "crasher""#),
            try Self.withMember("format", #""other""#),
            try Self.withMember("schemaVersion", "2"),
            try Self.withMember("schemaVersion", "null"),
            try Self.withMember("format", "null"),
            try Self.withMember("format", "7"),
            Array(#"{"format": "crashwatch.report", "schemaVersion": 1}"#.utf8),
            Array(#"{"schemaVersion": 1, "format": "crashwatch.report", "id": 5}"#.utf8),
            Array(#"{"format": "other", "schemaVersion": 1, "id": 5}"#.utf8),
            Array(#"{"format": "other", "schemaVersion": 1, "id": 5"#.utf8),
            Array("[1, 2]".utf8), Array("{}".utf8), Array("".utf8), Array("null".utf8), Array(" ".utf8),
        ]
        for bytes in cases {
            let ours = Self.ours(bytes)
            #expect(ours == Self.reference(bytes), "\(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        #expect(try CrashReport.decode(Self.replacing(#""comm": "segv_reraise""#, with: #""comm": "first", "comm": "second""#)).process.comm == "first")
    }

    @Test("random mutations: refused when not well-formed, else accepted or refused as JSONDecoder does, with the same report")
    func differentialFuzz() throws {
        let base = try SampleReport.report.encodedJSON()
        let interesting = Array("0123456789.eE-+\"\\{}[],:ntfu xa\u{0}".utf8) + [0x80, 0xc3, 0xff, 0x0a]
        var random = SplitMix(state: 27)
        var agreedAccepting = 0, agreedRefusing = 0, notWellFormed = 0
        for round in 0..<4000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0: bytes[at] = interesting.randomElement(using: &random)!
                case 1: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 2: bytes.remove(at: at)
                case 3: bytes.insert(interesting.randomElement(using: &random)!, at: at)
                default:
                    let end = min(bytes.count, at + Int.random(in: 1...40, using: &random))
                    bytes.insert(contentsOf: bytes[at..<end], at: Int.random(in: 0..<bytes.count, using: &random))
                }
            }
            let ours = Self.ours(bytes)
            guard JSONSyntax.isWellFormed(bytes) else {
                notWellFormed += 1
                #expect(!ours.accepted, "round \(round): accepted malformed JSON")
                continue
            }
            let reference = Self.reference(bytes)
            #expect(ours.accepted == reference.accepted, "round \(round): ours \(ours), JSONDecoder \(reference)")
            if case .report(let mine) = ours, case .report(let theirs) = reference {
                #expect(mine == theirs, "round \(round)")
                agreedAccepting += 1
            } else if !ours.accepted && !reference.accepted {
                agreedRefusing += 1
            }
        }
        // The mutations reach every outcome: accepted, refused as a report, not JSON at all.
        #expect(agreedAccepting > 100 && agreedRefusing > 100 && notWellFormed > 100,
                "\(agreedAccepting) accepted, \(agreedRefusing) refused, \(notWellFormed) not well-formed")
    }
}
