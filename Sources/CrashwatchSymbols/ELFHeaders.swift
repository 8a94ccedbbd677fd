// ELFHeaders.swift — the one parser of ELF64 little-endian file and program headers, for every reader of
// them: an image's identity (its build-id notes, from memory or its file), the link map of a core without
// NT_FILE, and core dumps, mapped (CoreFile) or streamed (CoreStream). Pure functions over bytes through
// `ByteReader`: truncated or malformed input throws or gives nil, never traps. (The C shim reads the
// program headers of images in a live process for its unwind tables, through its own address-space
// reader, inside the libunwind callbacks that cannot call back into Swift.)

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

    /// The 56 bytes of this header in a table, its file offset `offset` (`p_paddr` 0).
    public func encoded(offset: UInt64) -> [UInt8] {
        type.littleEndianBytes + flags.littleEndianBytes + offset.littleEndianBytes + vaddr.littleEndianBytes
            + UInt64(0).littleEndianBytes + filesz.littleEndianBytes + memsz.littleEndianBytes + align.littleEndianBytes
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
