// CoreStream.swift — a core dump read once, front to back, from a pipe (what the kernel gives a
// `core_pattern` helper) or a file, keeping only what a report needs, so a 1 GiB core costs a few MiB: the
// notes, each thread's stack from just below its stack pointer up (at most `stackBytesPerThread`), the first
// bytes of each file mapping (its ELF headers and build-id note) and the vdso. The rest is read and dropped.
// What is kept goes straight into the raw capture file (a memfd) as the core streams past, a region each;
// once the core has been read, `CoreContents` makes the capture of its notes and those regions, and
// `StreamedCore.captureFile()` appends it as the file's metadata: the container a live capture writes too.
import CrashwatchModel
import CrashwatchSymbols
import CrashwatchSystem

public enum CoreStream {
    /// The most bytes kept of a file mapping (its headers and notes live at its start).
    static let fileHeadBytes: UInt64 = 64 << 10
    /// The most bytes kept of any other segment of a core without NT_FILE (see `StreamScan.hasFileNote`).
    static let unnamedSegmentBytes: UInt64 = 1 << 20
    /// The most bytes of notes kept, whatever the memory limit (see `CoreNotes`).
    public static let noteLimit = 64 << 20

    /// The bytes of notes kept for a memory limit of `limit`: half of it (at most `noteLimit`); the memory
    /// kept gets the rest.
    public static func noteBudget(memoryLimit limit: Int) -> Int { min(noteLimit, max(limit, 0) / 2) }

    /// The stream's architecture and the PT_LOAD and PT_NOTE program headers that can be used, with why any
    /// other was left out. Throws for a stream that is not a 64-bit core dump, or whose program-header table
    /// is out of place or would take more than 65,534 entries of 256 bytes.
    static func readHeaders(_ input: InputStream) throws
        -> (architecture: Architecture, segments: [ProgramHeader], problems: [String])
    {
        let header = try input.read(ELFHeaderInfo.fileHeaderSize)
        guard header.count == ELFHeaderInfo.fileHeaderSize else { throw CoreFileError("not an ELF file (\(header.count) bytes)") }
        let (file, architecture) = try CoreRecords.coreHeader(ByteReader(header))
        let entrySize = file.programHeaderEntrySize, count = file.programHeaderCount
        // 56 bytes is an ELF64 program header; a larger entry size is allowed, not one that would make the
        // table gigabytes (65,534 entries at most).
        guard file.programHeaderOffset >= 64, entrySize >= 56, entrySize <= 256, count != 0xffff else {
            throw CoreFileError("program headers out of place")
        }
        try input.skip(file.programHeaderOffset - 64)
        guard let table = ProgramHeader.table(ByteReader(try input.read(entrySize * count)), at: 0, entrySize: entrySize, count: count)
        else { throw CoreFileError("the stream ends in the program headers") }
        let (usable, problems) = CoreRecords.usableSegments(table)
        return (architecture, usable, problems)
    }
}

/// A core dump read from a stream as a capture source: its capture, and the memory kept of it in the capture
/// file written as it streamed past (mapped read-only: nothing is copied again).
public final class StreamedCore: CaptureSource {
    /// What the core holds, as a capture; a `core_pattern` helper adds where it kept the core itself, and what
    /// its reading deadline cut, before `captureFile()`.
    public var capture: RawCapture
    /// The memory kept, sorted by address: each region's bytes inside the capture file.
    public let regions: [CoreRegion]
    /// The capture file: the regions, then (`captureFile()`) the metadata.
    private let file: OwnedDescriptor
    private let regionBytes: UInt64
    private let mapping: MappedFile
    private var finished = false

    /// Reads the core on `input`: notes and memory kept take at most `options.captureBytes` together (notes at
    /// most half). `timeNanoseconds`, `executable`, `sysroot` and `process` as for `CoreContents.capture`. Throws
    /// a `CoreFileError` for a stream that is not a 64-bit core dump or holds no thread. Every size, offset and
    /// count in the stream is checked before use: a segment whose bytes would end past the top of the address
    /// space or of the file is left out, and said so; what a cap drops is a soft error of the capture.
    public init(reading input: InputStream, options: CaptureOptions, timeNanoseconds: Int64, deadlineNanoseconds: Int64,
                executable: OwnedDescriptor? = nil, sysroot: String? = nil, process: ProcessRecord? = nil) throws {
        let started = Clock.monotonicNanoseconds()
        let (architecture, segments, problems) = try CoreStream.readHeaders(input)
        file = try MemoryFile.create(name: "crashwatch-capture-core")
        var scan = StreamScan(segments: segments, architecture: architecture, limit: options.captureBytes,
                              stackBytes: UInt64(max(options.stackBytesPerThread, 0)), writer: RawCaptureWriter(file: file))
        try scan.read(input)
        regionBytes = scan.writer.regionBytes
        mapping = try MappedFile(file, limit: Int(clamping: regionBytes))
        let bytes = mapping.bytes
        regions = scan.pieces.map { piece in
            (piece.address, UnsafeRawBufferPointer(rebasing: bytes[piece.offset..<(piece.offset + piece.count)]))
        }.sorted { $0.address < $1.address }
        let contents = CoreContents(architecture: architecture, loads: segments.filter { $0.type == ProgramHeader.loadType },
                                    notes: scan.notes.kept,
                                    softErrors: (problems + scan.notes.problems).map { SoftError(stage: "core", message: $0) })
        capture = try contents.capture(regions: regions, started: started, timeNanoseconds: timeNanoseconds, options: options,
                                       deadlineNanoseconds: deadlineNanoseconds, executable: executable, sysroot: sysroot,
                                       process: process)
    }

