// ReportThreads.swift — the report's threads: each with its registers and its stack of frames, and how far a
// frame can be trusted (`FrameTrust`).
import FoundationEssentials

/// One thread of the process, with its registers and stack.
public struct ThreadRecord: Codable, Sendable, Equatable {
    /// The thread id (the kernel's tid; the main thread's equals the pid).
    public var tid: Int32
    /// The thread name (`/proc/PID/task/TID/comm`), when readable.
    public var name: String?
    /// Whether this is the thread that took the fatal signal (known from the signal-delivery-stop, not guessed).
    public var crashed: Bool
    /// What the thread was doing when crashwatch stopped it, in a report of a process stopped from outside
    /// (kinds `snapshot` and `hang`); nil in other reports, and for a thread that could not be stopped.
    public var state: ThreadState?
    /// The system call the thread was in when stopped (`state` is `syscall`), from `/proc/TID/syscall`.
    public var syscall: SyscallRecord?
    /// The general-purpose registers, in the architecture's order (`rip`, `rsp`, … or `x0`…`x30`, `sp`, `pc`, `pstate`).
    public var registers: [RegisterValue]
    /// The stack, innermost frame first; inline expansions appear as frames of their own.
    public var frames: [FrameRecord]
    /// Why unwinding stopped, when known: `end of stack`, `frame limit reached`, `stack pointer did not advance`,
    /// `unwinding failed: …`, `stack capture limit (N bytes) reached`, `registers unreadable`,
    /// `processing deadline passed`, `not unwound: minimal report`, `frames dropped: report size limit`… (text).
    public var unwindStopReason: String?

    /// Creates a thread record.
    public init(tid: Int32, name: String?, crashed: Bool, registers: [RegisterValue], frames: [FrameRecord],
                unwindStopReason: String? = nil) {
        self.tid = tid
        self.name = name
        self.crashed = crashed
        self.state = nil
        self.syscall = nil
        self.registers = registers
        self.frames = frames
        self.unwindStopReason = unwindStopReason
    }
}

/// What a thread was doing when it was stopped from outside; an open set of strings so later additions still decode.
public struct ThreadState: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The JSON value.
    public var rawValue: String
    /// Wraps a JSON value; unknown values are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Running its own code (in user space, or runnable): stopped between two instructions.
    public static let running = ThreadState(rawValue: "running")
    /// Inside a system call (blocked in it, as a read or a futex wait usually is): `syscall` says which.
    /// Stopping it interrupted the call, which is restarted or returns EINTR (README "Looking at a live process").
    public static let syscall = ThreadState(rawValue: "syscall")
    /// Stopped by job control (SIGSTOP, SIGTSTP …) before crashwatch came: it stays stopped.
    public static let stopped = ThreadState(rawValue: "stopped")

    /// The JSON value, for messages.
    public var description: String { rawValue }
}

/// A system call a thread was in: its number for the process's architecture and, when known, its name.
public struct SyscallRecord: Codable, Sendable, Equatable {
    /// The system call number (the architecture's own numbering: x86-64 and aarch64 differ).
    public var number: Int
    /// The call's name (`futex`, `read`…), when crashwatch's table for the architecture has it.
    public var name: String?

    /// Pairs a number with its name.
    public init(number: Int, name: String?) {
        self.number = number
        self.name = name
    }
}

/// One register of a thread: its architectural name and value.
public struct RegisterValue: Codable, Sendable, Equatable {
    /// The register's name as the architecture manuals spell it, lower case (`rip`, `x29`).
    public var name: String
    /// The register's value.
    public var value: Address

    /// Pairs a register name with its value.
    public init(_ name: String, _ value: Address) {
        self.name = name
        self.value = value
    }
}

/// One frame of a stack.
public struct FrameRecord: Codable, Sendable, Equatable {
    /// The frame's position in its stack, 0 for the innermost.
    public var index: Int
    /// The instruction address: the pc for frame 0, the return address for callers (PAC bits stripped).
    public var address: Address
    /// The index in `CrashReport.images` of the image containing `address`, nil when none does.
    public var imageIndex: Int?
    /// `address` as an offset into the image file (relative to its load address, as `addr2line` wants it).
    public var imageOffset: Address?
    /// The symbol as found in the binary (mangled), when symbolized.
    public var symbol: String?
    /// The function name, demangled (C++ and Swift), or the raw symbol when it is not mangled.
    public var function: String?
    /// `address` minus the start of the symbol, when symbolized.
    public var symbolOffset: Address?
    /// Which table the symbol came from: `symtab`, `dynsym` or `debuginfo` (a separate debug file, or DWARF).
    public var symbolSource: String?
    /// The source file, from DWARF line info.
    public var file: String?
    /// The source line, from DWARF line info.
    public var line: Int?
    /// The source column, from DWARF line info (0 and unknown are both nil).
    public var column: Int?
    /// Whether this frame is an inline expansion inside the next (outer) frame at the same address.
    public var inlined: Bool
    /// How the unwinder found this frame.
    public var how: FrameTrust

    /// Creates a frame; everything but the address and how it was found may be unknown.
    public init(index: Int, address: Address, imageIndex: Int? = nil, imageOffset: Address? = nil, symbol: String? = nil,
                function: String? = nil, symbolOffset: Address? = nil, symbolSource: String? = nil, file: String? = nil,
                line: Int? = nil, column: Int? = nil, inlined: Bool = false, how: FrameTrust) {
        self.index = index
        self.address = address
        self.imageIndex = imageIndex
        self.imageOffset = imageOffset
        self.symbol = symbol
        self.function = function
        self.symbolOffset = symbolOffset
        self.symbolSource = symbolSource
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
        self.how = how
    }
}

/// How a frame was found, most to least trustworthy; an open set of strings so later additions still decode.
public struct FrameTrust: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The JSON value.
    public var rawValue: String
    /// Wraps a JSON value; unknown values are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Taken from the thread's registers (frame 0).
    public static let context = FrameTrust(rawValue: "context")
    /// Unwound with call-frame information (`.eh_frame` / `.debug_frame`).
    public static let cfi = FrameTrust(rawValue: "cfi")
    /// Found through the caller's `.debug_frame` unwind table (Go; code built without `.eh_frame`).
    public static let debugFrame = FrameTrust(rawValue: "debugFrame")
    /// Unwound by following the frame-pointer chain.
    public static let framePointer = FrameTrust(rawValue: "framePointer")
    /// Found by scanning the stack for plausible return addresses.
    public static let scan = FrameTrust(rawValue: "scan")
    /// The return address at `[sp]` when the pc was outside every mapping (a call through a bad function pointer).
    public static let returnAddressAtSP = FrameTrust(rawValue: "returnAddressAtSP")
    /// An inline expansion found by the symbolizer at the same address as the next frame.
    public static let inline = FrameTrust(rawValue: "inline")
    /// Every value crashwatch writes in schema version 1, in the order above.
    public static let allKnown: [FrameTrust] = [.context, .cfi, .debugFrame, .framePointer, .scan, .returnAddressAtSP, .inline]

    /// The JSON value, for messages.
    public var description: String { rawValue }
}
