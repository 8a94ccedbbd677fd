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
        let (header, architecture, segments, headerProblems) = try readHeaders(input)
        var scan = StreamScan(segments: segments, architecture: architecture, limit: limit,
                              stackBytes: UInt64(max(stackBytesPerThread, 0)))
        try scan.read(input)
        let noteBytes = scan.notes.encoded()
        var problems = headerProblems + scan.notes.problems
        var layout = programHeaders(segments, kept: scan.kept, noteBytes: noteBytes.count)
        if trimToLimit(&layout) {
            problems.append("the core has more segments than a core can list once its stacks are split out: the last empty ones were left out")
        }
        let (headers, data) = encode(header: header, layout, notes: noteBytes, kept: scan.kept)
        let file = try MemoryFile.create(name: "crashwatch-core")
        try file.write(headers)
        try file.write(data)
        return (file, scan.dropped, problems)
    }

    /// The stream's ELF header (as read, to be copied into the compact core), its architecture, and the
    /// PT_LOAD and PT_NOTE program headers that can be used, with why any other was left out.
    static func readHeaders(_ input: InputStream) throws
        -> (header: [UInt8], architecture: Architecture, segments: [ProgramHeader], problems: [String])
    {
        let header = try input.read(ELFHeaderInfo.fileHeaderSize)
        guard header.count == ELFHeaderInfo.fileHeaderSize else { throw CoreFileError("not an ELF file (\(header.count) bytes)") }
        let (file, architecture) = try CoreFile.coreHeader(ByteReader(header))
        let entrySize = file.programHeaderEntrySize, count = file.programHeaderCount
        // 56 bytes is an ELF64 program header; a larger entry size is allowed, not one that would make the
        // table gigabytes (65,534 entries at most).
        guard file.programHeaderOffset >= 64, entrySize >= 56, entrySize <= 256, count != 0xffff else {
            throw CoreFileError("program headers out of place")
        }
        try input.skip(file.programHeaderOffset - 64)
        guard let table = ProgramHeader.table(ByteReader(try input.read(entrySize * count)), at: 0, entrySize: entrySize, count: count)
        else { throw CoreFileError("the stream ends in the program headers") }
        let (usable, problems) = CoreFile.usableSegments(table)
        return (header, architecture, usable.map(\.header), problems)
    }

    /// A program header of the compact core and where its bytes come from: the notes (-1), a piece kept
    /// (its index in `kept`), or none.
    typealias Entry = (header: ProgramHeader, data: Int?)

    /// The compact core's program headers: the notes, then each PT_LOAD of `segments` in order, with its
    /// kept piece's bytes; a piece kept from inside its segment (a stack) takes a second, empty header below it.
    static func programHeaders(_ segments: [ProgramHeader], kept: [StreamScan.Piece], noteBytes: Int) -> [Entry] {
        func load(_ segment: ProgramHeader, at address: UInt64, fileSize: Int, memorySize: UInt64) -> ProgramHeader {
            ProgramHeader(type: ProgramHeader.loadType, flags: segment.flags, offset: 0, vaddr: address,
                          filesz: UInt64(fileSize), memsz: memorySize, align: segment.align)
        }
        var entries: [Entry] = []
        if noteBytes > 0 {
            entries.append((ProgramHeader(type: ProgramHeader.noteType, flags: 0, offset: 0, vaddr: 0, filesz: UInt64(noteBytes),
                                          memsz: 0, align: 4), -1))
        }
        for (index, segment) in segments.enumerated() where segment.type == ProgramHeader.loadType {
            guard let keptIndex = kept.firstIndex(where: { $0.segment == index }) else {
                entries.append((load(segment, at: segment.vaddr, fileSize: 0, memorySize: segment.memsz), nil))
                continue
            }
            let piece = kept[keptIndex]
            if piece.start > segment.vaddr {
                entries.append((load(segment, at: segment.vaddr, fileSize: 0, memorySize: piece.start - segment.vaddr), nil))
            }
            let rest = segment.vaddr &+ segment.memsz &- piece.start
            entries.append((load(segment, at: piece.start, fileSize: piece.bytes.count,
                                 memorySize: max(rest, UInt64(piece.bytes.count))), keptIndex))
        }
        return entries
    }

    /// Keeps `entries` within the 65,534 headers a core can list: past that, entries with no bytes go (from
    /// the end), their memory unnamed in the report. True when any went.
    static func trimToLimit(_ entries: inout [Entry]) -> Bool {
        guard entries.count >= 0xffff else { return false }
        var excess = entries.count - 0xfffe
        var index = entries.count - 1
        while excess > 0 && index >= 0 {
            if entries[index].data == nil {
                entries.remove(at: index)
                excess -= 1
            }
            index -= 1
        }
        if entries.count >= 0xffff { entries.removeLast(entries.count - 0xfffe) }
        return true
    }

    /// The compact core's bytes: `header` with the program header table moved right after it, the table,
    /// then the bytes of the notes and pieces in table order.
    static func encode(header: [UInt8], _ entries: [Entry], notes: [UInt8], kept: [StreamScan.Piece])
        -> (headers: [UInt8], data: [UInt8])
    {
        var out = header
        out.replaceSubrange(32..<40, with: UInt64(64).littleEndianBytes)  // e_phoff
        out.replaceSubrange(40..<48, with: UInt64(0).littleEndianBytes)   // e_shoff
        out.replaceSubrange(54..<56, with: UInt16(56).littleEndianBytes)  // e_phentsize
        out.replaceSubrange(56..<58, with: UInt16(entries.count).littleEndianBytes)
        out.replaceSubrange(58..<64, with: [UInt8](repeating: 0, count: 6))  // no section headers
        let offset = UInt64(64 + 56 * entries.count)
        var data: [UInt8] = []
        for (header, source) in entries {
            var fileOffset: UInt64 = 0
            if header.filesz > 0 {
                fileOffset = offset + UInt64(data.count)
                data += source.map { $0 < 0 ? notes : kept[$0].bytes } ?? []
            }
            out += header.encoded(offset: fileOffset)
        }
        return (out, data)
    }
}

