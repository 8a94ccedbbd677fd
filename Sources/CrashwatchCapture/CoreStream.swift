// CoreStream.swift — a core dump read once, front to back, from a pipe (what the kernel gives a
// `core_pattern` helper), keeping only what a report needs, so a 1 GiB core costs a few MiB: the headers,
// the notes, each thread's stack from just below its stack pointer up (at most `stackBytesPerThread`), the
// first bytes of each file mapping (its ELF headers and build-id note) and the vdso. The rest is read and
// dropped. What is kept is laid out as a smaller core in a memfd, which `CoreFile` then reads like any core.
import CrashwatchModel
import CrashwatchSymbols
import CrashwatchSystem

public enum CoreStream {
    /// The most bytes kept of a file mapping (its headers and notes live at its start).
    static let fileHeadBytes: UInt64 = 64 << 10
    /// The most bytes kept of any other segment of a core without NT_FILE (see `compact`).
    static let unnamedSegmentBytes: UInt64 = 1 << 20
    /// The most bytes of notes kept, whatever the memory limit (see `CoreNotes`).
    public static let noteLimit = 64 << 20
    /// The most bytes a compact core's headers take (an ELF header and 65,535 program headers).
    public static let headerBytes = 64 + 56 * 0xffff

    /// The bytes of notes kept for a memory limit of `limit`: half of it (at most `noteLimit`); the memory
    /// kept gets the rest.
    public static func noteBudget(memoryLimit limit: Int) -> Int { min(noteLimit, max(limit, 0) / 2) }

