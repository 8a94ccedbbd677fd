// AnnotationCapture.swift — the copy of a held process's annotation tables (`AnnotationFormat`) into its raw
// capture, after the stacks: from the tables its images' notes declare (found while identifying them) and the
// `next` chains, each address once, at most 64 tables, 512 KiB each and 2 MiB in all. A table's header is read
// only when it lies in readable memory of the process, its slot arrays only when they lie in writable memory;
// a header is read once (one read), its two slot arrays then (one read each), and copied as read: the worker
// decodes the very bytes this code checked. What is refused, and why, becomes a soft error of stage
// `annotations`.
import CrashwatchModel
import CrashwatchSystem

/// A table the capture copied: where, who declared it, and how many slots of each array it holds.
public struct RawAnnotationTable: Codable, Sendable, Equatable {
    /// The table header's address (a region of the capture holds its first 72 bytes).
    public var address: UInt64
    /// The path of the image whose note declared it; nil for a table reached through another's `next`.
    public var image: String?
    /// The annotation slots copied (from the first): their array is a region of the capture.
    public var annotationSlots: Int
    /// The breadcrumb slots copied (from the first).
    public var breadcrumbSlots: Int
    /// The bytes copied: the header and both arrays' slots.
    public var bytes: Int

    public init(address: UInt64, image: String?, annotationSlots: Int, breadcrumbSlots: Int, bytes: Int) {
        self.address = address
        self.image = image
        self.annotationSlots = annotationSlots
        self.breadcrumbSlots = breadcrumbSlots
        self.bytes = bytes
    }
}

/// A table an image's note declares.
struct AnnotationRoot {
    let address: UInt64
    let image: String
}

extension CaptureReader {
    /// Copies the tables `roots` declare, and those their `next` fields lead to, into the capture; nil when no
    /// image declared any. `roots` come in address order; the executable's (at the path `executable`) go first,
    /// then the libraries' from the highest address down: the dynamic linker maps each library below the ones
    /// before it, so this is their load order (a dlopen'ed one last) without reading its link map while held.
    mutating func copyAnnotationTables(_ roots: [AnnotationRoot], executable: String?, writer: inout RawCaptureWriter)
        -> [RawAnnotationTable]?
    {
        guard !roots.isEmpty else { return nil }
        var libraries: [[AnnotationRoot]] = []
        for root in roots where root.image != executable {
            if libraries.last?.first?.image == root.image { libraries[libraries.count - 1].append(root) } else { libraries.append([root]) }
        }
        let ordered = roots.filter { $0.image == executable } + libraries.reversed().flatMap { $0 }
        var pending: [(address: UInt64, image: String?)] = ordered.map { ($0.address, $0.image) }
        var visited = Set<UInt64>()
        var tables: [RawAnnotationTable] = []
        var totalBytes = 0
        var index = 0
        while index < pending.count {
            let (address, image) = pending[index]
            index += 1
            guard visited.count < AnnotationFormat.maximumTables, index <= 2 * AnnotationFormat.maximumTables else {
                problem("\(pending.count - index + 1) more tables not read: at most \(AnnotationFormat.maximumTables) are", image: image)
                break
            }
            guard visited.insert(address).inserted else {
                problem("the table at \(hex(address)) was reached again (a `next` loop): read once", image: image)
                continue
            }
            guard Clock.monotonicNanoseconds() < deadline else {
                softErrors.append(SoftError(stage: "deadline", message: "capture deadline passed before the annotation tables were copied"))
                break
            }
            let budget = min(AnnotationFormat.maximumTableBytes, AnnotationFormat.maximumTotalBytes - totalBytes, remainingBytes)
            guard budget >= AnnotationFormat.headerSize else {
                problem("the table at \(hex(address)) not read: the annotation byte caps are reached", image: image)
                continue
            }
            guard lies(address, AnnotationFormat.headerSize, writable: false) else {
                problem("the table at \(hex(address)) is not in readable memory", image: image)
                continue
            }
            let headerBytes = memory?.read(address: address, count: AnnotationFormat.headerSize) ?? []
            guard headerBytes.count == AnnotationFormat.headerSize else {
                problem("the table at \(hex(address)) could not be read", image: image)
                continue
            }
            let header: AnnotationTableHeader
            switch AnnotationTableHeader.parse(headerBytes) {
            case .success(let parsed): header = parsed
            case .failure(let why):
                problem("the table at \(hex(address)): \(why.message)", image: image)
                continue
            }
            var (annotationSlots, breadcrumbSlots, problems) = header.plan(budget: budget)
            for why in problems { problem("the table at \(hex(address)): \(why.message)", image: image) }
            annotationSlots = readableSlots(header.annotations, annotationSlots, what: "annotation", image: image)
            breadcrumbSlots = readableSlots(header.breadcrumbs, breadcrumbSlots, what: "breadcrumb", image: image)
            do {
                try writer.appendRegion(address: address, bytes: headerBytes)
                annotationSlots = try copySlots(header.annotations, annotationSlots, writer: &writer)
                breadcrumbSlots = try copySlots(header.breadcrumbs, breadcrumbSlots, writer: &writer)
            } catch {
                softErrors.append(SoftError(stage: "capture", message: "cannot write the capture file"))
                break
            }
            let bytes = AnnotationFormat.headerSize + header.annotations.bytes(annotationSlots) + header.breadcrumbs.bytes(breadcrumbSlots)
            totalBytes += bytes
            capturedBytes += bytes
            tables.append(RawAnnotationTable(address: address, image: image, annotationSlots: annotationSlots,
                                              breadcrumbSlots: breadcrumbSlots, bytes: bytes))
            if header.next != 0 { pending.append((header.next, nil)) }
        }
        return tables
    }