/// What of a streamed core is kept, read segment by segment in file order (the kernel writes the notes
/// first): the notes within their caps, each thread's stack, the start of each file mapping and the vdso.
struct StreamScan {
    /// Bytes kept of one segment (its index in `segments`), from `start` on.
    typealias Piece = (segment: Int, start: UInt64, bytes: [UInt8])

    let segments: [ProgramHeader]
    let architecture: Architecture
    let limit: Int
    let stackBytes: UInt64
    var notes: CoreNotes
    var kept: [Piece] = []
    var keptTotal = 0
    var dropped: UInt64 = 0
    var stackPointers: [UInt64] = []
    var fileStarts = Set<UInt64>()
    var vdso: UInt64?
    /// A core without NT_FILE (qemu's) names its files only through the dynamic linker's list in its data
    /// (LinkMap): then the start of every segment is kept, as far as the limit allows.
    var hasFileNote = false
    /// The readable PT_LOAD segments with bytes, by address (indices into `segments`).
    let readable: [Int]
    /// Where each stack kept starts (segment index → lowest start), worked out again after new notes.
    var stackLows: [Int: UInt64]?

    init(segments: [ProgramHeader], architecture: Architecture, limit: Int, stackBytes: UInt64) {
        self.segments = segments
        self.architecture = architecture
        self.limit = limit
        self.stackBytes = stackBytes
        notes = CoreNotes(memoryLimit: limit)
        readable = segments.indices.filter {
            segments[$0].type == ProgramHeader.loadType && segments[$0].flags & 4 != 0 && segments[$0].filesz > 0
        }.sorted { segments[$0].vaddr < segments[$1].vaddr }
    }

    /// Reads the stream's segments in file order, keeping what a report needs and dropping the rest.
    mutating func read(_ input: InputStream) throws {
        for index in segments.indices.sorted(by: { segments[$0].offset < segments[$1].offset }) {
            let segment = segments[index]
            guard segment.filesz > 0, segment.offset >= input.position else { continue }
            try input.skip(segment.offset - input.position)
            if segment.type == ProgramHeader.noteType {
                try readNotes(input, segment)
            } else {
                try readMemory(input, index)
            }
        }
    }

