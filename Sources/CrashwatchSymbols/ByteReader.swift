// ByteReader.swift — the one reader of binary structures (ELF headers and notes, core notes, the raw
// capture's trailer, words of dumped memory): little-endian integers and byte ranges at offsets, every
// access checked against the bytes. Out of range is nil, never a trap, so a parser of hostile input says
// what it needs in `guard let` and nothing else.

/// Little-endian integers and byte ranges at offsets into `bytes`, bounds-checked: out of range is nil.
public struct ByteReader<Bytes: RandomAccessCollection> where Bytes.Element == UInt8, Bytes.Index == Int {
    /// The bytes read; offsets count from their first one.
    public let bytes: Bytes

    /// A reader of `bytes` (an array, a slice, a buffer of a mapped file).
    @inlinable public init(_ bytes: Bytes) { self.bytes = bytes }

    /// How many bytes there are to read.
    @inlinable public var count: Int { bytes.count }

    /// Whether `count` bytes at `offset` lie within the bytes (false for a negative offset or count).
    @inlinable public func contains(_ offset: Int, count: Int) -> Bool {
        offset >= 0 && count >= 0 && offset <= bytes.count && count <= bytes.count - offset
    }

    /// The little-endian integer of type `T` at `offset`, nil when its bytes do not all lie within the bytes.
    @inlinable public func integer<T: FixedWidthInteger>(_ type: T.Type = T.self, at offset: Int) -> T? {
        let size = MemoryLayout<T>.size
        guard size <= 8, contains(offset, count: size) else { return nil }
        let start = bytes.startIndex + offset
        var value: UInt64 = 0
        for index in (0..<size).reversed() { value = value << 8 | UInt64(bytes[start + index]) }
        return T(truncatingIfNeeded: value)
    }

    /// The `UInt16` at `offset`, nil out of range.
    @inlinable public func u16(_ offset: Int) -> UInt16? { integer(at: offset) }
    /// The `UInt32` at `offset`, nil out of range.
    @inlinable public func u32(_ offset: Int) -> UInt32? { integer(at: offset) }
    /// The `UInt64` at `offset`, nil out of range.
    @inlinable public func u64(_ offset: Int) -> UInt64? { integer(at: offset) }
    /// The `Int32` at `offset`, nil out of range.
    @inlinable public func i32(_ offset: Int) -> Int32? { integer(at: offset) }

    /// The `count` bytes at `offset`, nil when they do not all lie within the bytes.
    @inlinable public func bytes(at offset: Int, count: Int) -> Bytes.SubSequence? {
        guard contains(offset, count: count) else { return nil }
        let start = bytes.startIndex + offset
        return bytes[start..<(start + count)]
    }

    /// The `count` bytes at a 64-bit `offset` (as ELF headers give them), nil out of range.
    @inlinable public func bytes(at offset: UInt64, count: UInt64) -> Bytes.SubSequence? {
        guard offset <= UInt64(bytes.count), count <= UInt64(bytes.count) - offset else { return nil }
        return self.bytes(at: Int(offset), count: Int(count))
    }

    /// The text of the `count` bytes at `offset` up to the first NUL (UTF-8, repaired), nil out of range.
    @inlinable public func string(at offset: Int, count: Int) -> String? {
        guard let field = bytes(at: offset, count: count) else { return nil }
        return String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }
}
