// ReportJSONTests.swift — the direct JSON writer behind `CrashReport.encodedJSON()` (`ReportJSONWriter`):
// awkward content (escapes, non-ASCII, nil everywhere, empty lists, extreme numbers) parses and round-trips,
// and for the sample, awkward, sparse and large reports the writer's bytes equal those of the Codable tree
// encoder it replaced, kept below as a private reference copy.
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

/// Reports built to exercise the JSON writer.
enum JSONTestReports {
    /// Addresses whose hex forms cover zero, every digit count boundary and the top bit.
    static let edgeAddresses: [UInt64] = [0, 1, 9, 10, 15, 16, 0xff, 0x100, 0x0123_4567_89ab_cdef, 1 << 63, .max]

    /// A report full of content that is easy to get wrong: escapes, non-ASCII, nils, empty lists, extreme numbers.
    static let awkward: CrashReport = {
        var signal = SignalRecord(SignalInfo(signo: 11, code: 1, address: .max), originalFault: OriginalFault(
            SignalInfo(signo: 31, code: 1, address: 1 << 63, syscall: -1), tid: -1, time: "t\tab\r\u{8}\u{c}",
            registers: edgeAddresses.enumerated().map { RegisterValue("r\"\($0.offset)", Address($0.element)) },
            frames: []))
        signal.senderPID = .min
        signal.senderUID = .max
        signal.syscall = -7
        signal.description = "quote \" backslash \\ slash / newline \n nul \u{0} unit \u{1f} del \u{7f}"
        let frames = [
            FrameRecord(index: 0, address: 0, how: FrameTrust(rawValue: "")),
            FrameRecord(index: -1, address: Address(.max), imageIndex: -1, imageOffset: Address(1 << 63),
                        symbol: "_ZN4démo\u{1}\"x\"", function: "démo::ℵ::🦀()", symbolOffset: 0xf,
                        file: "C:\\src\\file.c", line: .max, column: .min, inlined: true, how: .inline),
            FrameRecord(index: 10, address: 0x10, imageIndex: 0, file: "", line: 0, column: 9, how: .scan),
        ]
        return CrashReport(
            id: "id with \"quotes\" and \\backslashes\\",
            kind: ReportKind(rawValue: "kind\nwith newline"),
            captureTime: "\u{0}\u{1}\u{1f}\u{7f} \u{2028}\u{2029}",
            captureDurationMs: 0.1 + 0.2,
            crashwatchVersion: "é 🦀 ✓ 中文 \u{301}",
            signal: signal,
            process: ProcessRecord(
                pid: -1, ppid: .min, executable: "/path with spaces/é/\\back/\"q\"",
                commandLine: ["", "a/b", "tab\t", "\u{1b}[31mred\u{1b}[0m", "line\r\n", "👩‍👩‍👧"], redacted: true,
                cwd: nil, uid: .max, gid: 0, startTime: nil, comm: "", cgroup: nil, systemdUnit: nil,
                systemdInvocationID: nil, app: AppRecord(),
                environment: ["ZED": "last", "alpha": "a\nb", "MIDDLE": "\"q\"", "_U": "", "É": "accent",
                              "key\\slash": "🦀", "": "empty name", "a": "A", "B": "b"]),
            host: HostRecord(hostname: "höst\u{0}", kernelRelease: "", kernelVersion: "#1 SMP \"PREEMPT\"",
                             osName: "Ünix", osVersion: nil, architecture: "x86_64", bootID: nil),
            threads: [
                ThreadRecord(tid: -5, name: nil, crashed: true, registers: [], frames: []),
                ThreadRecord(tid: .max, name: "wörker \"1\"\t", crashed: false,
                             registers: [RegisterValue("", 0), RegisterValue("é", Address(.max))], frames: frames,
                             unwindStopReason: "loop\n"),
                ThreadRecord(tid: 0, name: "", crashed: false, registers: [], frames: [frames[0]]),
            ],
            images: [
                ImageRecord(path: "[vdso]", buildID: nil, loadAddress: Address(.max), size: .max, inApp: false,
                            architecture: nil, deleted: true),
                ImageRecord(path: "/memfd:x (deleted)", name: "", buildID: "", loadAddress: 0, size: .min,
                            fileOffset: Address(1 << 63), inApp: true, architecture: "é", isMainExecutable: true),
            ],
            diagnostics: Diagnostics(ptraceScope: nil, seccompMode: nil, captureErrors: -1, deadlineExceeded: true),
            softErrors: [
                SoftError(stage: "unwind", message: "no \"info\"\n"),
                SoftError(stage: "", tid: .min, image: "é/\\", message: ""),
            ])
    }()

