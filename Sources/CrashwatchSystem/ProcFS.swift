// ProcFS.swift — reading /proc: small files read whole, and parsers that take text, not paths.
import Glibc

/// Reads small files under /proc (and elsewhere) whole, with one open and a read loop.
public enum ProcFS {
    /// Reads a whole file as bytes; throws a `SystemError` naming the path.
    public static func readBytes(_ path: String, limit: Int = 1 << 24) throws(SystemError) -> [UInt8] {
        let fd = retryingOnEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw SystemError("open \(path)", errno: lastErrno()) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { buffer in retryingOnEINTR { read(fd, buffer.baseAddress, buffer.count) } }
            if count < 0 { throw SystemError("read \(path)", errno: lastErrno()) }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }

    /// Reads a whole text file; invalid UTF-8 is repaired.
    public static func readText(_ path: String) throws(SystemError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// The `status` of one thread: `/proc/TID/status` (works for any thread id).
    public static func threadStatus(_ tid: Int32) throws(SystemError) -> ProcStatus {
        ProcStatus(parsing: try readText("/proc/\(tid)/status"))
    }

    /// A thread's name (`comm`), without the trailing newline; nil when the thread is gone.
    public static func threadName(pid: Int32, tid: Int32) -> String? {
        guard var name = try? readText("/proc/\(pid)/task/\(tid)/comm") else { return nil }
        if name.hasSuffix("\n") { name.removeLast() }
        return name
    }

    /// The thread ids of process `pid` (`/proc/PID/task`), ascending; empty when the process is gone.
    public static func threadIDs(of pid: Int32) -> [Int32] {
        guard let directory = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(directory) }
        var tids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if let tid = Int32(name) { tids.append(tid) }
        }
        return tids.sorted()
    }

    /// A process's command line as argv; empty for kernel threads and zombies.
    public static func commandLine(_ pid: Int32) -> [String] {
        guard let bytes = try? readBytes("/proc/\(pid)/cmdline") else { return [] }
        return splitNulTerminated(bytes)
    }

    /// Splits NUL-separated strings (cmdline, environ), dropping the empty tail.
    public static func splitNulTerminated(_ bytes: [UInt8]) -> [String] {
        var parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        if parts.last == "" { parts.removeLast() }
        return parts
    }
}

/// The fields of `/proc/PID/status` crashwatch uses, parsed from its text.
public struct ProcStatus: Equatable, Sendable {
    public var name: String?
    public var tgid: Int32?
    public var pid: Int32?
    public var ppid: Int32?
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

    /// Parses the `Key:\tvalue` lines; unknown and malformed lines are skipped.
    public init(parsing text: String) {
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon]
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            switch key {
            case "Name": name = String(value)
            case "Tgid": tgid = Int32(value)
            case "Pid": pid = Int32(value)
            case "PPid": ppid = Int32(value)
            case "SigBlk": blocked = UInt64(value, radix: 16) ?? 0
            case "SigIgn": ignored = UInt64(value, radix: 16) ?? 0
            case "SigCgt": caught = UInt64(value, radix: 16) ?? 0
            case "Seccomp": seccompMode = Int(value)
            case "Uid": uids = value.split(whereSeparator: { $0 == "\t" || $0 == " " }).compactMap { UInt32($0) }
            case "Gid": gids = value.split(whereSeparator: { $0 == "\t" || $0 == " " }).compactMap { UInt32($0) }
            default: continue
            }
        }
    }

    /// How the process disposes of signal `number`: handled, ignored, or the default action.
    public func disposition(of number: Int32) -> SignalDisposition {
        guard number >= 1 && number <= 64 else { return .default }
        let bit = UInt64(1) << UInt64(number - 1)
        if caught & bit != 0 { return .handled }
        if ignored & bit != 0 { return .ignored }
        return .default
    }
}

/// What a process does with a signal, as `/proc/PID/status` shows it.
public enum SignalDisposition: Equatable, Sendable {
    case `default`, ignored, handled
}

extension Substring {
    /// The substring without leading and trailing characters from `set`.
    func trimmingCharacters(in set: String) -> Substring {
        var result = self
        while let first = result.first, set.contains(first) { result.removeFirst() }
        while let last = result.last, set.contains(last) { result.removeLast() }
        return result
    }
}

/// The process's standard streams, written with write(2) whole (no buffering, no Foundation).
public enum StandardStream {
    /// Writes `text` to standard output.
    public static func out(_ text: String) { writeAll(1, text) }
    /// Writes `text` to standard error.
    public static func err(_ text: String) { writeAll(2, text) }

    private static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { buffer in retryingOnEINTR { write(fd, buffer.baseAddress, buffer.count) } }
            if written <= 0 { return }  // a closed stream: nothing sensible left to do
            bytes = bytes.dropFirst(written)
        }
    }
}