    /// Reads a PT_NOTE segment: only its notes are new, so only what they add is added (never a pass over
    /// all so far).
    mutating func readNotes(_ input: InputStream, _ segment: ProgramHeader) throws {
        let before = notes.kept.count
        var source = StreamNoteSource(input: input, remaining: segment.filesz)
        try notes.scan(&source, alignment: 4)
        let added = Array(notes.kept[before...])
        stackPointers += added.filter { $0.name == "CORE" && $0.type == CoreFile.NoteType.prstatus }
            .compactMap { CoreFile.stackPointer($0.descriptor, architecture: architecture) }
        for mapping in CoreFile.fileMappings(added) { fileStarts.insert(mapping.start) }
        hasFileNote = hasFileNote || CoreFile.descriptor(added, CoreFile.NoteType.file) != nil
        vdso = vdso ?? CoreFile.auxvValue(CoreFile.descriptor(added, CoreFile.NoteType.auxv) ?? [], key: 33)
        stackLows = nil
    }

    /// Reads the PT_LOAD segment `segments[index]`, keeping the piece of it a report needs when the memory
    /// limit leaves room: a stack, the start of a file mapping or the vdso, or (no NT_FILE) any segment's start.
    mutating func readMemory(_ input: InputStream, _ index: Int) throws {
        let segment = segments[index]
        // Its bytes end in the address space (`segmentProblem`): a piece of it starting at `start` (within
        // it) ends no later.
        let end = segment.vaddr + segment.filesz
        func piece(from start: UInt64, at most: UInt64) -> Range<UInt64> {
            let (sum, overflow) = start.addingReportingOverflow(most)
            return start..<(overflow ? end : min(end, sum))
        }
        var range: Range<UInt64>?
        if stackLows == nil { stackLows = computeStackLows() }
        if let low = stackLows?[index], low >= segment.vaddr, low < end {
            range = piece(from: low, at: stackBytes)
        } else if fileStarts.contains(segment.vaddr) || segment.vaddr == vdso {
            range = piece(from: segment.vaddr, at: CoreStream.fileHeadBytes)
        } else if !hasFileNote && notes.threadCount > 0 {
            range = piece(from: segment.vaddr, at: CoreStream.unnamedSegmentBytes)
        }
        let memoryLeft = UInt64(max(limit - notes.keptByteCount - keptTotal, 0))
        guard let range, range.upperBound - range.lowerBound <= memoryLeft else {
            dropped += try input.skip(segment.filesz)
            return
        }
        dropped += try input.skip(range.lowerBound - segment.vaddr)
        let bytes = try input.read(Int(range.upperBound - range.lowerBound))
        keptTotal += bytes.count
        kept.append((index, range.lowerBound, bytes))
        dropped += try input.skip(end - range.upperBound)
    }

    /// Each thread's stack: the segment its stack pointer is in, or (a stack overflow: the pointer in the
    /// guard page) the next readable one at most 64 KiB above it — the rule of a live capture (`planStack`) —
    /// from just below the red zone. Segment index → lowest start.
    func computeStackLows() -> [Int: UInt64] {
        let redZone: UInt64 = architecture == .x86_64 ? 128 : 0
        var lows: [Int: UInt64] = [:]
        for sp in stackPointers {
            // The first readable segment ending above sp (segments do not overlap: ends ascend with starts).
            var low = 0, high = readable.count
            while low < high {
                let middle = (low + high) / 2
                let candidate = segments[readable[middle]]
                if candidate.vaddr &+ candidate.filesz > sp { high = middle } else { low = middle + 1 }
            }
            guard low < readable.count, segments[readable[low]].vaddr <= sp &+ 65536 else { continue }
            let index = readable[low]
            let start = max(segments[index].vaddr, sp >= redZone ? sp - redZone : 0)
            lows[index] = min(lows[index] ?? start, start)
        }
        return lows
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