    /// A report with every optional nil and every list empty.
    static let sparse = CrashReport(
        id: "", kind: .abnormalExit, captureTime: "", captureDurationMs: 0, crashwatchVersion: "",
        signal: SignalRecord(SignalInfo(signo: 9, code: 0, pid: 0, uid: 0)),
        process: ProcessRecord(pid: 0, ppid: 0, executable: "", commandLine: [], uid: 0, gid: 0, comm: ""),
        host: HostRecord(hostname: "", kernelRelease: "", kernelVersion: "", osName: "", osVersion: nil,
                         architecture: "", bootID: nil),
        threads: [], images: [], diagnostics: Diagnostics(ptraceScope: nil, seccompMode: nil))

    /// A capture shaped like a real busy process: `threads` threads of 27 registers and `frames` frames each.
    static func large(threads threadCount: Int = 65, frames frameCount: Int = 12) -> CrashReport {
        let names: [String] = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12",
                               "r13", "r14", "r15", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs", "fs_base",
                               "gs_base", "orig_rax"]
        let images: [ImageRecord] = (0..<40).map { (index: Int) -> ImageRecord in
            let buildID = String(repeating: String(format: "%02x", index), count: 20)
            let loadAddress = Address(0x7f3a_0000_0000 + UInt64(index) * 0x20_0000)
            return ImageRecord(path: "/usr/lib/x86_64-linux-gnu/libmodule\(index).so.\(index % 7)", buildID: buildID,
                               loadAddress: loadAddress, size: 0x1b_d000 + index, inApp: index < 3,
                               architecture: "x86_64", isMainExecutable: index == 0)
        }
        let threads: [ThreadRecord] = (0..<threadCount).map { (thread: Int) -> ThreadRecord in
            let base = UInt64(0x7f3a_9b00_0000 + thread * 0x80_0000)
            let registers: [RegisterValue] = names.enumerated().map { (offset: Int, name: String) -> RegisterValue in
                let value: UInt64 = offset % 5 == 0 ? 0 : base &+ UInt64(offset) &* 0x1111_1111
                return RegisterValue(name, Address(value))
            }
            let frames: [FrameRecord] = (0..<frameCount).map { (index: Int) -> FrameRecord in
                let image = (thread + index) % images.count
                let offset = UInt64(0x1000 + index * 0x1a3 + thread * 0x10)
                let symbolized = index % 6 != 5
                return FrameRecord(
                    index: index, address: Address(images[image].loadAddress.value + offset), imageIndex: image,
                    imageOffset: Address(offset),
                    symbol: symbolized ? "_ZN6worker4PoolI\(index)E3runEv" : nil,
                    function: symbolized ? "worker::Pool<\(index)>::run()" : nil,
                    symbolOffset: symbolized ? Address(UInt64(index * 0x13)) : nil,
                    file: index % 4 == 0 ? "/build/src/worker/pool_\(index).cc" : nil,
                    line: index % 4 == 0 ? 100 + index : nil, column: index % 4 == 0 ? index + 1 : nil,
                    inlined: index == 1, how: index == 0 ? .context : (index < 8 ? .cfi : .scan))
            }
            return ThreadRecord(tid: Int32(40_000 + thread), name: "worker-\(thread)", crashed: thread == 0,
                                registers: registers, frames: frames,
                                unwindStopReason: thread % 2 == 0 ? "end of stack" : nil)
        }
        var report = SampleReport.report
        report.threads = threads
        report.images = images
        report.softErrors = (0..<5).map {
            SoftError(stage: "unwind", tid: Int32(40_000 + $0), message: "no unwind info \($0)")
        }
        return report
    }

    /// The reports the identity test compares, by name.
    static func named(_ name: String) -> CrashReport {
        switch name {
        case "sample": SampleReport.report
        case "awkward": awkward
        case "sparse": sparse
        default: large()
        }
    }
}

