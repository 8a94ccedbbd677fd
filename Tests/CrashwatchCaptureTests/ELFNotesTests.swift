// ELFNotesTests.swift — ELF notes and headers from bytes: hand-built notes (alignment, truncation,
// package metadata), a hand-built aarch64 header, and real binaries on this machine compared with
// `readelf -n` at test time — from the file and, as capture does it, from a loaded image's memory.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSymbols
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

/// Little-endian bytes of an integer.
private func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    (0..<T.bitWidth / 8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

/// One encoded note: header, NUL-terminated name and descriptor, each padded to `alignment`.
private func note(_ name: String, type: UInt32, _ descriptor: [UInt8], alignment: Int = 4, namesz: UInt32? = nil) -> [UInt8] {
    let nameBytes = name.isEmpty ? [] : Array(name.utf8) + [0]
    var out = le(namesz ?? UInt32(nameBytes.count)) + le(UInt32(descriptor.count)) + le(type) + nameBytes
    while out.count % alignment != 0 { out.append(0) }
    out += descriptor
    while out.count % alignment != 0 { out.append(0) }
    return out
}

/// An ELF64 little-endian file header followed by its program headers, as a linker would lay them out.
private func elfImage(machine: UInt16, type: UInt16, headers: [ProgramHeader], elfClass: UInt8 = 2, data: UInt8 = 1) -> [UInt8] {
    var out: [UInt8] = [0x7f, 0x45, 0x4c, 0x46, elfClass, data, 1, 0] + [UInt8](repeating: 0, count: 8)
    out += le(type) + le(machine) + le(UInt32(1)) + le(UInt64(0x1040))  // e_type e_machine e_version e_entry
    out += le(UInt64(64)) + le(UInt64(0)) + le(UInt32(0))  // e_phoff e_shoff e_flags
    out += le(UInt16(64)) + le(UInt16(56)) + le(UInt16(headers.count)) + le(UInt16(64)) + le(UInt16(0)) + le(UInt16(0))
    for h in headers {
        out += le(h.type) + le(h.flags) + le(h.offset) + le(h.vaddr) + le(h.vaddr) + le(h.filesz) + le(h.memsz) + le(h.align)
    }
    return out
}

/// Whether readelf is available for the comparison tests.
private let haveReadelf = Paths.which("readelf") != nil

@Suite struct ELFNoteParsingTests {
    let buildID: [UInt8] = Array(0..<20).map { UInt8($0 * 13 & 0xff) }

    @Test func buildIDAmongOtherNotes() {
        let bytes = note("GNU", type: 1, le(UInt32(0)) + le(UInt32(3)) + le(UInt32(2)) + le(UInt32(0)))  // ABI tag
            + note("GNU", type: 3, buildID)
        let notes = ELFNotes.parseNotes(bytes)
        #expect(notes.map(\.name) == ["GNU", "GNU"])
        #expect(notes.map(\.type) == [1, 3])
        #expect(ELFNotes.buildID(in: notes) == buildID)
        #expect(Hex.string(buildID) == "000d1a2734414e5b6875828f9ca9b6c3d0ddeaf7")
        #expect(Hex.string([]) == "")
    }

    @Test func buildIDNeedsTheGNUOwnerAndANonEmptyDescriptor() {
        #expect(ELFNotes.buildID(in: ELFNotes.parseNotes(note("Go", type: 3, buildID))) == nil)
        #expect(ELFNotes.buildID(in: ELFNotes.parseNotes(note("GNU", type: 3, []))) == nil)
        #expect(ELFNotes.buildID(in: []) == nil)
    }

    @Test func namesThatAreNotMultiplesOfFourArePadded() {
        // "Linux\0" is 6 bytes (padded to 8), "ab\0" is 3 (padded to 4), an empty name is 0.
        let bytes = note("Linux", type: 0x200, [1, 2, 3]) + note("ab", type: 7, [9]) + note("", type: 8, [4, 4])
            + note("GNU", type: 3, buildID)
        let notes = ELFNotes.parseNotes(bytes)
        #expect(notes == [
            ELFNote(name: "Linux", type: 0x200, descriptor: [1, 2, 3]),
            ELFNote(name: "ab", type: 7, descriptor: [9]),
            ELFNote(name: "", type: 8, descriptor: [4, 4]),
            ELFNote(name: "GNU", type: 3, descriptor: buildID),
        ])
    }

    @Test func eightByteAlignedSegments() {
        // A 7-character name ends at 12 + 8 = 20: the descriptor starts at 24 with 8-byte alignment.
        let property: [UInt8] = le(UInt32(0xc000_0002)) + le(UInt32(4)) + le(UInt32(3)) + le(UInt32(0))
        let bytes = note("ABCDEFG", type: 5, property, alignment: 8) + note("GNU", type: 3, buildID, alignment: 8)
        let notes = ELFNotes.parseNotes(bytes, alignment: 8)
        #expect(notes.map(\.descriptor) == [property, buildID])
        #expect(ELFNotes.parseNotes(bytes, alignment: 4).first?.descriptor != property)
    }

    @Test func truncationStopsWithoutCrashing() {
        let first = note("GNU", type: 1, [1, 2, 3, 4])
        let bytes = first + note("GNU", type: 3, buildID)
        for length in 0...bytes.count {
            let notes = ELFNotes.parseNotes(Array(bytes.prefix(length)))
            let expected = length == bytes.count ? 2 : (length >= first.count ? 1 : 0)
            #expect(notes.count == expected, "prefix of \(length) bytes")
        }
    }

    @Test func absurdSizesStopParsing() {
        let hugeName = le(UInt32.max) + le(UInt32(4)) + le(UInt32(3)) + Array("GNU\0".utf8) + [1, 2, 3, 4]
        #expect(ELFNotes.parseNotes(hugeName).isEmpty)
        let hugeDescriptor = le(UInt32(4)) + le(UInt32.max) + le(UInt32(3)) + Array("GNU\0".utf8) + [1, 2, 3, 4]
        #expect(ELFNotes.parseNotes(hugeDescriptor).isEmpty)
        let valid = note("GNU", type: 3, buildID)
        #expect(ELFNotes.parseNotes(valid + hugeName) == ELFNotes.parseNotes(valid))
    }

    @Test func packageMetadata() {
        let json = #"{"type":"deb","name":"crashwatch-demo","version":"1.2-3","architecture":"amd64"}"#
        let notes = ELFNotes.parseNotes(note("GNU", type: 3, buildID)
            + note("FDO", type: 0xcafe_1a7e, Array(json.utf8) + [0]))
        #expect(ELFNotes.packageMetadataJSON(in: notes) == json)
        #expect(ELFNotes.packageMetadataJSON(in: ELFNotes.parseNotes(note("FDO", type: 1, [0x7b, 0x7d]))) == nil)
        #expect(ELFNotes.packageMetadataJSON(in: ELFNotes.parseNotes(note("FDO", type: 0xcafe_1a7e, [0xff, 0xfe]))) == nil)
    }
}