    /// The complete capture file, sealed, for the worker: the regions, then `capture` as its metadata (appended
    /// on the first call; later ones return the same file).
    public func captureFile() throws(SystemError) -> OwnedDescriptor {
        if !finished {
            try RawCaptureWriter(file: file, regionBytes: regionBytes).finish(capture)
            try MemoryFile.seal(file)
            finished = true
        }
        return file
    }
}

/// What of a streamed core is kept, read segment by segment in file order (the kernel writes the notes
/// first): the notes within their caps, each thread's stack, the start of each file mapping and the vdso.
struct StreamScan: ~Copyable {
    /// A piece kept: its address, and where its bytes are in the capture file and how many.
    typealias Piece = (address: UInt64, offset: Int, count: Int)

    let segments: [ProgramHeader]
    let architecture: Architecture
    let limit: Int
    let stackBytes: UInt64
    var notes: CoreNotes
    /// Where the pieces kept go, one region each, as they stream past.
    var writer: RawCaptureWriter
    var pieces: [Piece] = []
    var keptTotal = 0
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

    init(segments: [ProgramHeader], architecture: Architecture, limit: Int, stackBytes: UInt64, writer: consuming RawCaptureWriter) {
        self.writer = writer
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
        stackPointers += added.filter { $0.name == "CORE" && $0.type == CoreRecords.NoteType.prstatus }
            .compactMap { CoreRecords.stackPointer($0.descriptor, architecture: architecture) }
        for mapping in CoreRecords.fileMappings(added) { fileStarts.insert(mapping.start) }
        hasFileNote = hasFileNote || CoreRecords.descriptor(added, CoreRecords.NoteType.file) != nil
        vdso = vdso ?? CoreRecords.auxvValue(CoreRecords.descriptor(added, CoreRecords.NoteType.auxv) ?? [], key: 33)
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
        var ranges: [Range<UInt64>] = []
        if stackLows == nil { stackLows = computeStackLows() }
        if let low = stackLows?[index], low >= segment.vaddr, low < end {
            // The window, and the stack's top when the window stops short of it (`StackWindow.top`).
            let window = piece(from: low, at: stackBytes)
            ranges = [window] + (StackWindow.top(window: window, end: end).map { [$0] } ?? [])
        } else if fileStarts.contains(segment.vaddr) || segment.vaddr == vdso {
            ranges = [piece(from: segment.vaddr, at: CoreStream.fileHeadBytes)]
        } else if !hasFileNote && notes.threadCount > 0 {
            ranges = [piece(from: segment.vaddr, at: CoreStream.unnamedSegmentBytes)]
        }
        // Ranges ascend and do not overlap: each is read where the stream is, the bytes between skipped.
        var position = segment.vaddr
        for range in ranges {
            let memoryLeft = UInt64(max(limit - notes.keptByteCount - keptTotal, 0))
            guard range.upperBound - range.lowerBound <= memoryLeft else { break }
            try input.skip(range.lowerBound - position)
            let bytes = try input.read(Int(range.upperBound - range.lowerBound))
            keptTotal += bytes.count
            position = range.lowerBound + UInt64(bytes.count)
            if !bytes.isEmpty {
                pieces.append((range.lowerBound, Int(writer.regionBytes) + RawCaptureWriter.regionHeaderBytes, bytes.count))
                try writer.appendRegion(address: range.lowerBound, bytes: bytes)
            }
            guard position == range.upperBound else { break }
        }
        try input.skip(end - position)
    }

    /// Each thread's stack (`StackWindow`: the dumped bytes of the segment its stack pointer is in, or the
    /// next readable one above a guard page, from just below the red zone). Segment index → lowest start.
    func computeStackLows() -> [Int: UInt64] {
        var lows: [Int: UInt64] = [:]
        for sp in stackPointers {
            // The first readable segment ending above sp (segments do not overlap: ends ascend with starts).
            var low = 0, high = readable.count
            while low < high {
                let middle = (low + high) / 2
                let candidate = segments[readable[middle]]
                if candidate.vaddr &+ candidate.filesz > sp { high = middle } else { low = middle + 1 }
            }
            // Its bytes end in the address space (`segmentProblem`): the range is well formed.
            guard low < readable.count, case let segment = segments[readable[low]],
                  StackWindow.holdsStack(segment.vaddr..<(segment.vaddr + segment.filesz), sp: sp) else { continue }
            let index = readable[low]
            let start = StackWindow.low(sp: sp, rangeStart: segment.vaddr, architecture: architecture)
            lows[index] = min(lows[index] ?? start, start)
        }
        return lows
    }
}

/// A note segment read from the stream, front to back.
struct StreamNoteSource {
    let input: InputStream
    var remaining: UInt64

    /// The next `count` bytes (at most `remaining`), or nil when the input ends before them.
    mutating func take(_ count: Int) throws -> [UInt8]? {
        guard count >= 0, UInt64(count) <= remaining else { return nil }
        let bytes = try input.read(count)
        remaining -= UInt64(bytes.count)
        return bytes.count == count ? bytes : nil
    }

    /// Passes over the next `count` bytes (at most `remaining`).
    mutating func drop(_ count: UInt64) throws {
        remaining -= try input.skip(min(count, remaining))
    }
}