/// The direct writer: valid JSON for awkward content, and the former encoder's exact bytes.
@Suite struct ReportJSONTests {
    /// Escapes, non-ASCII, nils, empty lists and extreme numbers give JSON that parses and decodes to the same report.
    @Test("awkward content encodes to JSON that parses and decodes back to the same report")
    func awkwardContentRoundTrips() throws {
        let report = JSONTestReports.awkward
        let bytes = try report.encodedJSON()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["id"] as? String == report.id)
        #expect(object["crashwatchVersion"] as? String == "é 🦀 ✓ 中文 \u{301}")
        let process = try #require(object["process"] as? [String: Any])
        #expect(process["cwd"] is NSNull && process["pid"] as? Int == -1)
        #expect((process["environment"] as? [String: String])?.count == 9)
        #expect(try CrashReport.decode(bytes) == report)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""captureTime": "\u0000\u0001\u001f"#))
        #expect(text.contains(#""time": "t\tab\r\b\f""#))
        #expect(text.contains(#"{"name": "r\"10", "value": "0xffffffffffffffff"}"#))
        #expect(text.contains(#""registers": [],"#) && text.contains(#""frames": []"#))
        #expect(text.contains(#""line": 9223372036854775807, "column": -9223372036854775808"#))
        #expect(text.contains("\"environment\": {\n      \"\": \"empty name\",\n      \"B\": \"b\",\n      \"MIDDLE\""))
        #expect(text.contains(#""app": {"# + "\n" + #"      "name": null,"#))
    }

    /// The writer's output is byte-identical to the replaced Codable tree encoder's, report by report.
    @Test("the writer's bytes equal the former Codable tree encoder's",
          arguments: ["sample", "awkward", "sparse", "large"])
    func identicalToTreeEncoder(_ name: String) throws {
        let report = JSONTestReports.named(name)
        let expected = try ReferenceReportJSONEncoder().encode(report)
        let actual = try report.encodedJSON()
        #expect(actual.count == expected.count)
        if actual != expected {
            let first = zip(actual, expected).prefix { $0 == $1 }.count
            let ours = String(decoding: actual[first...].prefix(80), as: UTF8.self)
            Issue.record("\(name): first difference at byte \(first): ours …\(ours)…")
        }
    }

    /// The generated report has the shape the identity test and the timing claim rely on, and round-trips.
    @Test("the large report is the size of a real 65-thread capture")
    func largeReportShape() throws {
        let report = JSONTestReports.large()
        #expect(report.threads.count == 65)
        #expect(report.threads.allSatisfy { $0.registers.count == 27 && $0.frames.count == 12 })
        #expect(try report.encodedJSON().count > 250_000)
        #expect(try CrashReport.decode(report.encodedJSON()) == report)
    }

    /// Durations print as `Double.description`, exactly as the tree encoder printed them, and read back exactly.
    @Test("durations are formatted as the tree encoder did", arguments: [
        0, -0.0, 1e-7, 1e20, 0.1 + 0.2, 123_456_789.125, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -18.75,
    ] as [Double])
    func durationFormatting(_ duration: Double) throws {
        var report = JSONTestReports.sparse
        report.captureDurationMs = duration
        #expect(try report.encodedJSON() == ReferenceReportJSONEncoder().encode(report))
        #expect(try CrashReport.decode(report.encodedJSON()).captureDurationMs == duration)
    }

    /// A duration JSON cannot hold is refused with `EncodingError` by both encoders.
    @Test("NaN and infinite durations throw EncodingError, as before",
          arguments: [.nan, .infinity, -.infinity] as [Double])
    func nonFiniteDurations(_ duration: Double) {
        var report = SampleReport.report
        report.captureDurationMs = duration
        #expect(throws: EncodingError.self) { try report.encodedJSON() }
        #expect(throws: EncodingError.self) { try ReferenceReportJSONEncoder().encode(report) }
    }

    /// Every digit count, and values on either side of each power of two, format as `hex(_:)` does.
    @Test("addresses are written as hex(_:) writes them")
    func addressesMatchHex() throws {
        let powers = (0..<64).map { UInt64(1) << $0 }
        for value in JSONTestReports.edgeAddresses + powers + powers.map({ $0 &- 1 }) + powers.map({ $0 | 0xa5 }) {
            var report = JSONTestReports.sparse
            report.images = [ImageRecord(path: "x", buildID: nil, loadAddress: Address(value), size: 0, inApp: false,
                                         architecture: nil)]
            let text = String(decoding: try report.encodedJSON(), as: UTF8.self)
            #expect(text.contains(#""loadAddress": "\#(hex(value))""#), "\(hex(value))")
        }
    }
}

// MARK: - Reference: the Codable tree encoder that ReportJSONWriter replaced

// Copied from Sources/CrashwatchModel/Report.swift as it was before the direct writer, with its types renamed
// (`Reference…`) and private; the identity tests above hold the writer to this encoder's exact output.