@Suite struct ELFHeaderTests {
    let aarch64Headers = [
        ProgramHeader(type: 6, flags: 4, offset: 64, vaddr: 64, filesz: 168, memsz: 168, align: 8),
        ProgramHeader(type: 1, flags: 5, offset: 0, vaddr: 0, filesz: 0x7d0, memsz: 0x7d0, align: 0x10000),
        ProgramHeader(type: 1, flags: 6, offset: 0xdc8, vaddr: 0x1fdc8, filesz: 0x270, memsz: 0x278, align: 0x10000),
        ProgramHeader(type: 4, flags: 4, offset: 0x238, vaddr: 0x238, filesz: 0x44, memsz: 0x44, align: 4),
    ]

    @Test func handBuiltAarch64Header() throws {
        let info = try ELFHeaderInfo.parse(elfImage(machine: 183, type: 3, headers: aarch64Headers))
        #expect(info.machine == 183)
        #expect(info.architecture == .aarch64)
        #expect(info.type == .sharedObject)
        #expect(info.entry == 0x1040)
        #expect(info.programHeaderOffset == 64)
        #expect(info.programHeaders == aarch64Headers)
        #expect(info.noteSegments == [NoteSegment(offset: 0x238, size: 0x44, virtualAddress: 0x238, alignment: 4)])
        #expect(info.loadBias(imageBase: 0xaaaa_f000_0000) == 0xaaaa_f000_0000)
    }

    @Test func loadBias() throws {
        let exec = try ELFHeaderInfo.parse(elfImage(machine: 62, type: 2, headers: [
            ProgramHeader(type: 1, flags: 4, offset: 0, vaddr: 0x400000, filesz: 0x1000, memsz: 0x1000, align: 0x1000),
        ]))
        #expect(exec.type == .executable && exec.architecture == .x86_64)
        #expect(exec.loadBias(imageBase: 0x400000) == 0)
        let linkedHigh = try ELFHeaderInfo.parse(elfImage(machine: 62, type: 3, headers: [
            ProgramHeader(type: 1, flags: 4, offset: 0, vaddr: 0x10000, filesz: 0x1000, memsz: 0x1000, align: 0x1000),
        ]))
        #expect(linkedHigh.loadBias(imageBase: 0x7f00_0001_0000) == 0x7f00_0000_0000)
        #expect(try ELFHeaderInfo.parse(elfImage(machine: 62, type: 3, headers: [])).loadBias(imageBase: 1) == nil)
    }

