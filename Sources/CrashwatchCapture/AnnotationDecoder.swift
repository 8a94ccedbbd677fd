// AnnotationDecoder.swift — the worker's decoding of the annotation tables a capture copied (`AnnotationCapture`)
// into the app's annotations and breadcrumbs. The bytes are the crashed program's: no length, index, UTF-8
// string or time is trusted. A torn entry (odd sequence) is dropped and named; a breadcrumb outside the ring's
// window [next - count, next) or in the wrong slot is dropped; invalid UTF-8 becomes U+FFFD with a soft error; a
// time before 2000 or more than a day after the capture becomes nil. Within the app, the first table (in the
// capture's order) wins a key; breadcrumbs come out oldest first, at most the report's cap. Soft errors have the
// stage `annotations`.
import CrashwatchModel

/// What the app's tables held: annotations in precedence order, breadcrumbs oldest first, and what was wrong.
public struct AppAnnotations: Sendable, Equatable {
    /// Key and value, the first of a key kept.
    public var annotations: [AnnotationEntry] = []
    /// Nil when no table declared a breadcrumb ring.
    public var breadcrumbs: [BreadcrumbRecord]?
    public var softErrors: [SoftError] = []

    public init() {}
}

/// One annotation as the app set it.
public struct AnnotationEntry: Sendable, Equatable {
    public var key: String
    public var value: String
}

/// Decodes copied annotation tables.
public enum AnnotationDecoder {
    /// Times before this are not plausible (2000-01-01T00:00:00Z, nanoseconds).
    static let earliestTime: Int64 = 946_684_800 * 1_000_000_000
    /// Times later than the capture by more than this are not plausible.
    static let latestAfterCapture: Int64 = 86_400 * 1_000_000_000

    /// The app's annotations in `source`'s capture (its regions hold the tables); nil when it declared no table.
    public static func decode(_ source: some CaptureSource) -> AppAnnotations? {
        let capture = source.capture
        guard let tables = capture.annotationTables else { return nil }
        let regions = source.regions
        return decode(tables, captureTimeNanoseconds: capture.timeNanoseconds) { address, count in
            for region in regions where region.address <= address {
                let offset = address - region.address
                guard offset <= UInt64(region.bytes.count), UInt64(count) <= UInt64(region.bytes.count) - offset else { continue }
                return Array(region.bytes[Int(offset)..<Int(offset) + count])
            }
            return nil
        }
    }

