// ELFNotes.swift — the small part of ELF that capture reads itself: the ELF64 file header and program
// headers (to find the PT_NOTE segments of an image loaded in memory) and the notes in them (GNU
// build-id, FDO package metadata). Pure functions over bytes: the capture code reads the header at an
// image's base address from process memory, finds PT_NOTE at `loadBias + p_vaddr`, reads those bytes
// and parses them here, so a deleted or replaced file still gets its build-id. Malformed or truncated
// input ends parsing early or throws; it never traps.

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
        let align = alignment == 8 ? 8 : 4
        var notes: [ELFNote] = []
        var offset = 0
        while bytes.count - offset >= 12 {
            let nameSize = Int(ELFBytes.u32(bytes, offset))
            let descriptorSize = Int(ELFBytes.u32(bytes, offset + 4))
            let type = ELFBytes.u32(bytes, offset + 8)
            let nameStart = offset + 12
            guard nameSize <= bytes.count - nameStart else { break }
            let descriptorStart = alignUp(nameStart + nameSize, to: align)
            guard descriptorStart <= bytes.count, descriptorSize <= bytes.count - descriptorStart else { break }
            let nameBytes = bytes[nameStart..<nameStart + nameSize].prefix { $0 != 0 }
            notes.append(ELFNote(name: String(decoding: nameBytes, as: UTF8.self), type: type,
                                 descriptor: Array(bytes[descriptorStart..<descriptorStart + descriptorSize])))
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
            guard segment.offset <= UInt64(fileBytes.count),
                  segment.size <= UInt64(fileBytes.count) - segment.offset else { return [] }
            let start = Int(segment.offset)
            return parseNotes(Array(fileBytes[start..<start + Int(segment.size)]), alignment: segment.alignment)
        }
    }
}

/// Little-endian field readers for ELF structures; callers check bounds first.
enum ELFBytes {
    /// Reads a little-endian u16.
    static func u16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// Reads a little-endian u32.
    static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(u16(bytes, offset)) | UInt32(u16(bytes, offset + 2)) << 16
    }

    /// Reads a little-endian u64.
    static func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        UInt64(u32(bytes, offset)) | UInt64(u32(bytes, offset + 4)) << 32
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
        let magic: [UInt8] = [0x7f, 0x45, 0x4c, 0x46]  // "\x7fELF"
        guard bytes.prefix(4).elementsEqual(magic.prefix(bytes.count)) else { throw .badMagic }
        guard bytes.count >= 16 else { throw .truncated(what: "identification", needed: 16, actual: bytes.count) }
        guard bytes[4] == 2 else { throw .notELF64(elfClass: bytes[4]) }
        guard bytes[5] == 1 else { throw .notLittleEndian(dataEncoding: bytes[5]) }
        guard bytes.count >= fileHeaderSize else {
            throw .truncated(what: "file header", needed: fileHeaderSize, actual: bytes.count)
        }
        let type = ELFBytes.u16(bytes, 16)
        let machine = ELFBytes.u16(bytes, 18)
        let entry = ELFBytes.u64(bytes, 24)
        let tableOffset = ELFBytes.u64(bytes, 32)
        let entrySize = Int(ELFBytes.u16(bytes, 54))
        let count = Int(ELFBytes.u16(bytes, 56))
        guard count != 0xffff else { throw .extendedProgramHeaderCount }
        var headers: [ProgramHeader] = []
        if count > 0 {
            guard entrySize >= programHeaderSize else { throw .badProgramHeaderSize(entrySize) }
            let (tableEnd, overflow) = tableOffset.addingReportingOverflow(UInt64(count * entrySize))
            guard !overflow, tableEnd <= UInt64(Int.max) else {
                throw .truncated(what: "program header table", needed: Int.max, actual: bytes.count)
            }
            guard tableEnd <= UInt64(bytes.count) else {
                throw .truncated(what: "program header table", needed: Int(tableEnd), actual: bytes.count)
            }
            headers.reserveCapacity(count)
            for index in 0..<count {
                let base = Int(tableOffset) + index * entrySize
                headers.append(ProgramHeader(
                    type: ELFBytes.u32(bytes, base), flags: ELFBytes.u32(bytes, base + 4),
                    offset: ELFBytes.u64(bytes, base + 8), vaddr: ELFBytes.u64(bytes, base + 16),
                    filesz: ELFBytes.u64(bytes, base + 32), memsz: ELFBytes.u64(bytes, base + 40),
                    align: ELFBytes.u64(bytes, base + 48)))
            }
        }
        return ELFHeaderInfo(machine: machine, type: ELFFileType(rawValue: type), entry: entry,
                             programHeaderOffset: tableOffset, programHeaders: headers)
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

/// The few things processing reads from ELF files itself.
public enum ELFFile {
    /// The GNU build-id of the ELF file open at `file`, from its PT_NOTE segments; nil when it has none.
    public static func buildID(of file: OwnedDescriptor) -> [UInt8]? {
        guard var bytes = try? file.read(at: 0, count: ELFHeaderInfo.fileHeaderSize) else { return nil }
        var header: ELFHeaderInfo
        do {
            header = try ELFHeaderInfo.parse(bytes)
        } catch .truncated(_, let needed, _) {
            guard needed > 0, needed <= 64 << 10, let more = try? file.read(at: 0, count: needed),
                  let full = try? ELFHeaderInfo.parse(more) else { return nil }
            bytes = more
            header = full
        } catch {
            return nil
        }
        for segment in header.noteSegments.prefix(16) where segment.size > 0 && segment.size <= 64 << 10 {
            guard let noteBytes = try? file.read(at: segment.offset, count: Int(segment.size)) else { continue }
            if let found = ELFNotes.buildID(in: ELFNotes.parseNotes(noteBytes, alignment: segment.alignment)) { return found }
        }
        return nil
    }
}
