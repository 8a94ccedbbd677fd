// AnnotationDecoderTests.swift — the decoder of copied annotation tables, on tables built byte by byte here as
// annotations/crashwatch_annotations.h lays them out: what each slot becomes, what is dropped and named (torn
// entries, breadcrumbs outside the ring's window, invalid UTF-8, implausible times, later versions), the caps, the
// precedence of tables and of the operator's values, and redaction.
@testable import CrashwatchCapture
import CrashwatchModel
import Testing

/// A version 1 table and its slots, laid out in a fake address space.
private struct TableBuilder {
    static let headerAddress: UInt64 = 0x10000
    var annotationAddress: UInt64 = 0x20000
    var breadcrumbAddress: UInt64 = 0x30000
    var keySize = 16, valueSize = 32, messageSize = 40
    var annotationSlots: [[UInt8]] = []
    var breadcrumbSlots: [[UInt8]] = []
    var breadcrumbNext: UInt64 = 0
    var declaredAnnotations: UInt32?
    var declaredBreadcrumbs: UInt32?
    var version: UInt32 = 1
    var next: UInt64 = 0

    var annotationStride: Int { round8(8 + keySize + valueSize) }
    var breadcrumbStride: Int { round8(24 + messageSize) }

    mutating func annotation(_ key: [UInt8], _ value: [UInt8], sequence: UInt32 = 2) {
        var slot = le(sequence) + le(UInt16(key.count)) + le(UInt16(value.count))
        slot += padded(key, keySize) + padded(value, valueSize)
        annotationSlots.append(padded(slot, annotationStride))
    }

    mutating func freeAnnotation() { annotationSlots.append([UInt8](repeating: 0, count: annotationStride)) }

    mutating func breadcrumb(_ message: [UInt8], index: UInt64, level: UInt8 = 1, time: Int64 = 1_764_000_000_000_000_000,
                             sequence: UInt32 = 2) {
        var slot = le(sequence) + [level, 0] + le(UInt16(message.count)) + le(index) + le(UInt64(bitPattern: time))
        slot += padded(message, messageSize)
        breadcrumbSlots.append(padded(slot, breadcrumbStride))
    }

    var header: [UInt8] {
        var bytes = Array("CWTABLE".utf8) + [0] + le(version) + le(UInt32(72))
        bytes += le(annotationAddress) + le(declaredAnnotations ?? UInt32(annotationSlots.count)) + le(UInt16(keySize)) + le(UInt16(valueSize))
        bytes += le(breadcrumbAddress) + le(declaredBreadcrumbs ?? UInt32(breadcrumbSlots.count)) + le(UInt16(messageSize)) + le(UInt16(0))
        bytes += le(breadcrumbNext) + le(next) + le(UInt64(0))
        return bytes
    }

    /// The fake memory: header and both arrays.
    var memory: [UInt64: [UInt8]] {
        [Self.headerAddress: header, annotationAddress: annotationSlots.flatMap { $0 }, breadcrumbAddress: breadcrumbSlots.flatMap { $0 }]
    }

    var table: RawAnnotationTable {
        RawAnnotationTable(address: Self.headerAddress, image: "/app", annotationSlots: annotationSlots.count,
                           breadcrumbSlots: breadcrumbSlots.count, bytes: 0)
    }

    func decode(captureTime: Int64 = 1_764_000_100_000_000_000) -> AppAnnotations {
        AnnotationDecoder.decode([table], captureTimeNanoseconds: captureTime, read: read(memory))
    }
}

private func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
private func padded(_ bytes: [UInt8], _ size: Int) -> [UInt8] { bytes + [UInt8](repeating: 0, count: max(size - bytes.count, 0)) }

/// Reads from regions held by start address: a range must lie within one region.
private func read(_ memory: [UInt64: [UInt8]]) -> (UInt64, Int) -> [UInt8]? {
    { address, count in
        for (start, bytes) in memory where start <= address && address - start + UInt64(count) <= UInt64(bytes.count) {
            let offset = Int(address - start)
            return Array(bytes[offset..<offset + count])
        }
        return nil
    }
}