    /// `slots` of `array`, or 0 with a soft error when they do not lie in writable memory of the process.
    private mutating func readableSlots(_ array: SlotArray, _ slots: Int, what: String, image: String?) -> Int {
        guard slots > 0 else { return 0 }
        guard lies(array.address, array.bytes(slots), writable: true) else {
            problem("\(what) slots at \(hex(array.address)) (\(array.bytes(slots)) bytes) are not in writable memory: not read", image: image)
            return 0
        }
        return slots
    }

    /// Copies the first `slots` slots of `array` as one region, read from the process straight into the buffer
    /// the region is written from (one read, one write); the slots copied (0 when the read fell short).
    private mutating func copySlots(_ array: SlotArray, _ slots: Int, writer: inout RawCaptureWriter) throws(SystemError) -> Int {
        guard slots > 0, let memory else { return 0 }
        let count = array.bytes(slots)
        var failure: SystemError?
        var whole = 0
        // The region's header before the bytes, room for its padding after.
        withUnsafeTemporaryAllocation(byteCount: 16 + count + 8, alignment: 8) { buffer in
            let got = memory.read(address: array.address, into: UnsafeMutableRawBufferPointer(rebasing: buffer[16..<16 + count]))
            whole = got / array.stride
            guard whole > 0 else { return }
            do throws(SystemError) { try writer.appendRegion(address: array.address, inPlace: buffer, count: whole * array.stride) } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return whole
    }

    /// Whether [address, address + count) lies in contiguous readable mappings of the process (writable ones
    /// when `writable`) that may be read.
    func lies(_ address: UInt64, _ count: Int, writable: Bool) -> Bool {
        guard count > 0 else { return true }
        let (end, overflow) = address.addingReportingOverflow(UInt64(count))
        guard !overflow else { return false }
        var at = address
        for mapping in table.mappings where mapping.end > at {
            guard mapping.start <= at, mapping.permissions.isReadable, !writable || mapping.permissions.isWritable,
                  mayRead(mapping) else { return false }
            at = mapping.end
            if at >= end { return true }
        }
        return false
    }

    private mutating func problem(_ message: String, image: String?) {
        softErrors.append(SoftError(stage: "annotations", image: image, message: message))
    }
}