    @Test func rejectsWhatItCannotRead() {
        let good = elfImage(machine: 183, type: 3, headers: aarch64Headers)
        #expect(throws: ELFParseError.badMagic) { try ELFHeaderInfo.parse([0x7f, 0x45, 0x4c, 0x47, 2, 1, 1]) }
        #expect(throws: ELFParseError.badMagic) { try ELFHeaderInfo.parse(Array("#!/bin/sh\necho hi\n".utf8) + [UInt8](repeating: 0, count: 64)) }
        #expect(throws: ELFParseError.truncated(what: "identification", needed: 16, actual: 2)) { try ELFHeaderInfo.parse([0x7f, 0x45]) }
        #expect(throws: ELFParseError.notELF64(elfClass: 1)) {
            try ELFHeaderInfo.parse(elfImage(machine: 3, type: 2, headers: [], elfClass: 1))
        }
        #expect(throws: ELFParseError.notLittleEndian(dataEncoding: 2)) {
            try ELFHeaderInfo.parse(elfImage(machine: 183, type: 2, headers: [], data: 2))
        }
        #expect(throws: ELFParseError.truncated(what: "file header", needed: 64, actual: 40)) {
            try ELFHeaderInfo.parse(Array(good.prefix(40)))
        }
        #expect(throws: ELFParseError.truncated(what: "program header table", needed: 64 + 4 * 56, actual: 100)) {
            try ELFHeaderInfo.parse(Array(good.prefix(100)))
        }
        var xnum = good
        xnum[56] = 0xff; xnum[57] = 0xff
        #expect(throws: ELFParseError.extendedProgramHeaderCount) { try ELFHeaderInfo.parse(xnum) }
        var shortEntries = good
        shortEntries[54] = 32
        #expect(throws: ELFParseError.badProgramHeaderSize(32)) { try ELFHeaderInfo.parse(shortEntries) }
        for length in 0..<good.count { _ = try? ELFHeaderInfo.parse(Array(good.prefix(length))) }
    }

    @Test(.enabled(if: haveReadelf, "readelf (binutils) is not installed"))
    func buildIDOfARealFileMatchesReadelf() throws {
        let path = try #require(["/bin/true", "/usr/bin/true"].first { FileManager.default.fileExists(atPath: $0) })
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let header = try ELFHeaderInfo.parse(bytes)
        #expect(header.architecture == .host)
        #expect(header.type == .sharedObject || header.type == .executable)
        #expect(!header.noteSegments.isEmpty)
        let notes = ELFNotes.notes(inFile: bytes, header: header)
        let expected = try Readelf.buildIDs(of: path)
        try #require(expected.count == 1, "readelf -n \(path) shows no single build-id: nothing to compare")
        #expect(ELFNotes.buildID(in: notes).map(Hex.string) == expected.first)
    }

    @Test(.enabled(if: haveReadelf, "readelf (binutils) is not installed"))
    func buildIDFromALoadedImageInMemoryMatchesReadelf() throws {
        // The capture path, run on this process: maps → image base → header → PT_NOTE in memory → build-id.
        let table = ImageTable(mapsText: try ProcFS.readText("/proc/self/maps"))
        let libc = try #require(table.first { $0.name == "libc.so.6" && $0.baseAddress != nil })
        let base = try #require(libc.baseAddress)
        /// Reads bytes of this process's memory (the test's stand-in for process_vm_readv).
        func read(_ address: UInt64, _ count: Int) -> [UInt8] {
            let pointer = UnsafeRawPointer(bitPattern: UInt(address))!
            return Array(UnsafeRawBufferPointer(start: pointer, count: count))
        }
        // First the file header alone; the error then says how much to read for the program headers.
        var needed = ELFHeaderInfo.fileHeaderSize
        let result = Result { () throws(ELFParseError) in try ELFHeaderInfo.parse(read(base, needed)) }
        if case .failure(.truncated(_, let more, _)) = result { needed = more }
        #expect(needed > ELFHeaderInfo.fileHeaderSize)
        let header = try ELFHeaderInfo.parse(read(base, needed))
        let bias = try #require(header.loadBias(imageBase: base))
        let notes = header.noteSegments.flatMap {
            ELFNotes.parseNotes(read(bias + $0.virtualAddress, Int($0.size)), alignment: $0.alignment)
        }
        let expected = try Readelf.buildIDs(of: libc.path)
        try #require(expected.count == 1, "readelf -n \(libc.path) shows no single build-id: nothing to compare")
        #expect(ELFNotes.buildID(in: notes).map(Hex.string) == expected.first)
    }
}