@Suite struct AnnotationDecoderTests {
    @Test("annotations are decoded slot by slot: free slots skipped, a torn one dropped and named, the first of a duplicate key kept")
    func annotations() {
        var table = TableBuilder()
        table.annotation(Array("user".utf8), Array("42".utf8))
        table.freeAnnotation()
        table.annotation(Array("half".utf8), Array("xx".utf8), sequence: 7)
        table.annotation(Array("user".utf8), Array("43".utf8))
        table.annotation(Array("long".utf8), Array("v".utf8))
        let decoded = table.decode()
        #expect(decoded.annotations == [AnnotationEntry(key: "user", value: "42"), AnnotationEntry(key: "long", value: "v")])
        #expect(decoded.softErrors.map(\.message) == ["the table at 0x10000: annotation 'half' was being written at the crash: dropped"])
        #expect(decoded.softErrors.allSatisfy { $0.stage == "annotations" && $0.image == "/app" })
        #expect(decoded.breadcrumbs == nil, "no ring declared")
    }

    @Test("lengths past the slot's sizes are dropped, never read beyond the slot")
    func malformedLengths() {
        var table = TableBuilder()
        table.annotation(Array("k".utf8), Array("v".utf8))
        // A key length of 200 in a 16-byte key field.
        table.annotationSlots[0].replaceSubrange(4..<6, with: le(UInt16(200)))
        let decoded = table.decode()
        #expect(decoded.annotations.isEmpty)
        #expect(decoded.softErrors.first?.message.contains("key length 200 or value length 1 past the slot's 16 and 32 bytes") == true)
    }

    @Test("invalid UTF-8 becomes U+FFFD with a soft error for each of key, value and message")
    func invalidUTF8() {
        var table = TableBuilder()
        table.annotation([0x62, 0xff], [0xc3, 0x28])
        table.breadcrumb([0xed, 0xa0, 0x80], index: 0)
        table.breadcrumbNext = 1
        let decoded = table.decode()
        #expect(decoded.annotations == [AnnotationEntry(key: "b\u{FFFD}", value: "\u{FFFD}(")])
        #expect(decoded.breadcrumbs?.map(\.message) == ["\u{FFFD}\u{FFFD}\u{FFFD}"])
        #expect(decoded.softErrors.filter { $0.message.contains("not UTF-8") }.count == 3)
    }

