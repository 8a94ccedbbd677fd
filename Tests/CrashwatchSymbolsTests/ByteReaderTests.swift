// ByteReaderTests.swift — the one reader of binary structures: little-endian integers at offsets, and nil
// (never a trap) for anything that reaches outside the bytes, whatever the offset and count; and the ELF
// program header table parser built on it, which refuses a table that does not lie within its bytes.
import CrashwatchSymbols
import Testing

@Suite struct ByteReaderTests {
    @Test("integers are read little-endian at any offset, from an array, a slice and a raw buffer alike")
    func littleEndian() {
        let bytes: [UInt8] = [0xaa, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xff, 0xff]
        let reader = ByteReader(bytes)
        #expect(reader.u16(1) == 0x0201)
        #expect(reader.u32(1) == 0x0403_0201)
        #expect(reader.u64(1) == 0x0807_0605_0403_0201)
        #expect(reader.i32(7) == Int32(bitPattern: 0xffff_0807))
        #expect(reader.integer(Int16.self, at: 9) == -1)
        #expect(ByteReader(bytes[1...]).u16(0) == 0x0201, "offsets count from the slice's first byte")
        bytes.withUnsafeBytes { raw in #expect(ByteReader(raw).u32(5) == 0x0807_0605) }
    }

    @Test("anything reaching outside the bytes is nil: past the end, negative, or sizes that overflow")
    func outOfRange() {
        let reader = ByteReader([UInt8](repeating: 7, count: 8))
        #expect(reader.u64(0) != nil)
        #expect(reader.u64(1) == nil)
        #expect(reader.u32(-1) == nil)
        #expect(reader.u16(Int.max) == nil)
        #expect(reader.bytes(at: 4, count: 5) == nil)
        #expect(reader.bytes(at: 4, count: -1) == nil)
        #expect(reader.bytes(at: UInt64.max, count: 1) == nil)
        #expect(reader.bytes(at: 1, count: UInt64.max) == nil)
        #expect(reader.bytes(at: 8, count: 0)?.isEmpty == true)
        #expect(reader.string(at: 6, count: 2) == "\u{7}\u{7}")
        #expect(ByteReader([UInt8]()).u16(0) == nil)
    }

    @Test("a program header table is parsed entry by entry, and refused when it does not lie within the bytes")
    func programHeaderTable() throws {
        let header = ProgramHeader(type: 1, flags: 5, offset: 0x1000, vaddr: 0x40_1000, filesz: 0x200, memsz: 0x300, align: 0x1000)
        let padding = [UInt8](repeating: 0, count: 8)
        // Elf64_Phdr: p_type, p_flags, p_offset, p_vaddr, p_paddr (0), p_filesz, p_memsz, p_align.
        let entry = header.type.littleEndianBytes + header.flags.littleEndianBytes + header.offset.littleEndianBytes
            + header.vaddr.littleEndianBytes + UInt64(0).littleEndianBytes + header.filesz.littleEndianBytes
            + header.memsz.littleEndianBytes + header.align.littleEndianBytes
        let table = entry + padding + entry + padding
        let parsed = try #require(ProgramHeader.table(ByteReader(table), at: 0, entrySize: 64, count: 2))
        #expect(parsed == [header, header])
        #expect(ProgramHeader.table(ByteReader(table), at: 0, entrySize: 64, count: 3) == nil)
        #expect(ProgramHeader.table(ByteReader(table), at: UInt64.max, entrySize: 56, count: 1) == nil)
        #expect(ProgramHeader.table(ByteReader(table), at: 0, entrySize: 40, count: 1) == nil, "an entry under 56 bytes")
    }
}

private extension FixedWidthInteger {
    /// The integer's bytes, least significant first: what `ByteReader` reads back.
    var littleEndianBytes: [UInt8] { withUnsafeBytes(of: littleEndian, Array.init) }
}