/// Encodes `Encodable` values as JSON with object keys in the order they were encoded, unlike `JSONEncoder`.
///
/// swift-foundation's `JSONEncoder` on Linux writes keys in hash order, which changes between runs unless
/// `.sortedKeys` is set, and sorted keys scatter a report's identity fields through the document. This encoder
/// keeps the synthesized `encode(to:)` order (declaration order), writes `nil` optionals as `null` so every key
/// is always present, sorts the keys of `[String: String]` dictionaries, and never escapes `/`. Layout: two-space
/// indentation; array elements that hold only scalars (frames, registers, images) and arrays of scalars are
/// written on one line each.
private struct ReferenceReportJSONEncoder {
    /// Encodes a value into UTF-8 JSON text ending in a newline.
    func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let tree = try ReferenceJSONTree.make(value, codingPath: [])
        var output: [UInt8] = []
        output.reserveCapacity(16 * 1024)
        tree.write(into: &output, indent: 0, inline: false)
        output.append(UInt8(ascii: "\n"))
        return output
    }
}

/// A JSON value under construction; containers are references so Codable containers can fill them later.
private enum ReferenceJSONTree {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, already in its JSON text form.
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// An array being filled.
    case array(ReferenceJSONArrayBox)
    /// An object being filled.
    case object(ReferenceJSONObjectBox)
    /// Whatever a super-encoder will have encoded.
    case encoder(ReferenceTreeEncoder)

    /// Encodes one value into a tree, short-cutting the scalar types.
    static func make<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> ReferenceJSONTree {
        switch value {
        case let value as Address: return .string(hex(value.value))
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Int: return .number(String(value))
        case let value as Int8: return .number(String(value))
        case let value as Int16: return .number(String(value))
        case let value as Int32: return .number(String(value))
        case let value as Int64: return .number(String(value))
        case let value as UInt: return .number(String(value))
        case let value as UInt8: return .number(String(value))
        case let value as UInt16: return .number(String(value))
        case let value as UInt32: return .number(String(value))
        case let value as UInt64: return .number(String(value))
        case let value as Double: return try number(value, codingPath: codingPath)
        case let value as Float: return try number(Double(value), codingPath: codingPath)
        case let value as [String: String]:
            let box = ReferenceJSONObjectBox()
            for key in value.keys.sorted() { box.set(key, .string(value[key]!)) }
            return .object(box)
        default:
            let encoder = ReferenceTreeEncoder(codingPath: codingPath)
            try value.encode(to: encoder)
            return encoder.tree ?? .object(ReferenceJSONObjectBox())
        }
    }