    @Test("a wrapped ring comes out oldest first; stale, misplaced and torn slots are dropped and named")
    func ring() {
        var table = TableBuilder()
        // Four slots, eleven breadcrumbs started: the window is 7..<11. Slot 3 holds 7, slot 0 holds 8, ...
        table.breadcrumb(Array("eight".utf8), index: 8)
        table.breadcrumb(Array("nine".utf8), index: 9, level: 3)
        table.breadcrumb(Array("ten".utf8), index: 10, sequence: 5)
        table.breadcrumb(Array("stale".utf8), index: 3)
        table.breadcrumbNext = 11
        let decoded = table.decode()
        #expect(decoded.breadcrumbs?.map(\.message) == ["eight", "nine"])
        #expect(decoded.breadcrumbs?.map(\.level) == ["info", "error"])
        #expect(decoded.softErrors.map(\.message) == [
            "the table at 0x10000: breadcrumb slot 2 was being written at the crash: dropped",
            "the table at 0x10000: breadcrumb slot 3 holds breadcrumb 3, outside the ring's window 7..<11: dropped",
        ])
    }

    @Test("a breadcrumb's time before 2000 or more than a day after the capture becomes nil; a plausible one is RFC 3339")
    func times() {
        var table = TableBuilder()
        table.breadcrumb(Array("old".utf8), index: 0, time: 5)
        table.breadcrumb(Array("future".utf8), index: 1, time: 1_764_000_100_000_000_000 + 2 * 86_400 * 1_000_000_000)
        table.breadcrumb(Array("now".utf8), index: 2, time: 1_764_000_000_123_000_000)
        table.breadcrumbNext = 3
        let decoded = table.decode()
        #expect(decoded.breadcrumbs?.map(\.time) == [nil, nil, "2025-11-24T16:00:00.123Z"])
    }

    @Test("a table of version 2 is skipped with a soft error; one too short or without magic likewise")
    func versions() {
        var table = TableBuilder()
        table.version = 2
        table.annotation(Array("k".utf8), Array("v".utf8))
        let decoded = table.decode()
        #expect(decoded.annotations.isEmpty)
        #expect(decoded.softErrors.map(\.message) == ["the table at 0x10000: table version 2: this crashwatch reads version 1 only"])
        var memory = table.memory
        memory[TableBuilder.headerAddress]![0] = 0x58
        #expect(AnnotationDecoder.decode([table.table], captureTimeNanoseconds: 0, read: read(memory)).softErrors.first?.message
            == "the table at 0x10000: no CWTABLE magic: not a table")
    }

    @Test("the capture's slot counts are capped again; slots it did not copy are named, never read")
    func missingSlots() {
        var table = TableBuilder()
        table.annotation(Array("k".utf8), Array("v".utf8))
        var raw = table.table
        raw.annotationSlots = 1 << 30
        var memory = table.memory
        memory[table.annotationAddress] = nil
        let decoded = AnnotationDecoder.decode([raw], captureTimeNanoseconds: 0, read: read(memory))
        #expect(decoded.annotations.isEmpty)
        #expect(decoded.softErrors.map(\.message) == ["the table at 0x10000: its annotation slots were not captured"])
    }

    @Test("the plan caps counts and sizes: 2^30 slots read as 256, 64 KiB keys not at all, the table's bytes within its budget")
    func plan() throws {
        var table = TableBuilder()
        table.declaredAnnotations = 1 << 30
        table.declaredBreadcrumbs = 0xffff_ffff
        let header = try AnnotationTableHeader.parse(table.header).get()
        let (annotations, breadcrumbs, problems) = header.plan(budget: AnnotationFormat.maximumTableBytes)
        #expect(annotations == 256 && breadcrumbs == 256)
        #expect(problems.count == 2)
        let small = header.plan(budget: 72 + 10 * 56)
        #expect(small.annotations == 10 && small.breadcrumbs == 0)
        table.keySize = 65535
        let huge = try AnnotationTableHeader.parse(table.header).get().plan(budget: AnnotationFormat.maximumTableBytes)
        #expect(huge.annotations == 0)
        #expect(huge.problems.first?.message.hasPrefix("annotation slots of key size 65535") == true)
    }

    @Test("the operator's value wins a key; denied keys are redacted, case-insensitively, app and operator alike")
    func merging() {
        let merged = AnnotationRules.merged(
            app: [("region", "us-east-1"), ("Session_Token", "abc"), ("user", "42")],
            operator: ["region": "eu-west-1", "db_password": "p"], deny: AnnotationRules.defaultDeny)
        #expect(merged == ["region": "eu-west-1", "Session_Token": "<redacted>", "user": "42", "db_password": "<redacted>"])
        #expect(AnnotationRules.merged(app: [], operator: [:], deny: []) == nil)
        let many = (0..<300).map { ("k\($0)", "v") }
        #expect(AnnotationRules.merged(app: many, operator: ["op": "1"], deny: [])?.count == 256)
        #expect(AnnotationRules.merged(app: many, operator: ["op": "1"], deny: [])?["op"] == "1")
    }

    @Test("an operator annotation is KEY=VALUE with a printable ASCII key of 1 to 128 bytes and a value of at most 1024")
    func operatorSyntax() {
        #expect((try? AnnotationRules.operatorAnnotation("region=eu-west-1").get()).map { [$0.key, $0.value] } == ["region", "eu-west-1"])
        #expect((try? AnnotationRules.operatorAnnotation("note=a=b").get()).map { [$0.key, $0.value] } == ["note", "a=b"])
        for bad in ["novalue", "=v", "sp ace=v", "\(String(repeating: "k", count: 129))=v", "k=\(String(repeating: "v", count: 1025))", "é=v"] {
            #expect((try? AnnotationRules.operatorAnnotation(bad).get()) == nil, "\(bad) was accepted")
        }
    }

    @Test("breadcrumbs of several tables merge by time, oldest first, the newest 256 kept")
    func mergeRings() {
        let crumb = { (text: String) in BreadcrumbRecord(time: nil, level: "info", message: text) }
        let merged = AnnotationDecoder.merge([[(1, crumb("a1")), (3, crumb("a3")), (nil, crumb("a3+"))], [(2, crumb("b2")), (4, crumb("b4"))]])
        #expect(merged.map(\.message) == ["a1", "b2", "a3", "a3+", "b4"])
        let long = (0..<300).map { (Int64($0) as Int64?, crumb("\($0)")) }
        #expect(AnnotationDecoder.merge([long]).map(\.message) == (44..<300).map { "\($0)" })
    }
}
