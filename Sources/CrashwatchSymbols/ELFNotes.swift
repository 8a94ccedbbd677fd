// ELFNotes.swift — ELF notes (GNU build-id, FDO package metadata) as capture and processing read them:
// pure functions over the bytes of a PT_NOTE segment, found through the program headers that
// ELFHeaders.swift parses. The capture code reads the header at an image's base address from process
// memory, finds PT_NOTE at `loadBias + p_vaddr`, reads those bytes and parses them here, so a deleted or
// replaced file still gets its build-id. Malformed or truncated input ends parsing early; it never traps.

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
        let reader = ByteReader(bytes)
        while let nameSize = reader.u32(offset).map(Int.init), let descriptorSize = reader.u32(offset + 4).map(Int.init),
              let type = reader.u32(offset + 8) {
            let nameStart = offset + 12
            guard let name = reader.string(at: nameStart, count: nameSize) else { break }
            let descriptorStart = alignUp(nameStart + nameSize, to: align)
            guard let descriptor = reader.bytes(at: descriptorStart, count: descriptorSize) else { break }
            notes.append(ELFNote(name: name, type: type, descriptor: Array(descriptor)))
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

/// The few things processing reads from ELF files itself.
public enum ELFFile {
    /// The GNU build-id of the ELF file open at `file`, from its PT_NOTE segments; nil when it has none.
    public static func buildID(of file: OwnedDescriptor) -> [UInt8]? {
        guard let header = ELFHeaderInfo.read({ try? file.read(at: 0, count: $0) }) else { return nil }
        for segment in header.noteSegments.prefix(16) where segment.size > 0 && segment.size <= 64 << 10 {
            guard let noteBytes = try? file.read(at: segment.offset, count: Int(segment.size)) else { continue }
            if let found = ELFNotes.buildID(in: ELFNotes.parseNotes(noteBytes, alignment: segment.alignment)) { return found }
        }
        return nil
    }
}