    /// A finite floating-point number in Swift's shortest round-tripping form (valid JSON); NaN and infinities throw.
    static func number(_ value: Double, codingPath: [any CodingKey]) throws -> ReferenceJSONTree {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) is not valid JSON"))
        }
        return .number(value.description)
    }

    /// Whether this value is written without nested containers.
    var isScalar: Bool {
        switch self {
        case .null, .bool, .number, .string: true
        case .array, .object: false
        case .encoder(let encoder): encoder.tree?.isScalar ?? false
        }
    }

    /// Writes the value; `inline` puts a container on one line.
    func write(into output: inout [UInt8], indent: Int, inline: Bool) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let text): ReferenceJSONTree.writeString(text, into: &output)
        case .encoder(let encoder): (encoder.tree ?? .object(ReferenceJSONObjectBox())).write(into: &output, indent: indent, inline: inline)
        case .array(let box):
            let items = box.items
            if items.isEmpty { output.append(contentsOf: "[]".utf8); return }
            if inline || items.allSatisfy(\.isScalar) {
                output.append(UInt8(ascii: "["))
                for (offset, item) in items.enumerated() {
                    if offset > 0 { output.append(contentsOf: ", ".utf8) }
                    item.write(into: &output, indent: indent, inline: true)
                }
                output.append(UInt8(ascii: "]"))
                return
            }
            output.append(contentsOf: "[\n".utf8)
            for (offset, item) in items.enumerated() {
                ReferenceJSONTree.writeIndent(indent + 2, into: &output)
                // An element whose members are all scalars (a frame, a register, an image) gets one line.
                let oneLine: Bool = if case .object(let member) = item.resolved { member.pairs.allSatisfy(\.value.isScalar) } else { false }
                item.write(into: &output, indent: indent + 2, inline: oneLine)
                output.append(contentsOf: (offset == items.count - 1 ? "\n" : ",\n").utf8)
            }
            ReferenceJSONTree.writeIndent(indent, into: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let box):
            let pairs = box.pairs
            if pairs.isEmpty { output.append(contentsOf: "{}".utf8); return }
            if inline {
                output.append(UInt8(ascii: "{"))
                for (offset, pair) in pairs.enumerated() {
                    if offset > 0 { output.append(contentsOf: ", ".utf8) }
                    ReferenceJSONTree.writeString(pair.key, into: &output)
                    output.append(contentsOf: ": ".utf8)
                    pair.value.write(into: &output, indent: indent, inline: true)
                }
                output.append(UInt8(ascii: "}"))
                return
            }
            output.append(contentsOf: "{\n".utf8)
            for (offset, pair) in pairs.enumerated() {
                ReferenceJSONTree.writeIndent(indent + 2, into: &output)
                ReferenceJSONTree.writeString(pair.key, into: &output)
                output.append(contentsOf: ": ".utf8)
                pair.value.write(into: &output, indent: indent + 2, inline: false)
                output.append(contentsOf: (offset == pairs.count - 1 ? "\n" : ",\n").utf8)
            }
            ReferenceJSONTree.writeIndent(indent, into: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// The value with a deferred encoder replaced by what it encoded.
    var resolved: ReferenceJSONTree {
        if case .encoder(let encoder) = self { return encoder.tree?.resolved ?? .object(ReferenceJSONObjectBox()) }
        return self
    }

    /// Appends `count` spaces.
    static func writeIndent(_ count: Int, into output: inout [UInt8]) {
        output += repeatElement(UInt8(ascii: " "), count: count)
    }

    /// Appends a JSON string literal: `"` and `\` escaped, control characters as `\n`-style or `\u00XX` escapes.
    static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case 0x00..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

/// The members of a JSON array being built.
private final class ReferenceJSONArrayBox {
    /// The elements, in order.
    var items: [ReferenceJSONTree] = []
}

/// The members of a JSON object being built, in insertion order.
private final class ReferenceJSONObjectBox {
    /// The key-value pairs, in the order first set.
    var pairs: [(key: String, value: ReferenceJSONTree)] = []

    /// Sets a key, replacing its value in place when it was already set.
    func set(_ key: String, _ value: ReferenceJSONTree) {
        if let index = pairs.firstIndex(where: { $0.key == key }) {
            pairs[index].value = value
        } else {
            pairs.append((key, value))
        }
    }
}

/// The `Encoder` behind `ReferenceReportJSONEncoder`: builds a `ReferenceJSONTree`.
private final class ReferenceTreeEncoder: Encoder {
    /// The keys leading to the value being encoded.
    let codingPath: [any CodingKey]
    /// No user info is offered.
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// What the value encoded, once it asked for a container.
    var tree: ReferenceJSONTree?

    /// Creates an encoder for the value at `codingPath`.
    init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

    /// An object container; asking twice returns the same object.
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: ReferenceJSONObjectBox
        if case .object(let existing)? = tree {
            box = existing
        } else {
            box = ReferenceJSONObjectBox()
            tree = .object(box)
        }
        return KeyedEncodingContainer(ReferenceTreeKeyedContainer<Key>(box: box, codingPath: codingPath))
    }

    /// An array container; asking twice returns the same array.
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ReferenceJSONArrayBox
        if case .array(let existing)? = tree {
            box = existing
        } else {
            box = ReferenceJSONArrayBox()
            tree = .array(box)
        }
        return ReferenceTreeUnkeyedContainer(box: box, codingPath: codingPath)
    }

    /// A container for one value.
    func singleValueContainer() -> any SingleValueEncodingContainer { ReferenceTreeSingleValueContainer(encoder: self) }
}

