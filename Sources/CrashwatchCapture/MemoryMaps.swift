// MemoryMaps.swift — `/proc/PID/maps` as values: a tolerant line parser, its permissions and kinds of
// mapping (the grouping into loaded images and the address lookup: LoadedImages.swift). Text in, values out: no I/O here, so every case (spaces and ` (deleted)` in paths, memfd
// executables, the vdso) is tested with inline maps text.
//
// Decisions an experienced reader would otherwise have to guess:
// - A path is everything after the whitespace that follows the inode column. A file name that really
//   starts with whitespace therefore loses it, and the kernel's `\012` escape for a newline in a name is
//   kept as printed (backslashes are not escaped, so undoing it would be ambiguous).
// - Only a trailing ` (deleted)` marks a deleted file; it is removed from `path`. A live file whose name
//   ends in ` (deleted)` is indistinguishable in this text and is reported as deleted.
// - Images are made of file-backed mappings (`file`, `memfd`) plus `[vdso]` and `[vsyscall]`, which hold
//   code too. Anonymous memory (including a library's `.bss` tail), heap, stack and `[vvar]` are not.

import CrashwatchModel
import CrashwatchSystem
import CrashwatchSupervisor
import CrashwatchSymbols

/// The access flags of a mapping, from the `rwxp` column.
public struct MemoryPermissions: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// `r`: the mapping can be read.
    public var isReadable: Bool
    /// `w`: the mapping can be written.
    public var isWritable: Bool
    /// `x`: the mapping can be executed.
    public var isExecutable: Bool
    /// `s` (shared) rather than `p` (private, copy-on-write).
    public var isShared: Bool

    /// Sets each flag explicitly.
    public init(isReadable: Bool, isWritable: Bool, isExecutable: Bool, isShared: Bool) {
        self.isReadable = isReadable
        self.isWritable = isWritable
        self.isExecutable = isExecutable
        self.isShared = isShared
    }

    /// Parses the four-character column (`r-xp`); nil unless it is exactly `[r-][w-][x-][ps]`.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, let parsed = MemoryPermissions(bytes[...]) else { return nil }
        self = parsed
    }

    /// Parses four ASCII bytes; nil when any is not the letter or dash expected in its position.
    init?(_ b: ArraySlice<UInt8>) {
        let i = b.startIndex
        guard b.count == 4,
              b[i] == UInt8(ascii: "r") || b[i] == UInt8(ascii: "-"),
              b[i + 1] == UInt8(ascii: "w") || b[i + 1] == UInt8(ascii: "-"),
              b[i + 2] == UInt8(ascii: "x") || b[i + 2] == UInt8(ascii: "-"),
              b[i + 3] == UInt8(ascii: "p") || b[i + 3] == UInt8(ascii: "s")
        else { return nil }
        self.init(isReadable: b[i] == UInt8(ascii: "r"), isWritable: b[i + 1] == UInt8(ascii: "w"),
                  isExecutable: b[i + 2] == UInt8(ascii: "x"), isShared: b[i + 3] == UInt8(ascii: "s"))
    }

    /// The column as the kernel prints it (`r-xp`).
    public var description: String {
        (isReadable ? "r" : "-") + (isWritable ? "w" : "-") + (isExecutable ? "x" : "-") + (isShared ? "s" : "p")
    }
}

/// What backs a mapping, derived from its path column.
public enum MappingKind: Sendable, Equatable, Hashable {
    /// A regular file (an executable, a library, a data file, a device node).
    case file
    /// Anonymous memory: no path, or a named `[anon:…]` / `[anon_shmem:…]` region.
    case anonymous
    /// The process heap (`[heap]`, the `brk` area).
    case heap
    /// The main thread's stack (`[stack]`; old kernels also printed `[stack:TID]`).
    case stack
    /// The kernel's virtual dynamic shared object (`[vdso]`), a real ELF image.
    case vdso
    /// The legacy fixed-address system call page (`[vsyscall]`).
    case vsyscall
    /// The vDSO's data pages (`[vvar]`, `[vvar_vclock]`).
    case vvar
    /// A `memfd_create` file (`/memfd:NAME`), e.g. a program run with `fexecve`.
    case memfd
    /// Any other kernel-named region (`[uprobes]`, `anon_inode:…`), with its name as printed.
    case pseudo(String)

    /// Classifies a path column that already has its ` (deleted)` suffix removed.
    public init(path: String) {
        if path.isEmpty { self = .anonymous; return }
        if path.hasPrefix("/memfd:") { self = .memfd; return }
        if path.hasPrefix("/") { self = .file; return }
        switch path {
        case "[heap]": self = .heap
        case "[stack]": self = .stack
        case "[vdso]": self = .vdso
        case "[vsyscall]": self = .vsyscall
        default:
            if path.hasPrefix("[stack:") { self = .stack }
            else if path.hasPrefix("[vvar") { self = .vvar }
            else if path.hasPrefix("[anon:") || path.hasPrefix("[anon_shmem:") { self = .anonymous }
            else { self = .pseudo(path) }
        }
    }

    /// Whether mappings of this kind hold code or an ELF file and so can form a `LoadedImage`.
    public var formsImage: Bool {
        switch self {
        case .file, .memfd, .vdso, .vsyscall: true
        case .anonymous, .heap, .stack, .vvar, .pseudo: false
        }
    }
}

