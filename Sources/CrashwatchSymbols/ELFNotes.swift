// ELFNotes.swift — the small part of ELF that crashwatch reads itself, parsed in this one place for every
// reader: the ELF64 file header and program headers (of an image in memory or its file, of the link map
// of a core without NT_FILE, of core dumps mapped or streamed) and the notes in PT_NOTE segments (GNU
// build-id, FDO package metadata). Pure functions over bytes through `ByteReader`: the capture code reads
// the header at an image's base address from process memory, finds PT_NOTE at `loadBias + p_vaddr`, reads
// those bytes and parses them here, so a deleted or replaced file still gets its build-id. Malformed or
// truncated input ends parsing early or throws; it never traps. (The C shim reads an image's program
// headers itself, for PT_GNU_EH_FRAME, in `ehframe.c`: that runs inside libunwind's callbacks, through the
// shim's own address-space reader, and the shim sits below every Swift module, so it cannot call this.)

import CrashwatchModel
import CrashwatchSystem

/// One ELF note: an owner name, a type, and an opaque descriptor.
public struct ELFNote: Sendable, Equatable {
    /// The note's owner name without its NUL terminator (`GNU`, `FDO`, `Go`).
    public let name: String
    /// The note type, whose meaning depends on the name (3 = `NT_GNU_BUILD_ID` for `GNU`).
    public let type: UInt32
    /// The descriptor bytes, without alignment padding.
    public let descriptor: [UInt8]

    /// Sets every field explicitly.
    public init(name: String, type: UInt32, descriptor: [UInt8]) {
        self.name = name
        self.type = type
        self.descriptor = descriptor
    }

    /// `NT_GNU_BUILD_ID`: the descriptor of a `GNU` note of this type is the build-id.
    public static let gnuBuildIDType: UInt32 = 3
    /// `NT_FDO_PACKAGING_METADATA`: the descriptor of an `FDO` note of this type is JSON (`.note.package`).
    public static let fdoPackagingMetadataType: UInt32 = 0xcafe_1a7e
}

/// Parsing of ELF note data and extraction of the notes crashwatch reports.
public enum ELFNotes {
    /// Parses a run of notes (a PT_NOTE segment or SHT_NOTE section), stopping at the first truncated one.
    ///
    /// `alignment` is the segment's `p_align`: 8 means the descriptor and the next note start on 8-byte
    /// boundaries (as for `.note.gnu.property` on x86-64); any other value means the classic 4.
    public static func parseNotes(_ bytes: [UInt8], alignment: UInt64 = 4) -> [ELFNote] {
        parseLocatedNotes(bytes, alignment: alignment).map(\.note)
    }

    /// Parses a run of notes like `parseNotes`, with each descriptor's offset in `bytes` (a note whose descriptor
    /// is a position relative to itself, like crashwatch's annotation-table note, needs it).
    public static func parseLocatedNotes(_ bytes: [UInt8], alignment: UInt64 = 4) -> [(note: ELFNote, descriptorOffset: Int)] {
        let align = alignment == 8 ? 8 : 4
        var notes: [(note: ELFNote, descriptorOffset: Int)] = []
        var offset = 0
        let reader = ByteReader(bytes)
        while let nameSize = reader.u32(offset).map(Int.init), let descriptorSize = reader.u32(offset + 4).map(Int.init),
              let type = reader.u32(offset + 8) {
            let nameStart = offset + 12
            guard let name = reader.string(at: nameStart, count: nameSize) else { break }
            let descriptorStart = alignUp(nameStart + nameSize, to: align)
            guard let descriptor = reader.bytes(at: descriptorStart, count: descriptorSize) else { break }
            notes.append((ELFNote(name: name, type: type, descriptor: Array(descriptor)), descriptorStart))
            offset = alignUp(descriptorStart + descriptorSize, to: align)
        }
        return notes
    }

    /// Rounds up to a multiple of a power of two.
    private static func alignUp(_ value: Int, to alignment: Int) -> Int {
        (value + alignment - 1) & ~(alignment - 1)
    }

