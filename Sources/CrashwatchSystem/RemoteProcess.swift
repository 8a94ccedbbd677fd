// RemoteProcess.swift — reading another (stopped, traced) process: its memory through a page cache,
// its stacks through libunwind, its symbols through libdw. Thin owners of the C shim's handles; they
// must stay on the tracer thread.
import CCrashwatch
import Glibc

/// One unwound frame as libunwind found it.
public struct UnwoundFrame: Equatable, Sendable {
    /// The frame's program counter (a return address for every frame but an interrupted one).
    public let pc: UInt64
    /// The frame's stack pointer.
    public let sp: UInt64
    /// Whether a signal interrupted this frame: its registers come from the signal frame and its pc is exact.
    public let isSignalFrame: Bool
    /// Whether unwind info (CFI) covers this frame's pc, so its caller was found through CFI.
    public let hasUnwindInfo: Bool
}

/// Why a thread's unwind ended.
public enum UnwindStop: Equatable, Sendable {
    /// The outermost frame was reached.
    case end
    /// The frame limit was reached.
    case limit
    /// The stack pointer went backwards or repeated: a loop or a corrupted stack.
    case noProgress
    /// libunwind failed: its error code and text.
    case error(code: Int32, message: String)

    /// A short text for the report (`end of stack`, `frame limit reached`, …).
    public var text: String {
        switch self {
        case .end: "end of stack"
        case .limit: "frame limit reached"
        case .noProgress: "stack pointer did not advance"
        case .error(let code, let message): "unwinding failed: \(message) (\(code))"
        }
    }
}

/// A process's memory and stacks, read remotely with libunwind and a page cache.
public final class RemoteUnwinder {
    private let handle: OpaquePointer
    /// The process being read.
    public let pid: Int32

    /// Prepares to read process `pid` (which the calling thread traces and has stopped).
    public init(pid: Int32) throws(SystemError) {
        guard let handle = cw_unwinder_create(pid) else { throw SystemError("libunwind address space", pid: pid, errno: lastErrno()) }
        self.handle = handle
        self.pid = pid
    }

    deinit { cw_unwinder_destroy(handle) }

    /// Tells the unwinder the address ranges of the process's images (sorted by start, non-overlapping),
    /// so each keeps its unwind tables for the whole capture instead of being re-read on every switch.
    public func setImageRanges(_ ranges: [Range<UInt64>]) {
        let starts = ranges.map(\.lowerBound), ends = ranges.map(\.upperBound)
        _ = starts.withUnsafeBufferPointer { s in
            ends.withUnsafeBufferPointer { e in cw_unwinder_set_images(handle, s.baseAddress, e.baseAddress, ranges.count) }
        }
    }

    /// Reads up to `count` bytes at `address`; fewer when the range runs into unmapped memory, empty when unreadable.
    public func read(_ address: UInt64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { cw_unwinder_read(handle, address, $0.baseAddress, count) }
        if got <= 0 { return [] }
        bytes.removeSubrange(got...)
        return bytes
    }

    /// Reads one little-endian 64-bit word, or nil when unreadable.
    public func readWord(_ address: UInt64) -> UInt64? {
        let bytes = read(address, count: 8)
        guard bytes.count == 8 else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    /// Unwinds one thread from its registers (the host's NT_PRSTATUS words), at most `maxFrames` frames.
    public func unwind(registers: [UInt64], maxFrames: Int) -> (frames: [UnwoundFrame], stop: UnwindStop) {
        var raw = [cw_frame](repeating: cw_frame(), count: max(maxFrames, 1))
        var stop: Int32 = 0
        let count = registers.withUnsafeBufferPointer { regs in
            raw.withUnsafeMutableBufferPointer { frames in
                cw_unwind(handle, regs.baseAddress, regs.count, frames.baseAddress, Int32(maxFrames), &stop)
            }
        }
        let frames = raw[0..<Int(count)].map {
            UnwoundFrame(pc: $0.pc, sp: $0.sp, isSignalFrame: $0.signal_frame != 0, hasUnwindInfo: $0.has_unwind_info != 0)
        }
        let reason: UnwindStop = switch stop {
        case CW_UNWIND_STOP_END: .end
        case CW_UNWIND_STOP_LIMIT: .limit
        case CW_UNWIND_STOP_NO_PROGRESS: .noProgress
        default: .error(code: stop, message: String(cString: cw_unwind_error_name(stop)))
        }
        return (frames, reason)
    }
}

/// Which symbol table named a function.
public enum SymbolSource: String, Sendable {
    /// The file's own `.symtab`.
    case symtab
    /// Only the dynamic symbol table (exported functions).
    case dynsym
    /// A separate debug file (found by build-id, debuglink, a debug directory or debuginfod).
    case debuginfo
}

/// One level of the calls an address is in, innermost first: inlined calls, then the concrete function.
public struct SourceLevel: Equatable, Sendable {
    /// The linkage (mangled) name, else the DWARF name.
    public let name: String?
    /// The source file of this level's location.
    public let file: String?
    /// The line, when known.
    public let line: Int?
    /// The column, when known.
    public let column: Int?
    /// Whether this level was inlined into the next one.
    public let inlined: Bool
}

/// What libdw found for one address.
public struct SymbolLookup: Equatable, Sendable {
    /// The module (image) path as libdw named it.
    public let module: String?
    /// The raw symbol name.
    public let symbol: String?
    /// Offset of the address from the symbol's start.
    public let offset: UInt64
    /// Where the symbol came from.
    public let source: SymbolSource?
    /// The inline chain and source locations from DWARF (empty without debug info or when not asked for).
    public let levels: [SourceLevel]
}

/// An image to report to an offline symbolizer, with where it was loaded.
public struct OfflineImage: Sendable {
    /// How libdw finds the image's ELF file.
    public enum Source: Sendable {
        /// A local file already checked to carry the image's build-id (the binary or its debug file).
        case file(String)
        /// Only the build-id: libdw searches the debug directories and debuginfod for it.
        case buildID([UInt8])
    }