/// One line of `/proc/PID/maps`: an address range and what is mapped there.
public struct MemoryMapping: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The first address of the mapping.
    public let start: UInt64
    /// One past the last address of the mapping.
    public let end: UInt64
    /// The access flags (`r-xp`).
    public let permissions: MemoryPermissions
    /// The offset in the file where the mapping starts (0 for anonymous memory).
    public let offset: UInt64
    /// The device of the backing file as printed (`fe:00`, hex major:minor); `00:00` when none.
    public let device: String
    /// The inode of the backing file; 0 when none.
    public let inode: UInt64
    /// The path column as printed, minus a trailing ` (deleted)`; empty for anonymous memory.
    public let path: String
    /// Whether the path ended in ` (deleted)`: the file was unlinked (always so for memfd files).
    public let isDeleted: Bool
    /// What backs the mapping, derived from `path`.
    public let kind: MappingKind

    /// Sets every field explicitly.
    public init(start: UInt64, end: UInt64, permissions: MemoryPermissions, offset: UInt64,
                device: String, inode: UInt64, path: String, isDeleted: Bool, kind: MappingKind) {
        self.start = start
        self.end = end
        self.permissions = permissions
        self.offset = offset
        self.device = device
        self.inode = inode
        self.path = path
        self.isDeleted = isDeleted
        self.kind = kind
    }

    /// Builds a mapping from a path column as printed, deriving `isDeleted` and `kind` from it.
    public init(start: UInt64, end: UInt64, permissions: MemoryPermissions, offset: UInt64,
                device: String, inode: UInt64, printedPath: String) {
        let suffix = " (deleted)"
        let deleted = printedPath.hasSuffix(suffix)
        let path = deleted ? String(printedPath.dropLast(suffix.count)) : printedPath
        self.init(start: start, end: end, permissions: permissions, offset: offset, device: device,
                  inode: inode, path: path, isDeleted: deleted, kind: MappingKind(path: path))
    }

    /// The number of bytes mapped.
    public var size: UInt64 { end - start }

    /// Whether the address lies in `start..<end`.
    public func contains(_ address: UInt64) -> Bool { address >= start && address < end }

    /// The line roughly as the kernel prints it (single spaces, no column padding).
    public var description: String {
        let range = String(start, radix: 16) + "-" + String(end, radix: 16)
        let printed = path + (isDeleted ? " (deleted)" : "")
        return "\(range) \(permissions) \(String(offset, radix: 16)) \(device) \(inode) \(printed)"
    }

    /// Parses `/proc/PID/maps` text into mappings in input order, skipping lines that are malformed.
    public static func parse(_ text: some StringProtocol) -> [MemoryMapping] {
        var owned = String(text)
        return owned.withUTF8 { buffer in
            var result: [MemoryMapping] = []
            var lineStart = 0
            while lineStart < buffer.count {
                var lineEnd = lineStart
                while lineEnd < buffer.count && buffer[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                if let mapping = parseLine(UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd])) {
                    result.append(mapping)
                }
                lineStart = lineEnd + 1
            }
            return result
        }
    }

    /// Parses one line (without its newline); nil when any of the first five columns is malformed.
    static func parseLine(_ line: UnsafeBufferPointer<UInt8>) -> MemoryMapping? {
        var scanner = LineScanner(bytes: line)
        guard let start = scanner.hex(), scanner.consume(UInt8(ascii: "-")),
              let end = scanner.hex(), start < end, scanner.skipBlanks(),
              let permissions = scanner.permissions(), scanner.skipBlanks(),
              let offset = scanner.hex(), scanner.skipBlanks(),
              let device = scanner.device(), scanner.skipBlanks(),
              let inode = scanner.decimal()
        else { return nil }
        // The inode must be followed by whitespace (then the path) or by the end of the line.
        if !scanner.atEnd && !scanner.skipBlanks() { return nil }
        let printedPath = String(decoding: UnsafeBufferPointer(rebasing: line[scanner.position...]), as: UTF8.self)
        return MemoryMapping(start: start, end: end, permissions: permissions, offset: offset,
                             device: device, inode: inode, printedPath: printedPath)
    }
}

/// A cursor over one maps line's bytes with the few column readers the format needs.
private struct LineScanner {
    /// The line's bytes.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The index of the next unread byte.
    var position = 0

    /// Whether every byte has been read.
    var atEnd: Bool { position >= bytes.count }

    /// Reads the byte if it is the one expected.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard !atEnd, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Skips spaces and tabs; false when there were none.
    mutating func skipBlanks() -> Bool {
        let before = position
        while !atEnd && (bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t")) { position += 1 }
        return position > before
    }

    /// The value of a hex digit, nil for any other byte.
    static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt64(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// Reads 1–16 hex digits as a number; nil when there are none or more than fit in 64 bits.
    mutating func hex() -> UInt64? {
        var value: UInt64 = 0, digits = 0
        while !atEnd, let digit = Self.hexValue(bytes[position]) {
            guard digits < 16 else { return nil }
            value = value << 4 | digit
            digits += 1
            position += 1
        }
        return digits > 0 ? value : nil
    }

    /// Reads decimal digits as a number (`decimalNumber`); nil when there are none or the value overflows.
    mutating func decimal() -> UInt64? {
        let start = position
        while !atEnd, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") { position += 1 }
        return decimalNumber(bytes[start..<position])
    }

    /// Reads the four-character permissions column.
    mutating func permissions() -> MemoryPermissions? {
        guard position + 4 <= bytes.count,
              let parsed = MemoryPermissions(ArraySlice(bytes[position..<position + 4]))
        else { return nil }
        position += 4
        return parsed
    }

    /// Reads the `major:minor` device column (hex on both sides) and returns it as printed.
    mutating func device() -> String? {
        let begin = position
        guard hex() != nil, consume(UInt8(ascii: ":")), hex() != nil else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[begin..<position]), as: UTF8.self)
    }
}