    /// The GNU build-id (`NT_GNU_BUILD_ID`, owner `GNU`) among the notes, nil when absent or empty.
    public static func buildID(in notes: [ELFNote]) -> [UInt8]? {
        let note = notes.first { $0.name == "GNU" && $0.type == ELFNote.gnuBuildIDType && !$0.descriptor.isEmpty }
        return note?.descriptor
    }

    /// The FDO package metadata JSON (`.note.package`, owner `FDO`), nil when absent or not UTF-8.
    public static func packageMetadataJSON(in notes: [ELFNote]) -> String? {
        guard let note = notes.first(where: { $0.name == "FDO" && $0.type == ELFNote.fdoPackagingMetadataType })
        else { return nil }
        var text = note.descriptor[...]
        while text.last == 0 { text = text.dropLast() }
        return String(validating: text, as: UTF8.self)
    }

    /// Parses the notes of every PT_NOTE segment whose file bytes lie within `fileBytes` (a file's prefix).
    public static func notes(inFile fileBytes: [UInt8], header: ELFHeaderInfo) -> [ELFNote] {
        header.noteSegments.flatMap { segment -> [ELFNote] in
            guard let bytes = ByteReader(fileBytes).bytes(at: segment.offset, count: segment.size) else { return [] }
            return parseNotes(Array(bytes), alignment: segment.alignment)
        }
    }
}

/// The ELF file type (`e_type`).
public enum ELFFileType: Sendable, Equatable, Hashable {
    /// `ET_REL`: a relocatable object.
    case relocatable
    /// `ET_EXEC`: an executable linked at fixed addresses.
    case executable
    /// `ET_DYN`: a shared object or position-independent executable.
    case sharedObject
    /// `ET_CORE`: a core file.
    case core
    /// Any other value.
    case other(UInt16)

    /// Maps an `e_type` value to a case.
    public init(rawValue: UInt16) {
        switch rawValue {
        case 1: self = .relocatable
        case 2: self = .executable
        case 3: self = .sharedObject
        case 4: self = .core
        default: self = .other(rawValue)
        }
    }

    /// The `e_type` value.
    public var rawValue: UInt16 {
        switch self {
        case .relocatable: 1
        case .executable: 2
        case .sharedObject: 3
        case .core: 4
        case .other(let value): value
        }
    }
}

/// One ELF64 program header (`Elf64_Phdr`).
public struct ProgramHeader: Sendable, Equatable {
    /// `PT_LOAD`: a segment mapped into memory.
    public static let loadType: UInt32 = 1
    /// `PT_DYNAMIC`: the dynamic linking table.
    public static let dynamicType: UInt32 = 2
    /// `PT_INTERP`: the program interpreter's path.
    public static let interpreterType: UInt32 = 3
    /// `PT_NOTE`: notes (build-id, ABI tag, package metadata).
    public static let noteType: UInt32 = 4
    /// `PT_PHDR`: the program header table itself.
    public static let programHeaderType: UInt32 = 6
    /// `PT_GNU_EH_FRAME`: the `.eh_frame_hdr` unwind table index.
    public static let gnuEHFrameType: UInt32 = 0x6474_e550

    /// The segment type (`p_type`).
    public let type: UInt32
    /// The permission flags (`p_flags`: 1 = X, 2 = W, 4 = R).
    public let flags: UInt32
    /// The segment's offset in the file (`p_offset`).
    public let offset: UInt64
    /// The segment's virtual address before relocation (`p_vaddr`).
    public let vaddr: UInt64
    /// The segment's size in the file (`p_filesz`).
    public let filesz: UInt64
    /// The segment's size in memory (`p_memsz`).
    public let memsz: UInt64
    /// The segment's alignment (`p_align`).
    public let align: UInt64

    /// Sets every field explicitly.
    public init(type: UInt32, flags: UInt32, offset: UInt64, vaddr: UInt64, filesz: UInt64, memsz: UInt64, align: UInt64) {
        self.type = type
        self.flags = flags
        self.offset = offset
        self.vaddr = vaddr
        self.filesz = filesz
        self.memsz = memsz
        self.align = align
    }

