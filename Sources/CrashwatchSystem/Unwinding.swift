// Unwinding.swift — stacks through libunwind over a captured address space, and symbols through libdw
// over reported images. Thin owners of the C shim's handles; neither reads the crashed process itself.
import CCrashwatch
import Glibc
import Synchronization

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

    public init(pc: UInt64, sp: UInt64, isSignalFrame: Bool, hasUnwindInfo: Bool) {
        self.pc = pc
        self.sp = sp
        self.isSignalFrame = isSignalFrame
        self.hasUnwindInfo = hasUnwindInfo
    }
}

/// Why a thread's unwind ended.
public enum UnwindStop: Equatable, Sendable {
    /// The outermost frame was reached.
    case end
    /// The frame limit was reached.
    case limit
    /// The stack pointer went backwards or repeated: a loop or a corrupted stack.
    case noProgress
    /// The unwinder failed: libunwind's negative error code and text, or libdw's text (code 3).
    case error(code: Int32, message: String)

    /// A short text for the report (`end of stack`, `frame limit reached`, …).
    public var text: String {
        switch self {
        case .end: "end of stack"
        case .limit: "frame limit reached"
        case .noProgress: "stack pointer did not advance"
        case .error(let code, let message): "unwinding failed: \(message)" + (code < 0 ? " (\(code))" : "")
        }
    }
}

/// A crashed process's address space as captured — stack and image bytes copied while it was held,
/// image files opened and checked afterwards — with libunwind over it. Reads nothing else: no ptrace,
/// no /proc, no path. Owns neither the bytes nor the descriptors it is given: the caller keeps both
/// alive as long as the space.
public final class CapturedAddressSpace {
    fileprivate let handle: OpaquePointer

    public init() throws(SystemError) {
        guard let handle = cw_space_create() else { throw SystemError("libunwind address space", errno: lastErrno()) }
        self.handle = handle
    }

    deinit { cw_space_destroy(handle) }

    /// Adds `bytes` (which must stay valid and unchanged as long as the space) at `address`.
    public func add(address: UInt64, bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = cw_space_add_bytes(handle, address, base, UInt64(bytes.count))
    }

    /// Adds `length` bytes at `address`, read from the file open at `fd` from `offset` on.
    public func add(address: UInt64, length: UInt64, fd: Int32, offset: UInt64) {
        _ = cw_space_add_file(handle, address, length, fd, offset)
    }

    /// Adds `length` bytes at `address` that read as zeros: an image's data pages, whose contents unwinding
    /// never needs but whose addresses unwind tables may point into (personality pointers).
    public func addZeros(address: UInt64, length: UInt64) {
        _ = cw_space_add_zeros(handle, address, length)
    }

    /// Adds a loaded image [start, end) whose ELF header is at `base`; its unwind table is found from there.
    public func addImage(start: UInt64, end: UInt64, base: UInt64) {
        _ = cw_space_add_image(handle, start, end, base)
    }

    /// Gives the image starting at `start` its file (open, checked, kept alive by the caller), where
    /// `.debug_frame` is read for the addresses the image's `.eh_frame` does not cover.
    public func setImageFile(start: UInt64, fd: Int32) {
        _ = cw_space_set_image_file(handle, start, fd)
    }

    /// Reads up to `count` bytes at `address`; fewer where the captured ranges end, empty when none covers it.
    public func read(_ address: UInt64, count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { cw_space_read(handle, address, $0.baseAddress, count) }
        if got <= 0 { return [] }
        bytes.removeSubrange(got...)
        return bytes
    }