    /// Decodes `tables`, whose bytes `read` gives (address, count → the bytes, nil when not captured).
    public static func decode(_ tables: [RawAnnotationTable], captureTimeNanoseconds: Int64,
                              read: (UInt64, Int) -> [UInt8]?) -> AppAnnotations {
        var result = AppAnnotations()
        var seen = Set<String>()
        var annotationsCut = false
        var rings: [[(time: Int64?, crumb: BreadcrumbRecord)]] = []
        func problem(_ table: RawAnnotationTable, _ message: String) {
            result.softErrors.append(SoftError(stage: "annotations", image: table.image, message: "the table at \(hex(table.address)): \(message)"))
        }
        for table in tables.prefix(AnnotationFormat.maximumTables) {
            guard let bytes = read(table.address, AnnotationFormat.headerSize) else {
                problem(table, "its header was not captured")
                continue
            }
            let header: AnnotationTableHeader
            switch AnnotationTableHeader.parse(bytes) {
            case .success(let parsed): header = parsed
            case .failure(let why):
                problem(table, why.message)
                continue
            }
            // Annotations: the first of a key wins, here and across tables.
            let annotationSlots = min(table.annotationSlots, AnnotationFormat.maximumAnnotationSlots, Int(header.annotations.count))
            if annotationSlots > 0, let slots = read(header.annotations.address, header.annotations.bytes(annotationSlots)) {
                for number in 0..<annotationSlots {
                    let slot = slots[(number * header.annotations.stride)..<((number + 1) * header.annotations.stride)]
                    switch AnnotationSlot(slot, keySize: header.keySize, valueSize: header.valueSize) {
                    case .free: continue
                    case .torn(let key):
                        problem(table, "annotation '\(text(key, nil))' was being written at the crash: dropped")
                    case .malformed(let why):
                        problem(table, "annotation slot \(number): \(why): dropped")
                    case .entry(let keyBytes, let valueBytes):
                        let key = text(keyBytes) { problem(table, "annotation slot \(number): the key is not UTF-8 (replaced by U+FFFD)") }
                        let value = text(valueBytes) { problem(table, "annotation '\(key)': the value is not UTF-8 (replaced by U+FFFD)") }
                        guard seen.insert(key).inserted else { continue }
                        if result.annotations.count < AnnotationFormat.maximumAnnotations {
                            result.annotations.append(AnnotationEntry(key: key, value: value))
                        } else if !annotationsCut {
                            annotationsCut = true
                            problem(table, "more than \(AnnotationFormat.maximumAnnotations) annotations: the rest dropped")
                        }
                    }
                }
            } else if annotationSlots > 0 {
                problem(table, "its annotation slots were not captured")
            }
            // Breadcrumbs: the ring's window, by index.
            guard header.breadcrumbs.count > 0 else { continue }
            if result.breadcrumbs == nil { result.breadcrumbs = [] }
            let breadcrumbSlots = min(table.breadcrumbSlots, AnnotationFormat.maximumBreadcrumbSlots, Int(header.breadcrumbs.count))
            guard breadcrumbSlots > 0, let slots = read(header.breadcrumbs.address, header.breadcrumbs.bytes(breadcrumbSlots)) else {
                if breadcrumbSlots > 0 { problem(table, "its breadcrumb slots were not captured") }
                continue
            }
            let count = header.breadcrumbs.count, next = header.breadcrumbNext
            let window = (next >= count ? next - count : 0)..<next
            var ring: [(index: UInt64, time: Int64?, crumb: BreadcrumbRecord)] = []
            for number in 0..<breadcrumbSlots {
                let slot = slots[(number * header.breadcrumbs.stride)..<((number + 1) * header.breadcrumbs.stride)]
                switch BreadcrumbSlot(slot, messageSize: header.messageSize) {
                case .empty: continue
                case .torn: problem(table, "breadcrumb slot \(number) was being written at the crash: dropped")
                case .malformed(let why): problem(table, "breadcrumb slot \(number): \(why): dropped")
                case .entry(let index, let level, let time, let message):
                    guard window.contains(index), index % count == UInt64(number) else {
                        problem(table, "breadcrumb slot \(number) holds breadcrumb \(index), outside the ring's window \(window.lowerBound)..<\(window.upperBound): dropped")
                        continue
                    }
                    let plausible = time >= earliestTime && time <= captureTimeNanoseconds &+ latestAfterCapture ? time : nil
                    let words = text(message) { problem(table, "breadcrumb \(index): the message is not UTF-8 (replaced by U+FFFD)") }
                    ring.append((index, plausible, BreadcrumbRecord(
                        time: plausible.map { RFC3339.format(nanosecondsSinceEpoch: $0) },
                        level: BreadcrumbRecord.levelName(Int(level)), message: words)))
                }
            }
            rings.append(ring.sorted { $0.index < $1.index }.map { ($0.time, $0.crumb) })
        }
        if result.breadcrumbs != nil { result.breadcrumbs = merge(rings) }
        return result
    }

    /// The rings' breadcrumbs in one list, oldest first by time (a breadcrumb without a time goes with the one
    /// before it in its ring), the newest `AnnotationFormat.maximumBreadcrumbs`.
    static func merge(_ rings: [[(time: Int64?, crumb: BreadcrumbRecord)]]) -> [BreadcrumbRecord] {
        var all: [(time: Int64, ring: Int, position: Int, crumb: BreadcrumbRecord)] = []
        for (number, ring) in rings.enumerated() {
            var last = Int64.min
            for (position, item) in ring.enumerated() {
                last = item.time.map { max($0, last) } ?? last
                all.append((last, number, position, item.crumb))
            }
        }
        all.sort { ($0.time, $0.ring, $0.position) < ($1.time, $1.ring, $1.position) }
        return all.suffix(AnnotationFormat.maximumBreadcrumbs).map(\.crumb)
    }

    /// `bytes` as UTF-8; invalid sequences replaced by U+FFFD, with `invalid` called.
    private static func text(_ bytes: [UInt8], _ invalid: (() -> Void)?) -> String {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        invalid?()
        return String(decoding: bytes, as: UTF8.self)
    }
}