    /// The `Elf64_Phdr` at `offset` of `reader`'s bytes, nil when its 56 bytes are not all there.
    @inlinable public init?<Bytes>(_ reader: ByteReader<Bytes>, at offset: Int) {
        guard reader.contains(offset, count: ELFHeaderInfo.programHeaderSize),
              let type = reader.u32(offset), let flags = reader.u32(offset + 4), let fileOffset = reader.u64(offset + 8),
              let vaddr = reader.u64(offset + 16), let filesz = reader.u64(offset + 32), let memsz = reader.u64(offset + 40),
              let align = reader.u64(offset + 48)
        else { return nil }
        self.init(type: type, flags: flags, offset: fileOffset, vaddr: vaddr, filesz: filesz, memsz: memsz, align: align)
    }

    /// The table of `count` program headers of `entrySize` bytes each (at least 56) from `offset` of
    /// `reader`'s bytes, nil when the table does not lie within them.
    @inlinable public static func table<Bytes>(_ reader: ByteReader<Bytes>, at offset: UInt64, entrySize: Int, count: Int)
        -> [ProgramHeader]?
    {
        guard entrySize >= ELFHeaderInfo.programHeaderSize, count >= 0, count <= 0xffff,
              reader.bytes(at: offset, count: UInt64(entrySize * count)) != nil else { return nil }
        var headers: [ProgramHeader] = []
        headers.reserveCapacity(count)
        for index in 0..<count {
            guard let header = ProgramHeader(reader, at: Int(offset) + index * entrySize) else { return nil }
            headers.append(header)
        }
        return headers
    }
}

/// The fields of an ELF64 little-endian file header (`Elf64_Ehdr`) that crashwatch reads.
public struct ELFFileHeader: Sendable, Equatable {
    /// The file type (`e_type`).
    public let type: ELFFileType
    /// The raw `e_machine` value (62 x86-64, 183 aarch64).
    public let machine: UInt16
    /// The entry point (`e_entry`), unrelocated.
    public let entry: UInt64
    /// The program header table's file offset (`e_phoff`).
    public let programHeaderOffset: UInt64
    /// The size of one program header table entry (`e_phentsize`).
    public let programHeaderEntrySize: Int
    /// The number of program headers (`e_phnum`; 0xffff is `PN_XNUM`).
    public let programHeaderCount: Int

    /// Parses the identification and file header at the start of `reader`'s bytes: a 64-bit little-endian
    /// ELF file, else the error says what it is not (or, for too few bytes, how many to read).
    public static func parse<Bytes>(_ reader: ByteReader<Bytes>) throws(ELFParseError) -> ELFFileHeader {
        let magic: [UInt8] = [0x7f, 0x45, 0x4c, 0x46]  // "\x7fELF"
        guard reader.bytes.prefix(4).elementsEqual(magic.prefix(reader.count)) else { throw .badMagic }
        guard let elfClass = reader.integer(UInt8.self, at: 4), let data = reader.integer(UInt8.self, at: 5),
              reader.count >= 16 else { throw .truncated(what: "identification", needed: 16, actual: reader.count) }
        guard elfClass == 2 else { throw .notELF64(elfClass: elfClass) }
        guard data == 1 else { throw .notLittleEndian(dataEncoding: data) }
        guard let type = reader.u16(16), let machine = reader.u16(18), let entry = reader.u64(24),
              let tableOffset = reader.u64(32), let entrySize = reader.u16(54), let count = reader.u16(56),
              reader.count >= ELFHeaderInfo.fileHeaderSize
        else { throw .truncated(what: "file header", needed: ELFHeaderInfo.fileHeaderSize, actual: reader.count) }
        return ELFFileHeader(type: ELFFileType(rawValue: type), machine: machine, entry: entry, programHeaderOffset: tableOffset,
                             programHeaderEntrySize: Int(entrySize), programHeaderCount: Int(count))
    }
}

