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
    /// Whether a signal interrupted this frame, so its pc is exact.
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

    /// Page-cache hits and misses so far.
    public var cacheStatistics: (hits: UInt64, misses: UInt64) {
        var hits: UInt64 = 0, misses: UInt64 = 0
        cw_unwinder_cache_stats(handle, &hits, &misses)
        return (hits, misses)
    }
}

/// What libdw found for one address.
public struct SymbolLookup: Equatable, Sendable {
    /// The module (image) path as libdw named it.
    public let module: String?
    /// The raw symbol name.
    public let symbol: String?
    /// Offset of the address from the symbol's start.
    public let offset: UInt64
}

/// Function names for addresses of one live process, through libdw.
public final class RemoteSymbolizer {
    private let handle: OpaquePointer

    /// Reports process `pid`'s modules to libdw.
    public init(pid: Int32) throws(SystemError) {
        guard let handle = cw_symbolizer_create(pid) else { throw SystemError("dwfl_linux_proc_report", pid: pid, errno: lastErrno()) }
        self.handle = handle
    }

    deinit { cw_symbolizer_destroy(handle) }

    /// Answers already given: threads of one process share most of their return addresses.
    private var cache: [UInt64: SymbolLookup?] = [:]

    /// Looks `address` up; nil when no module contains it.
    public func lookup(_ address: UInt64) -> SymbolLookup? {
        if let known = cache[address] { return known }
        var raw = cw_symbol()
        let result = cw_symbolize(handle, address, &raw)
        let found = result < 0 ? nil : SymbolLookup(
            module: raw.module_name.map { String(cString: $0) },
            symbol: raw.name.map { String(cString: $0) },
            offset: raw.offset)
        cache[address] = found
        return found
    }
}