    /// Reads one little-endian 64-bit word, or nil when not captured.
    public func readWord(_ address: UInt64) -> UInt64? {
        let bytes = read(address, count: 8)
        guard bytes.count == 8 else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    /// Whether the unwind table covering `address` is its image's `.debug_frame` (not `.eh_frame`).
    public func usesDebugFrame(at address: UInt64) -> Bool {
        cw_space_table_kind(handle, address) == CW_TABLE_DEBUG_FRAME
    }

    /// Why the image containing `address` has no usable unwind table; nil when it has one (or no image contains it).
    public func unwindTableProblem(at address: UInt64) -> String? {
        cw_space_image_problem(handle, address).map { String(cString: $0) }
    }

    /// Unwinds one thread from its registers (the host's NT_PRSTATUS words), at most `maxFrames` frames.
    public func unwind(registers: [UInt64], maxFrames: Int) -> (frames: [UnwoundFrame], stop: UnwindStop) {
        unwindThrough(registers, maxFrames: maxFrames, message: { String(cString: cw_unwind_error_name($0)) }) {
            cw_unwind(handle, $0, $1, $2, $3, $4)
        }
    }

    /// The last address the latest `unwind` (on this thread) wanted to read and this space did not hold:
    /// where an unwind that failed ran out of captured memory. Nil when every read was answered.
    public var lastMissingRead: UInt64? {
        let address = cw_unwind_missing_address()
        return address == 0 ? nil : address
    }
}

/// Runs a C unwinder (`call(registers, count, frames, maxFrames, &stop)`, returning how many frames it filled
/// in) and reads what it found; `message` names an error code.
private func unwindThrough(_ registers: [UInt64], maxFrames: Int, message: (Int32) -> String,
                           _ call: (UnsafePointer<UInt64>?, Int, UnsafeMutablePointer<cw_frame>?, Int32, UnsafeMutablePointer<Int32>) -> Int32)
    -> (frames: [UnwoundFrame], stop: UnwindStop)
{
    var raw = [cw_frame](repeating: cw_frame(), count: max(maxFrames, 1))
    var stop: Int32 = 0
    let count = registers.withUnsafeBufferPointer { regs in
        raw.withUnsafeMutableBufferPointer { frames in call(regs.baseAddress, regs.count, frames.baseAddress, Int32(maxFrames), &stop) }
    }
    let frames = raw[0..<Int(count)].map {
        UnwoundFrame(pc: $0.pc, sp: $0.sp, isSignalFrame: $0.signal_frame != 0, hasUnwindInfo: $0.has_unwind_info != 0)
    }
    let reason: UnwindStop = switch stop {
    case CW_UNWIND_STOP_END: .end
    case CW_UNWIND_STOP_LIMIT: .limit
    case CW_UNWIND_STOP_NO_PROGRESS: .noProgress
    default: .error(code: stop, message: message(stop))
    }
    return (frames, reason)
}

/// libdw's unwinder over a `CapturedAddressSpace`'s memory, for the stacks the host's libunwind cannot
/// unwind: another architecture's (an aarch64 core on x86-64), and ARM64's with pointer authentication.
/// Unwind tables come from the image files reported to it (open, checked, by descriptor). Frames after
/// the first have no known stack pointer (libdw 0.188 gives an unwound frame's pc only).
public final class DwarfUnwinder {
    private let handle: OpaquePointer
    /// Keeps the memory alive as long as the unwinder reads it.
    private let space: CapturedAddressSpace

    /// An unwinder for the ELF machine `elfMachine`, clearing `codeMask` (ARM64 PAC bits) from the pc,
    /// the link register and every word it reads.
    public init(space: CapturedAddressSpace, elfMachine: UInt16, codeMask: UInt64) throws(SystemError) {
        guard let handle = cw_dwfl_unwinder_create(space.handle, elfMachine, codeMask) else {
            throw SystemError("libdw unwinder", errno: lastErrno())
        }
        self.handle = handle
        self.space = space
    }

    deinit { cw_dwfl_unwinder_destroy(handle) }

    /// Reports the ELF file open at `fd` as image `name` loaded at `loadAddress`; libdw's reason when it cannot use it.
    public func report(name: String, fd: Int32, loadAddress: UInt64) -> String? {
        cw_dwfl_unwinder_report(handle, name, fd, loadAddress) == 0 ? nil : String(cString: cw_dwfl_unwinder_error(handle))
    }

