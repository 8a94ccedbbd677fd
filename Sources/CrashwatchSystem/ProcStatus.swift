// ProcStatus.swift — `/proc/PID/status`: the fields crashwatch uses, parsed from the file's bytes by a byte
// scanner (the supervisor reads it at every crash signal a program handles).
import CrashwatchModel
import Glibc

/// The fields of `/proc/PID/status` crashwatch uses, parsed from its text.
public struct ProcStatus: Equatable, Sendable {
    public var name: String?
    public var tgid: Int32?
    public var pid: Int32?
    public var ppid: Int32?
    /// The pid of the process tracing it (0: none).
    public var tracerPID: Int32?
    /// Signals pending for this thread alone (`SigPnd`), bit `n-1` for signal n.
    public var pending: UInt64 = 0
    /// Signals pending for the whole process (`ShdPnd`).
    public var sharedPending: UInt64 = 0
    /// Signals blocked by this thread (`SigBlk`), bit `n-1` for signal n.
    public var blocked: UInt64 = 0
    /// Signals the process ignores (`SigIgn`).
    public var ignored: UInt64 = 0
    /// Signals the process has handlers for (`SigCgt`).
    public var caught: UInt64 = 0
    /// `Seccomp`: 0 off, 1 strict, 2 filter.
    public var seccompMode: Int?
    /// `Uid` real, effective, saved, filesystem.
    public var uids: [UInt32] = []
    /// `Gid` real, effective, saved, filesystem.
    public var gids: [UInt32] = []
    /// `Groups`: the supplementary groups.
    public var groups: [UInt32] = []
    /// `CapPrm`: the permitted capabilities.
    public var permittedCapabilities: UInt64 = 0
    /// `State`: its letter (`R`, `S`, `D`, `T`, `t`, `Z`, `X`, …).
    public var state: Character?

    /// Whether the thread has exited and waits to be reaped (a thread-group leader whose other threads
    /// still run stays a zombie until they end): it can neither stop nor be read through.
    public var isDead: Bool { state == "Z" || state == "X" }

    /// Parses the `Key:\tvalue` lines; unknown and malformed lines are skipped.
    public init(parsing text: String) {
        self.init(parsing: Array(text.utf8))
    }

    /// Parses the status file's bytes. A byte scanner, not String splitting: the supervisor reads this
    /// file at every crash signal a program handles, and a JVM may handle tens of thousands of them.
    public init(parsing bytes: [UInt8]) {
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            var colon = lineStart
            while colon < lineEnd && bytes[colon] != UInt8(ascii: ":") { colon += 1 }
            if colon < lineEnd {
                var valueStart = colon + 1
                while valueStart < lineEnd && (bytes[valueStart] == 9 || bytes[valueStart] == 32) { valueStart += 1 }
                apply(key: bytes[lineStart..<colon], value: bytes[valueStart..<lineEnd])
            }
            lineStart = lineEnd + 1
        }
    }

    private mutating func apply(key: ArraySlice<UInt8>, value: ArraySlice<UInt8>) {
        switch key.count {
        case 3 where key.elementsEqual("Pid".utf8): pid = Self.decimal(value).map(Int32.init)
        case 3 where key.elementsEqual("Uid".utf8): uids = Self.decimals(value)
        case 3 where key.elementsEqual("Gid".utf8): gids = Self.decimals(value)
        case 4 where key.elementsEqual("Name".utf8): name = String(decoding: value, as: UTF8.self)
        case 4 where key.elementsEqual("Tgid".utf8): tgid = Self.decimal(value).map(Int32.init)
        case 5 where key.elementsEqual("State".utf8): state = value.first.map { Character(Unicode.Scalar($0)) }
        case 4 where key.elementsEqual("PPid".utf8): ppid = Self.decimal(value).map(Int32.init)
        case 9 where key.elementsEqual("TracerPid".utf8): tracerPID = Self.decimal(value).map(Int32.init)
        case 6 where key.elementsEqual("SigPnd".utf8): pending = Self.hexadecimal(value)
        case 6 where key.elementsEqual("ShdPnd".utf8): sharedPending = Self.hexadecimal(value)
        case 6 where key.elementsEqual("SigBlk".utf8): blocked = Self.hexadecimal(value)
        case 6 where key.elementsEqual("SigIgn".utf8): ignored = Self.hexadecimal(value)
        case 6 where key.elementsEqual("SigCgt".utf8): caught = Self.hexadecimal(value)
        case 6 where key.elementsEqual("Groups".utf8): groups = Self.decimals(value)
        case 6 where key.elementsEqual("CapPrm".utf8): permittedCapabilities = Self.hexadecimal(value)
        case 7 where key.elementsEqual("Seccomp".utf8): seccompMode = Self.decimal(value).map(Int.init)
        default: break
        }
    }

    private static func decimal(_ digits: ArraySlice<UInt8>) -> UInt32? {
        decimalNumber(digits, maxDigits: 10).flatMap { UInt32(exactly: $0) }
    }

    private static func decimals(_ text: ArraySlice<UInt8>) -> [UInt32] {
        text.split(whereSeparator: { $0 == 9 || $0 == 32 }).compactMap { decimal($0) }
    }

    private static func hexadecimal(_ digits: ArraySlice<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for byte in digits.prefix(16) {
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 97...102: digit = byte - 87
            case 65...70: digit = byte - 55
            default: return value
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// How the process disposes of signal `number`: handled, ignored, or the default action.
    public func disposition(of number: Int32) -> SignalDisposition {
        SignalDispositions(caught: caught, ignored: ignored).disposition(of: number)
    }
}