/// A keyed container writing into a `ReferenceJSONObjectBox`; `encodeIfPresent(nil)` writes `null`.
private struct ReferenceTreeKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// The object being filled.
    let box: ReferenceJSONObjectBox
    /// The keys leading to the object.
    let codingPath: [any CodingKey]

    /// Writes `null` under a key.
    mutating func encodeNil(forKey key: Key) throws { box.set(key.stringValue, .null) }
    /// Writes any value under a key; this generic method also serves every primitive `encode` requirement.
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        box.set(key.stringValue, try ReferenceJSONTree.make(value, codingPath: codingPath + [key]))
    }

    // `encodeIfPresent` for every type the protocol names: the defaults would omit nil, these write `null`.
    /// Writes a `Bool` or `null`.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `String` or `null`.
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `Double` or `null`.
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `Float` or `null`.
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encode(value, key) }
    /// Writes an `Int` or `null`.
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encode(value, key) }
    /// Writes an `Int8` or `null`.
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encode(value, key) }
    /// Writes an `Int16` or `null`.
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encode(value, key) }
    /// Writes an `Int32` or `null`.
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encode(value, key) }
    /// Writes an `Int64` or `null`.
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `UInt` or `null`.
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `UInt8` or `null`.
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `UInt16` or `null`.
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `UInt32` or `null`.
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `UInt64` or `null`.
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encode(value, key) }
    /// Writes a `T` or `null`.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encode(value, key) }

    /// Writes a value, or `null` for nil.
    private mutating func encode<T: Encodable>(_ value: T?, _ key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Starts an object under a key.
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = ReferenceJSONObjectBox()
        box.set(key.stringValue, .object(nested))
        return KeyedEncodingContainer(ReferenceTreeKeyedContainer<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    /// Starts an array under a key.
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ReferenceJSONArrayBox()
        box.set(key.stringValue, .array(nested))
        return ReferenceTreeUnkeyedContainer(box: nested, codingPath: codingPath + [key])
    }

    /// An encoder for a superclass, under the key `super`.
    mutating func superEncoder() -> any Encoder { superEncoder(named: "super") }
    /// An encoder for a superclass, under a given key.
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue) }

    /// An encoder whose result lands under `name` once it has encoded.
    private func superEncoder(named name: String) -> any Encoder {
        let encoder = ReferenceTreeEncoder(codingPath: codingPath + [ReferenceJSONKey(name)])
        box.set(name, .encoder(encoder))
        return encoder
    }
}

/// An unkeyed container appending to a `ReferenceJSONArrayBox`.
private struct ReferenceTreeUnkeyedContainer: UnkeyedEncodingContainer {
    /// The array being filled.
    let box: ReferenceJSONArrayBox
    /// The keys leading to the array.
    let codingPath: [any CodingKey]
    /// How many elements have been appended.
    var count: Int { box.items.count }

    /// Appends `null`.
    mutating func encodeNil() throws { box.items.append(.null) }
    /// Appends any value; this generic method also serves every primitive `encode` requirement.
    mutating func encode<T: Encodable>(_ value: T) throws {
        box.items.append(try ReferenceJSONTree.make(value, codingPath: codingPath + [ReferenceJSONKey(index: count)]))
    }

    /// Appends an object and returns its container.
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ReferenceJSONObjectBox()
        let path = codingPath + [ReferenceJSONKey(index: count)]
        box.items.append(.object(nested))
        return KeyedEncodingContainer(ReferenceTreeKeyedContainer<NestedKey>(box: nested, codingPath: path))
    }

    /// Appends an array and returns its container.
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ReferenceJSONArrayBox()
        let path = codingPath + [ReferenceJSONKey(index: count)]
        box.items.append(.array(nested))
        return ReferenceTreeUnkeyedContainer(box: nested, codingPath: path)
    }

    /// Appends whatever a superclass encoder will encode.
    mutating func superEncoder() -> any Encoder {
        let encoder = ReferenceTreeEncoder(codingPath: codingPath + [ReferenceJSONKey(index: count)])
        box.items.append(.encoder(encoder))
        return encoder
    }
}

/// A single-value container storing its one value into the encoder's tree.
private struct ReferenceTreeSingleValueContainer: SingleValueEncodingContainer {
    /// The encoder whose tree receives the value.
    let encoder: ReferenceTreeEncoder
    /// The keys leading to the value.
    var codingPath: [any CodingKey] { encoder.codingPath }

    /// Stores `null`.
    mutating func encodeNil() throws { encoder.tree = .null }
    /// Stores any value; this generic method also serves every primitive `encode` requirement.
    mutating func encode<T: Encodable>(_ value: T) throws { encoder.tree = try ReferenceJSONTree.make(value, codingPath: codingPath) }
}

/// A coding key made from a string or an array index, for coding paths.
private struct ReferenceJSONKey: CodingKey {
    /// The key text (the index in decimal for array positions).
    var stringValue: String
    /// The array index, for array positions.
    var intValue: Int?

    /// A named key.
    init(_ name: String) { stringValue = name }
    /// A named key (never fails).
    init?(stringValue: String) { self.stringValue = stringValue }
    /// An array position.
    init(index: Int) {
        stringValue = String(index)
        intValue = index
    }
    /// An array position (never fails).
    init?(intValue: Int) { self.init(index: intValue) }
}
