// AnnotationFormat.swift — the annotation table format, version 1 (annotations/crashwatch_annotations.h,
// docs/annotations.md), as crashwatch reads it: the `crashwatch` note that declares a table, the table's
// 72-byte header, the slots of its two arrays, and every cap the reader applies. Pure functions over bytes,
// shared by the capture (which copies tables out of a held process) and the decoder (the worker, over the
// copied bytes), so both agree on what a table is. Every field comes from the crashed program: nothing here
// trusts a length, a count or an address it has not checked.
import CrashwatchSymbols

/// The format's constants and the reader's caps.
public enum AnnotationFormat {
    /// The note's owner name and type.
    static let noteOwner = "crashwatch"
    static let noteType: UInt32 = 1
    /// The table's first 8 bytes.
    static let magic: [UInt8] = Array("CWTABLE".utf8) + [0]
    /// The layout this reader decodes; a table of another version is skipped with a soft error.
    static let version: UInt32 = 1
    /// The bytes of a version 1 header (a later compatible layout only grows it; the rest is not read).
    static let headerSize = 72

    /// Tables read at most per process (notes and `next` chains together, each address once).
    public static let maximumTables = 64
    /// A table's header and slot arrays, at most.
    public static let maximumTableBytes = 512 << 10
    /// All tables' bytes together, at most.
    public static let maximumTotalBytes = 2 << 20
    /// Slots read per table, and the slot sizes read at all.
    public static let maximumAnnotationSlots = 256
    public static let maximumKeySize = 128
    public static let maximumValueSize = 1024
    public static let maximumBreadcrumbSlots = 256
    public static let maximumMessageSize = 1024
    /// Annotations and breadcrumbs a report carries in all.
    public static let maximumAnnotations = 256
    public static let maximumBreadcrumbs = 256

    /// Whether `note` declares a table (owner `crashwatch`, type 1; the descriptor is checked by `tableAddress`).
    static func isTableNote(_ note: ELFNote) -> Bool { note.name == noteOwner && note.type == noteType }

    /// The table a note declares, its descriptor being at `descriptorAt` in the process: the descriptor holds
    /// the table's address minus its own. Nil for a descriptor that is not 8 bytes.
    static func tableAddress(_ note: ELFNote, descriptorAt address: UInt64) -> UInt64? {
        guard note.descriptor.count == 8, let delta = ByteReader(note.descriptor).u64(0) else { return nil }
        return address &+ delta
    }
}

/// A table's slot array as its header declares it.
struct SlotArray: Equatable {
    /// Where its first slot is.
    let address: UInt64
    /// How many slots the header declares (not all may be read).
    let count: UInt64
    /// The bytes of one slot.
    let stride: Int

    /// The bytes of `slots` slots.
    func bytes(_ slots: Int) -> Int { slots * stride }
}

/// A version 1 table header, every field as the process held it.
struct AnnotationTableHeader: Equatable {
    let version: UInt32
    let headerSize: UInt32
    let annotations: SlotArray
    let keySize: Int
    let valueSize: Int
    let breadcrumbs: SlotArray
    let messageSize: Int
    /// Breadcrumbs ever started: the ring's write index.
    let breadcrumbNext: UInt64
    /// A further table's address, 0 for none.
    let next: UInt64

    /// The header in `bytes` (at least 72 of them), or why it is no table this reader decodes.
    static func parse(_ bytes: [UInt8]) -> Result<AnnotationTableHeader, AnnotationProblem> {
        let reader = ByteReader(bytes)
        guard bytes.count >= AnnotationFormat.headerSize else { return .failure(.init("the table header is cut short")) }
        guard Array(bytes.prefix(8)) == AnnotationFormat.magic else { return .failure(.init("no CWTABLE magic: not a table")) }
        guard let version = reader.u32(8), let headerSize = reader.u32(12), let annotations = reader.u64(16),
              let annotationCount = reader.u32(24), let keySize = reader.u16(28), let valueSize = reader.u16(30),
              let breadcrumbs = reader.u64(32), let breadcrumbCount = reader.u32(40), let messageSize = reader.u16(44),
              let breadcrumbNext = reader.u64(48), let next = reader.u64(56)
        else { return .failure(.init("the table header is cut short")) }
        guard version == AnnotationFormat.version else {
            return .failure(.init("table version \(version): this crashwatch reads version \(AnnotationFormat.version) only"))
        }
        guard headerSize >= UInt32(AnnotationFormat.headerSize) else {
            return .failure(.init("header size \(headerSize) is below \(AnnotationFormat.headerSize)"))
        }
        return .success(AnnotationTableHeader(
            version: version, headerSize: headerSize,
            annotations: SlotArray(address: annotations, count: UInt64(annotationCount), stride: round8(8 + Int(keySize) + Int(valueSize))),
            keySize: Int(keySize), valueSize: Int(valueSize),
            breadcrumbs: SlotArray(address: breadcrumbs, count: UInt64(breadcrumbCount), stride: round8(24 + Int(messageSize))),
            messageSize: Int(messageSize), breadcrumbNext: breadcrumbNext, next: next))
    }