/// Where a PT_NOTE segment's bytes are: in the file, and (before relocation) in memory.
public struct NoteSegment: Sendable, Equatable {
    /// The segment's offset in the file.
    public let offset: UInt64
    /// The segment's size in bytes.
    public let size: UInt64
    /// The segment's unrelocated virtual address: in a process it is at `loadBias + virtualAddress`.
    public let virtualAddress: UInt64
    /// The note alignment to pass to `ELFNotes.parseNotes` (the segment's `p_align`).
    public let alignment: UInt64

    /// Sets every field explicitly.
    public init(offset: UInt64, size: UInt64, virtualAddress: UInt64, alignment: UInt64) {
        self.offset = offset
        self.size = size
        self.virtualAddress = virtualAddress
        self.alignment = alignment
    }
}

/// Why bytes are not a usable ELF64 little-endian header.
public enum ELFParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer bytes than the structure needs; read `needed` bytes and try again.
    case truncated(what: String, needed: Int, actual: Int)
    /// The first four bytes are not `\x7fELF`.
    case badMagic
    /// `EI_CLASS` is not `ELFCLASS64` (2).
    case notELF64(elfClass: UInt8)
    /// `EI_DATA` is not `ELFDATA2LSB` (1).
    case notLittleEndian(dataEncoding: UInt8)
    /// `e_phentsize` is smaller than an `Elf64_Phdr` (56 bytes).
    case badProgramHeaderSize(Int)
    /// `e_phnum` is `PN_XNUM`: the real count is in section 0, which this parser does not read.
    case extendedProgramHeaderCount

    /// A one-line message saying what was wrong.
    public var description: String {
        switch self {
        case let .truncated(what, needed, actual): "ELF \(what) truncated: need \(needed) bytes, have \(actual)"
        case .badMagic: "not an ELF file (bad magic)"
        case let .notELF64(elfClass): "not a 64-bit ELF file (EI_CLASS \(elfClass))"
        case let .notLittleEndian(data): "not a little-endian ELF file (EI_DATA \(data))"
        case let .badProgramHeaderSize(size): "ELF program header entry size \(size) is below 56"
        case .extendedProgramHeaderCount: "ELF program header count is PN_XNUM (more than 65534): unsupported"
        }
    }
}

/// The parts of an ELF64 file header and program header table that capture needs.
public struct ELFHeaderInfo: Sendable, Equatable {
    /// The size of an ELF64 file header (`Elf64_Ehdr`).
    public static let fileHeaderSize = 64
    /// The size of an ELF64 program header (`Elf64_Phdr`).
    public static let programHeaderSize = 56

    /// The raw `e_machine` value (62 x86-64, 183 aarch64).
    public let machine: UInt16
    /// The file type (`ET_EXEC`, `ET_DYN`, ...).
    public let type: ELFFileType
    /// The entry point (`e_entry`), unrelocated.
    public let entry: UInt64
    /// The program header table's file offset (`e_phoff`).
    public let programHeaderOffset: UInt64
    /// Every program header, in table order.
    public let programHeaders: [ProgramHeader]

    /// Sets every field explicitly.
    public init(machine: UInt16, type: ELFFileType, entry: UInt64, programHeaderOffset: UInt64, programHeaders: [ProgramHeader]) {
        self.machine = machine
        self.type = type
        self.entry = entry
        self.programHeaderOffset = programHeaderOffset
        self.programHeaders = programHeaders
    }

    /// Parses the file header and program headers from the start of a file or a loaded image.
    ///
    /// The bytes must reach the end of the program header table (`e_phoff + e_phnum * e_phentsize`);
    /// when they do not, the error says how many are needed, so a caller reading process memory can
    /// read more and retry.
    public static func parse(_ bytes: [UInt8]) throws(ELFParseError) -> ELFHeaderInfo {
        let reader = ByteReader(bytes)
        let file = try ELFFileHeader.parse(reader)
        let count = file.programHeaderCount, entrySize = file.programHeaderEntrySize
        guard count != 0xffff else { throw .extendedProgramHeaderCount }
        var headers: [ProgramHeader] = []
        if count > 0 {
            guard entrySize >= programHeaderSize else { throw .badProgramHeaderSize(entrySize) }
            let (tableEnd, overflow) = file.programHeaderOffset.addingReportingOverflow(UInt64(count * entrySize))
            guard !overflow, tableEnd <= UInt64(Int.max) else {
                throw .truncated(what: "program header table", needed: Int.max, actual: bytes.count)
            }
            guard let table = ProgramHeader.table(reader, at: file.programHeaderOffset, entrySize: entrySize, count: count) else {
                throw .truncated(what: "program header table", needed: Int(tableEnd), actual: bytes.count)
            }
            headers = table
        }
        return ELFHeaderInfo(machine: file.machine, type: file.type, entry: file.entry,
                             programHeaderOffset: file.programHeaderOffset, programHeaders: headers)
    }