    public let name: String
    public let source: Source
    public let loadAddress: UInt64
    public let size: UInt64

    public init(name: String, source: Source, loadAddress: UInt64, size: UInt64) {
        self.name = name
        self.source = source
        self.loadAddress = loadAddress
        self.size = size
    }
}

/// Function names, source lines and inline chains for addresses, through libdw: of a live process's
/// modules, or of ELF files reported at the addresses a report recorded (offline).
public final class Symbolizer {
    private let handle: OpaquePointer
    /// Answers already given: threads of one process share most of their return addresses.
    private var cache: [UInt64: SymbolLookup?] = [:]

    /// Reports live process `pid`'s modules to libdw; `debugDirectories` are searched after the standard places.
    public init(pid: Int32, debugDirectories: [String] = []) throws(SystemError) {
        let path = debugDirectories.joined(separator: ":")
        guard let handle = cw_symbolizer_create(pid, path) else { throw SystemError("dwfl_linux_proc_report", pid: pid, errno: lastErrno()) }
        self.handle = handle
    }

    /// Reports `images` to an offline libdw session. An image libdw cannot open is skipped and named in `failures`.
    public init(offline images: [OfflineImage], debugDirectories: [String] = []) throws(SystemError) {
        guard let handle = cw_symbolizer_create_offline(debugDirectories.joined(separator: ":")) else {
            throw SystemError("dwfl_begin", errno: lastErrno())
        }
        self.handle = handle
        for image in images {
            let result: Int32
            switch image.source {
            case .file(let path):
                result = cw_symbolizer_report_file(handle, image.name, path, image.loadAddress)
            case .buildID(let bytes):
                result = bytes.withUnsafeBufferPointer {
                    cw_symbolizer_report_build_id(handle, image.name, image.loadAddress, image.loadAddress &+ image.size,
                                                  $0.baseAddress, $0.count)
                }
            }
            if result != 0 { failures.append((image.name, String(cString: cw_symbolizer_last_error()))) }
        }
        cw_symbolizer_end_reporting(handle)
    }

    /// Images an offline session could not report, with libdw's reason.
    public private(set) var failures: [(path: String, reason: String)] = []

    deinit { cw_symbolizer_destroy(handle) }

    /// Looks `address` up, with its inline chain and source lines when `withSource`; nil when no module contains it.
    public func lookup(_ address: UInt64, withSource: Bool = true) -> SymbolLookup? {
        if let known = cache[address] { return known }
        var raw = cw_symbol()
        let result = cw_symbolize(handle, address, &raw)
        var found: SymbolLookup?
        if result >= 0 {
            var levels: [SourceLevel] = []
            if withSource {
                var buffer = [cw_source_level](repeating: cw_source_level(), count: 32)
                let count = buffer.withUnsafeMutableBufferPointer { cw_source_levels(handle, address, $0.baseAddress, 32) }
                levels = buffer[0..<Int(count)].map { level in
                    SourceLevel(name: level.name.map { String(cString: $0) }, file: level.file.map { String(cString: $0) },
                                line: level.line > 0 ? Int(level.line) : nil, column: level.column > 0 ? Int(level.column) : nil,
                                inlined: level.inlined != 0)
                }
            }
            let source: SymbolSource? = switch raw.source {
            case CW_SYMBOL_SOURCE_SYMTAB: .symtab
            case CW_SYMBOL_SOURCE_DYNSYM: .dynsym
            case CW_SYMBOL_SOURCE_DEBUGINFO: .debuginfo
            default: nil
            }
            found = SymbolLookup(module: raw.module_name.map { String(cString: $0) }, symbol: raw.name.map { String(cString: $0) },
                                 offset: raw.offset, source: raw.name == nil ? nil : source, levels: levels)
        }
        cache[address] = found
        return found
    }
}

/// Demangles a C++ (`_Z…`) or Swift (`$s…`) symbol name; nil when the name is not mangled or not valid.
public func demangle(_ name: String) -> String? {
    guard let pointer = cw_demangle(name) else { return nil }
    defer { free(pointer) }
    return String(cString: pointer)
}