    /// How many slots of each array are read within `budget` bytes (the header's included) and the caps, and
    /// what the caps left out.
    func plan(budget: Int) -> (annotations: Int, breadcrumbs: Int, problems: [AnnotationProblem]) {
        var problems: [AnnotationProblem] = []
        var left = max(budget - AnnotationFormat.headerSize, 0)
        func slots(_ array: SlotArray, what: String, sizesFit: Bool, sizes: String, cap: Int) -> Int {
            guard array.count > 0 else { return 0 }
            guard sizesFit else {
                problems.append(.init("\(what) slots of \(sizes) are past the caps: not read"))
                return 0
            }
            var count = Int(min(array.count, UInt64(cap)))
            if array.count > UInt64(cap) { problems.append(.init("\(array.count) \(what) slots declared: the first \(cap) read")) }
            let fitting = left / array.stride
            if fitting < count {
                problems.append(.init("\(what) slots past the table byte caps: \(fitting) of \(count) read"))
                count = fitting
            }
            left -= array.bytes(count)
            return count
        }
        let annotationSlots = slots(annotations, what: "annotation",
                                    sizesFit: keySize > 0 && keySize <= AnnotationFormat.maximumKeySize && valueSize <= AnnotationFormat.maximumValueSize,
                                    sizes: "key size \(keySize) and value size \(valueSize) (at most \(AnnotationFormat.maximumKeySize) and \(AnnotationFormat.maximumValueSize))",
                                    cap: AnnotationFormat.maximumAnnotationSlots)
        let breadcrumbSlots = slots(breadcrumbs, what: "breadcrumb",
                                    sizesFit: messageSize <= AnnotationFormat.maximumMessageSize,
                                    sizes: "message size \(messageSize) (at most \(AnnotationFormat.maximumMessageSize))",
                                    cap: AnnotationFormat.maximumBreadcrumbSlots)
        return (annotationSlots, breadcrumbSlots, problems)
    }
}

/// Why a table, or part of one, was not read: a soft error's message.
struct AnnotationProblem: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}

/// One annotation slot's content.
enum AnnotationSlot: Equatable {
    /// Never written, or its key removed.
    case free
    /// Being written at the crash (odd sequence): the key as far as it can be read, for the soft error.
    case torn(key: [UInt8])
    /// Lengths past the slot's sizes.
    case malformed(String)
    case entry(key: [UInt8], value: [UInt8])

    /// The slot in `bytes` (one stride of them) of a table with these key and value sizes.
    init(_ bytes: ArraySlice<UInt8>, keySize: Int, valueSize: Int) {
        let reader = ByteReader(bytes)
        guard let sequence = reader.u32(0), let keyLength = reader.u16(4).map(Int.init), let valueLength = reader.u16(6).map(Int.init),
              bytes.count >= 8 + keySize + valueSize else {
            self = .malformed("annotation slot cut short")
            return
        }
        let start = bytes.startIndex + 8
        if sequence & 1 == 1 {
            self = .torn(key: Array(bytes[start..<start + min(keyLength, keySize)]))
        } else if keyLength == 0 {
            self = .free
        } else if keyLength > keySize || valueLength > valueSize {
            self = .malformed("key length \(keyLength) or value length \(valueLength) past the slot's \(keySize) and \(valueSize) bytes")
        } else {
            self = .entry(key: Array(bytes[start..<start + keyLength]),
                          value: Array(bytes[(start + keySize)..<(start + keySize + valueLength)]))
        }
    }
}

/// One breadcrumb slot's content.
enum BreadcrumbSlot: Equatable {
    /// Never written (sequence 0).
    case empty
    /// Being written at the crash (odd sequence).
    case torn
    case malformed(String)
    case entry(index: UInt64, level: UInt8, time: Int64, message: [UInt8])

    /// The slot in `bytes` (one stride of them) of a table with this message size.
    init(_ bytes: ArraySlice<UInt8>, messageSize: Int) {
        let reader = ByteReader(bytes)
        guard let sequence = reader.u32(0), let level = reader.integer(UInt8.self, at: 4), let length = reader.u16(6).map(Int.init),
              let index = reader.u64(8), let time = reader.u64(16), bytes.count >= 24 + messageSize else {
            self = .malformed("breadcrumb slot cut short")
            return
        }
        if sequence == 0 {
            self = .empty
        } else if sequence & 1 == 1 {
            self = .torn
        } else if length > messageSize {
            self = .malformed("message length \(length) past the slot's \(messageSize) bytes")
        } else {
            let start = bytes.startIndex + 24
            self = .entry(index: index, level: level, time: Int64(bitPattern: time), message: Array(bytes[start..<start + length]))
        }
    }
}

/// Rounds up to a multiple of 8.
func round8(_ value: Int) -> Int { (value + 7) & ~7 }