    /// Parses the headers at the start of a file or image whose first `count` bytes `read` gives: the file
    /// header first, then as many bytes as the program headers need (at most `limit`); nil for no ELF file.
    public static func read(limit: Int = 64 << 10, _ read: (_ count: Int) -> [UInt8]?) -> ELFHeaderInfo? {
        guard let bytes = read(fileHeaderSize) else { return nil }
        do {
            return try parse(bytes)
        } catch .truncated(_, let needed, _) {
            guard needed > 0, needed <= limit, let more = read(needed) else { return nil }
            return try? parse(more)
        } catch {
            return nil
        }
    }

    /// The PT_NOTE segments: file offset, size, unrelocated address and alignment of each.
    public var noteSegments: [NoteSegment] {
        programHeaders.filter { $0.type == ProgramHeader.noteType }.map {
            NoteSegment(offset: $0.offset, size: $0.filesz, virtualAddress: $0.vaddr, alignment: $0.align)
        }
    }

    /// The notes of the first 16 PT_NOTE segments, each segment's bytes given by `read` (nil or fewer bytes:
    /// what there is of its notes); of a segment larger than `limit`, the notes in its first `limit` bytes.
    public func notes(limit: Int = 64 << 10, _ read: (NoteSegment) -> [UInt8]?) -> [ELFNote] {
        locatedNotes(limit: limit, read).map(\.note)
    }

    /// The notes of `notes(limit:_:)`, each with the segment it is in and its descriptor's offset there
    /// (its address in a process is the segment's, relocated, plus that offset).
    public func locatedNotes(limit: Int = 64 << 10, _ read: (NoteSegment) -> [UInt8]?)
        -> [(segment: NoteSegment, note: ELFNote, descriptorOffset: Int)]
    {
        noteSegments.prefix(16).filter { $0.size > 0 }.flatMap { whole in
            let segment = whole.size <= UInt64(max(limit, 0)) ? whole
                : NoteSegment(offset: whole.offset, size: UInt64(max(limit, 0)), virtualAddress: whole.virtualAddress, alignment: whole.alignment)
            return (read(segment).map { ELFNotes.parseLocatedNotes($0, alignment: segment.alignment) } ?? []).map {
                (segment, $0.note, $0.descriptorOffset)
            }
        }
    }

    /// The load bias (runtime address minus `p_vaddr`) given where file offset 0 is mapped, nil without PT_LOAD.
    ///
    /// The first PT_LOAD maps file offset 0 at `bias + p_vaddr - p_offset`, whatever the page size, so
    /// the bias is `imageBase - (p_vaddr - p_offset)`: the image base for a shared object, 0 for `ET_EXEC`.
    public func loadBias(imageBase: UInt64) -> UInt64? {
        guard let first = programHeaders.filter({ $0.type == ProgramHeader.loadType }).min(by: { $0.offset < $1.offset })
        else { return nil }
        return imageBase &- (first.vaddr &- first.offset)
    }
}

/// The few things processing reads from ELF files itself.
public enum ELFFile {
    /// The GNU build-id of the ELF file open at `file`, from its PT_NOTE segments; nil when it has none.
    public static func buildID(of file: OwnedDescriptor) -> [UInt8]? {
        guard let header = ELFHeaderInfo.read({ try? file.read(at: 0, count: $0) }) else { return nil }
        return ELFNotes.buildID(in: header.notes { try? file.read(at: $0.offset, count: Int($0.size)) })
    }
}