    /// Unwinds one thread from its registers (NT_PRSTATUS words), at most `maxFrames` frames.
    public func unwind(registers: [UInt64], maxFrames: Int) -> (frames: [UnwoundFrame], stop: UnwindStop) {
        unwindThrough(registers, maxFrames: maxFrames, message: { _ in String(cString: cw_dwfl_unwinder_error(handle)) }) {
            cw_dwfl_unwind(handle, $0, $1, $2, $3, $4)
        }
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
    /// The linkage (mangled) name, else the DWARF name qualified by its declaration's namespaces and
    /// classes (`std::vector<int>::push_back`).
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

/// Function names, source lines and inline chains for addresses, through libdw, over images reported
/// as open files or by build-id alone. Separate debug files are searched by build-id under trusted
/// directories and by `.gnu_debuglink` (opened without blocking or following links in directories the
/// crashed process may control); debuginfod only when asked for.
public final class Symbolizer {
    private let handle: OpaquePointer
    /// Answers already given: threads of one process share most of their return addresses.
    private var cache: [UInt64: SymbolLookup?] = [:]
    private var reportingEnded = false

    /// Starts a session; `debugDirectories` are searched before /usr/lib/debug, `useDebuginfod` allows
    /// the servers in `DEBUGINFOD_URLS`.
    public init(debugDirectories: [String], useDebuginfod: Bool) throws(SystemError) {
        guard let handle = cw_symbolizer_create(debugDirectories.joined(separator: ":"), useDebuginfod ? 1 : 0) else {
            throw SystemError("dwfl_begin", errno: lastErrno())
        }
        self.handle = handle
    }

    deinit { cw_symbolizer_destroy(handle) }

    /// Reports the ELF file open at `fd` as image `name` (its path, which also anchors the debuglink
    /// search) loaded at `loadAddress`; libdw's reason when it cannot use it.
    public func report(name: String, fd: Int32, loadAddress: UInt64) -> String? {
        cw_symbolizer_report_fd(handle, name, fd, loadAddress) == 0 ? nil : String(cString: cw_symbolizer_last_error())
    }

    /// Reports an image known only by its range and build-id; libdw's reason when it cannot.
    public func report(name: String, start: UInt64, end: UInt64, buildID: [UInt8]) -> String? {
        let result = buildID.withUnsafeBufferPointer {
            cw_symbolizer_report_build_id(handle, name, start, end, $0.baseAddress, $0.count)
        }
        return result == 0 ? nil : String(cString: cw_symbolizer_last_error())
    }

    /// Uses the directory open at `fd` as the inflated debug-file cache (see `cw_symbolizer_set_cache`).
    public static func useDebugCache(_ fd: Int32) { cw_symbolizer_set_cache(fd) }

    /// Inflates the compressed debug files this process used into the cache, in a process of its own that
    /// outlives this one; returns at once.
    public static func fillDebugCache() { _ = cw_symbolizer_fill_cache() }

    /// Ends reporting; lookups work afterwards (the first lookup ends it implicitly).
    public func endReporting() {
        guard !reportingEnded else { return }
        reportingEnded = true
        cw_symbolizer_end_reporting(handle)
    }

    /// Reports more images after lookups (`report`), before the next lookup ends reporting again.
    public func beginAdding() {
        guard reportingEnded else { return }
        reportingEnded = false
        cw_symbolizer_begin_adding(handle)
    }

    /// Looks `address` up, with its inline chain and source lines when `withSource`; nil when no module contains it.
    public func lookup(_ address: UInt64, withSource: Bool = true) -> SymbolLookup? {
        endReporting()
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
                    SourceLevel(name: level.name.map { cappedString($0) }, file: level.file.map { cappedString($0) },
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
            found = SymbolLookup(module: raw.module_name.map { cappedString($0) }, symbol: raw.name.map { cappedString($0) },
                                 offset: raw.offset, source: raw.name == nil ? nil : source, levels: levels)
        }
        cache[address] = found
        return found
    }
}

/// The longest name or path a report keeps (bytes of UTF-8); longer ones end in `…[truncated]`.
public let maximumNameBytes = 4096

/// Marks a string cut at `maximumNameBytes`.
public let truncationMark = "…[truncated]"

/// A C string from a hostile file, cut to `maximumNameBytes` (at a character boundary) with a mark.
func cappedString(_ pointer: UnsafePointer<CChar>) -> String {
    let length = strnlen(pointer, maximumNameBytes + 1)
    let bytes = UnsafeRawBufferPointer(start: pointer, count: length).bindMemory(to: UInt8.self)
    return capped(String(decoding: bytes, as: UTF8.self))
}

/// `text` cut to `maximumNameBytes` of UTF-8 at a character boundary, with `truncationMark`; unchanged when short enough.
public func capped(_ text: String) -> String {
    guard text.utf8.count > maximumNameBytes else { return text }
    var result = ""
    for character in text {
        if result.utf8.count + character.utf8.count > maximumNameBytes - truncationMark.utf8.count { break }
        result.append(character)
    }
    return result + truncationMark
}

/// What demangling a symbol name gave.
public enum Demangling: Equatable, Sendable {
    /// The demangled name, capped at `maximumNameBytes`.
    case name(String)
    /// Not a mangled name, or not a valid one.
    case notMangled
    /// A Swift name left mangled: why (its demangling passed the CPU-time budget, or could not be tried).
    case gaveUp(String)
}

/// Demangles a Rust (v0 `_R…`, or legacy `_ZN…17h<hash>E` without its hash, as `nm --demangle=rust`
/// prints them), C++ (`_Z…`) or Swift (`$s…`) symbol name. Rust and C++ names are demangled by libiberty,
/// whose work stops once the text passes the cap (a v0 symbol of a few hundred bytes can expand to
/// gigabytes); Swift names by the Swift runtime, which cannot be stopped, on a thread given up past 100 ms
/// of CPU time (a Swift symbol whose substitutions nest expands to 65 MiB in over a second).
public func demangling(_ name: String) -> Demangling {
    var whyNot: Int32 = 0
    guard let pointer = cw_demangle(name, &whyNot) else {
        switch Int(whyNot) {
        case Int(CW_DEMANGLE_GAVE_UP): return .gaveUp("its demangling passed 100 ms of CPU time")
        case Int(CW_DEMANGLE_GAVE_UP_BEFORE): return .gaveUp("not tried: Swift names given up before took every demangling thread")
        case Int(CW_DEMANGLE_NO_THREAD): return .gaveUp("not tried: no thread to demangle it on")
        default: return .notMangled
        }
    }
    defer { free(pointer) }
    return .name(cappedString(pointer))
}

/// A symbolizer put to work on a helper thread while its owner does something else (the worker unwinds):
/// images reported and addresses looked up, which loads what the lookups after it need — symbol tables,
/// address ranges, compilation units, line tables — most of a lookup's cost. Only the helper touches the
/// symbolizer until `finish` hands it back.
public final class SymbolizerWarmup: @unchecked Sendable {
    public struct Image: Sendable {
        public let start: UInt64
        public let name: String
        public let fd: Int32
        public let loadAddress: UInt64

        /// An ELF file open at `fd` (kept open by the caller until `finish`), mapped at `start`, loaded at `loadAddress`.
        public init(start: UInt64, name: String, fd: Int32, loadAddress: UInt64) {
            self.start = start
            self.name = name
            self.fd = fd
            self.loadAddress = loadAddress
        }
    }

    private let symbolizer: Symbolizer
    private let stopping = Atomic<Bool>(false)
    /// Written by the helper before its task ends; read after waiting for it.
    private var reported: [UInt64: String?] = [:]
    private let helper: HelperThread
    private var task: HelperTask?

    /// Starts reporting `images` to `symbolizer` and looking `addresses` up on `helper`, in order.
    public init(_ symbolizer: Symbolizer, images: [Image], addresses: [UInt64], withSource: Bool, on helper: HelperThread) {
        self.symbolizer = symbolizer
        self.helper = helper
        task = helper.submit { [self] in
            let symbolizer = self.symbolizer
            for image in images {
                reported[image.start] = symbolizer.report(name: image.name, fd: image.fd, loadAddress: image.loadAddress)
            }
            symbolizer.endReporting()
            for address in addresses {
                if stopping.load(ordering: .relaxed) { break }
                _ = symbolizer.lookup(address, withSource: withSource)
            }
        }
    }

    /// Stops after the lookup in progress and hands the symbolizer back, with the images reported (by start:
    /// libdw's reason when one could not be used), its session ended. Nothing is reported when the helper had
    /// not started.
    public func finish() -> (symbolizer: Symbolizer, reported: [UInt64: String?]) {
        stopping.store(true, ordering: .relaxed)
        if let task, !helper.withdraw(task) { task.wait() }
        task = nil
        return (symbolizer, reported)
    }
}