    /// Reads the core on `input` and returns the compact core, how many bytes of memory were dropped, and
    /// what of the core was dropped or refused, a sentence each (soft errors of the report). Notes and memory
    /// kept take at most `limit` bytes together (notes at most half). Throws for a stream that is not a
    /// 64-bit core dump. Every size, offset and count in the stream is checked before use: a segment whose
    /// bytes would end past the top of the address space or the file is left out, and said so.
    public static func compact(_ input: InputStream, stackBytesPerThread: Int, limit: Int) throws
        -> (core: OwnedDescriptor, dropped: UInt64, problems: [String])
    {
        let header = try input.read(64)
        guard header.count == 64 else { throw CoreFileError("not an ELF file (\(header.count) bytes)") }
        func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt16.self) } }
        func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 { bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt32.self) } }
        func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 { bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) } }
        let architecture = try header.withUnsafeBytes { raw throws(CoreFileError) in try CoreFile.architecture(ofHeader: raw) }
        let headerOffset = u64(header, 32), headerSize = Int(u16(header, 54)), headerCount = Int(u16(header, 56))
        // 56 bytes is an ELF64 program header; a larger entry size is allowed, not one that would make the
        // table gigabytes (65,534 entries at most).
        guard headerOffset >= 64, headerSize >= 56, headerSize <= 256, headerCount != 0xffff else {
            throw CoreFileError("program headers out of place")
        }
        try input.skip(headerOffset - 64)
        let table = try input.read(headerSize * headerCount)
        guard table.count == headerSize * headerCount else { throw CoreFileError("the stream ends in the program headers") }

        struct Segment {
            var type: UInt32, flags: UInt32, offset: UInt64, address: UInt64, fileSize: UInt64, memorySize: UInt64, alignment: UInt64
        }
        var problems: [String] = []
        var segments: [Segment] = []
        for index in 0..<headerCount {
            let at = index * headerSize
            let segment = Segment(type: u32(table, at), flags: u32(table, at + 4), offset: u64(table, at + 8), address: u64(table, at + 16),
                                  fileSize: u64(table, at + 32), memorySize: u64(table, at + 40), alignment: u64(table, at + 48))
            guard segment.type == 1 || segment.type == 4 else { continue }  // PT_LOAD, PT_NOTE: nothing else is read
            if let problem = CoreFile.segmentProblem(index: index, type: segment.type, offset: segment.offset, address: segment.address,
                                                     fileSize: segment.fileSize, memorySize: segment.memorySize) {
                problems.append(problem)
                continue
            }
            segments.append(segment)
        }
        // Read in file order; the kernel writes the notes first.
        var notes = CoreNotes(memoryLimit: limit)
        var kept: [(segment: Int, start: UInt64, bytes: [UInt8])] = []
        var keptTotal = 0
        var dropped: UInt64 = 0
        var stackPointers: [UInt64] = []
        var fileStarts = Set<UInt64>()
        var vdso: UInt64?
        // A core without NT_FILE (qemu's) names its files only through the dynamic linker's list in its data
        // (LinkMap): then the start of every segment is kept, as far as the limit allows.
        var hasFileNote = false
        // Each thread's stack: the segment its stack pointer is in, or (a stack overflow: the pointer in the guard
        // page) the next readable one at most 64 KiB above it — the rule of a live capture (`planStack`) —
        // from just below the red zone. Worked out once per set of notes: segment index → lowest start.
        let readable = segments.indices.filter { segments[$0].type == 1 && segments[$0].flags & 4 != 0 && segments[$0].fileSize > 0 }
            .sorted { segments[$0].address < segments[$1].address }
        let redZone: UInt64 = architecture == .x86_64 ? 128 : 0
        var stackLows: [Int: UInt64]?
        func computeStackLows() -> [Int: UInt64] {
            var lows: [Int: UInt64] = [:]
            for sp in stackPointers {
                // The first readable segment ending above sp (segments do not overlap: ends ascend with starts).
                var low = 0, high = readable.count
                while low < high {
                    let middle = (low + high) / 2
                    let candidate = segments[readable[middle]]
                    if candidate.address &+ candidate.fileSize > sp { high = middle } else { low = middle + 1 }
                }
                guard low < readable.count, segments[readable[low]].address <= sp &+ 65536 else { continue }
                let index = readable[low]
                let start = max(segments[index].address, sp >= redZone ? sp - redZone : 0)
                lows[index] = min(lows[index] ?? start, start)
            }
            return lows
        }
        for index in segments.indices.sorted(by: { segments[$0].offset < segments[$1].offset }) {
            let segment = segments[index]
            guard segment.fileSize > 0, segment.offset >= input.position else { continue }
            try input.skip(segment.offset - input.position)
            if segment.type == 4 {  // PT_NOTE
                let before = notes.kept.count
                var source = StreamNoteSource(input: input, remaining: segment.fileSize)
                try notes.scan(&source, alignment: 4)
                // Only this segment's notes are new: what they add is added (never a pass over all so far).
                let added = Array(notes.kept[before...])
                stackPointers += added.filter { $0.name == "CORE" && $0.type == CoreFile.NoteType.prstatus && $0.descriptor.count >= 112 + architecture.prstatusSize }
                    .compactMap { RegisterDecoder.stackPointer(Array($0.descriptor[112..<(112 + architecture.prstatusSize)]), architecture: architecture) }
                for mapping in CoreFile.fileMappings(added) { fileStarts.insert(mapping.start) }
                hasFileNote = hasFileNote || added.contains { $0.name == "CORE" && $0.type == CoreFile.NoteType.file }
                vdso = vdso ?? CoreFile.auxvValue(added.first { $0.name == "CORE" && $0.type == CoreFile.NoteType.auxv }?.descriptor ?? [], key: 33)
                stackLows = nil
                continue
            }
            guard segment.type == 1 else {
                dropped += try input.skip(segment.fileSize)
                continue
            }
            // What of this segment a report needs: its bytes end in the address space (`segmentProblem`), a
            // piece of it starting at `start` (within it) ends no later.
            let end = segment.address + segment.fileSize
            func piece(from start: UInt64, at most: UInt64) -> Range<UInt64> {
                let (sum, overflow) = start.addingReportingOverflow(most)
                return start..<(overflow ? end : min(end, sum))
            }
            var range: Range<UInt64>?
            if stackLows == nil { stackLows = computeStackLows() }
            if let low = stackLows?[index], low >= segment.address, low < end {
                range = piece(from: low, at: UInt64(max(stackBytesPerThread, 0)))
            } else if fileStarts.contains(segment.address) || segment.address == vdso {
                range = piece(from: segment.address, at: fileHeadBytes)
            } else if !hasFileNote && notes.threadCount > 0 {
                range = piece(from: segment.address, at: unnamedSegmentBytes)
            }
            let memoryLeft = UInt64(max(limit - notes.keptByteCount - keptTotal, 0))
            guard let range, range.upperBound - range.lowerBound <= memoryLeft else {
                dropped += try input.skip(segment.fileSize)
                continue
            }
            dropped += try input.skip(range.lowerBound - segment.address)
            let bytes = try input.read(Int(range.upperBound - range.lowerBound))
            keptTotal += bytes.count
            kept.append((index, range.lowerBound, bytes))
            dropped += try input.skip(end - range.upperBound)
        }

        // The compact core: header, program headers (one more per kept stack that starts inside its segment),
        // notes, kept bytes.
        let noteBytes = notes.encoded()
        problems += notes.problems
        var phdrs: [(type: UInt32, flags: UInt32, address: UInt64, fileSize: UInt64, memorySize: UInt64, alignment: UInt64, data: Int?)] = []
        if !noteBytes.isEmpty { phdrs.append((4, 0, 0, UInt64(noteBytes.count), 0, 4, -1)) }
        for (index, segment) in segments.enumerated() where segment.type == 1 {
            if let keptIndex = kept.firstIndex(where: { $0.segment == index }) {
                let piece = kept[keptIndex]
                if piece.start > segment.address {
                    phdrs.append((1, segment.flags, segment.address, 0, piece.start - segment.address, segment.alignment, nil))
                }
                let rest = segment.address &+ segment.memorySize &- piece.start
                phdrs.append((1, segment.flags, piece.start, UInt64(piece.bytes.count), max(rest, UInt64(piece.bytes.count)), segment.alignment, keptIndex))
            } else {
                phdrs.append((1, segment.flags, segment.address, 0, segment.memorySize, segment.alignment, nil))
            }
        }
        // A stack kept from inside its segment takes two headers: past 65,534, segments with no bytes kept go
        // (from the end), their memory unnamed in the report.
        if phdrs.count >= 0xffff {
            var excess = phdrs.count - 0xfffe
            var index = phdrs.count - 1
            while excess > 0 && index >= 0 {
                if phdrs[index].data == nil {
                    phdrs.remove(at: index)
                    excess -= 1
                }
                index -= 1
            }
            if phdrs.count >= 0xffff { phdrs.removeLast(phdrs.count - 0xfffe) }
            problems.append("the core has more segments than a core can list once its stacks are split out: the last empty ones were left out")
        }
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        var out = Array(header)
        out.replaceSubrange(32..<40, with: le(UInt64(64)))
        out.replaceSubrange(40..<48, with: le(UInt64(0)))
        out.replaceSubrange(54..<56, with: le(UInt16(56)))
        out.replaceSubrange(56..<58, with: le(UInt16(phdrs.count)))
        out.replaceSubrange(58..<64, with: [UInt8](repeating: 0, count: 6))
        let offset = UInt64(64 + 56 * phdrs.count)
        var data: [UInt8] = []
        for phdr in phdrs {
            var fileOffset: UInt64 = 0
            if phdr.fileSize > 0 {
                fileOffset = offset + UInt64(data.count)
                data += phdr.data.map { $0 < 0 ? noteBytes : kept[$0].bytes } ?? []
            }
            out += le(phdr.type) + le(phdr.flags) + le(fileOffset) + le(phdr.address) + le(UInt64(0)) + le(phdr.fileSize)
                + le(phdr.memorySize) + le(phdr.alignment)
        }
        let file = try MemoryFile.create(name: "crashwatch-core")
        try file.write(out)
        try file.write(data)
        return (file, dropped, problems)
    }
}

/// A note segment read from the stream, front to back.
struct StreamNoteSource: NoteSource {
    let input: InputStream
    var remaining: UInt64

    mutating func take(_ count: Int) throws -> [UInt8]? {
        guard count >= 0, UInt64(count) <= remaining else { return nil }
        let bytes = try input.read(count)
        remaining -= UInt64(bytes.count)
        return bytes.count == count ? bytes : nil
    }

    mutating func drop(_ count: UInt64) throws {
        remaining -= try input.skip(min(count, remaining))
    }
}
