// ProcFS.swift — reading /proc: small files read whole (threads, names, command lines), and whether a process
// exists (`ProcessProbe`, for claim holders). The parsers of what is read take text or bytes, not paths.
import CCrashwatch
import CrashwatchModel
import Glibc

/// Reads small files under /proc (and elsewhere) whole, with one open and a read loop.
public enum ProcFS {
    /// Reads a whole file as bytes; throws a `SystemError` naming the path.
    public static func readBytes(_ path: String, limit: Int = 1 << 24) throws(SystemError) -> [UInt8] {
        let fd = retryingOnEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw SystemError("open \(path)", errno: lastErrno()) }
        defer { close(fd) }
        // Through one chunk buffer: a /proc file comes a page or a record at a time, and only what came is
        // copied (a mount table of megabytes must not cost more than its bytes).
        var bytes: [UInt8] = []
        guard limit > 0 else { return bytes }
        var chunk = [UInt8](repeating: 0, count: min(limit, 1 << 16))
        while bytes.count < limit {
            let room = min(chunk.count, limit - bytes.count)
            var savedErrno: Int32 = 0
            let count = chunk.withUnsafeMutableBytes { buffer in
                let result = retryingOnEINTR { read(fd, buffer.baseAddress!, room) }
                if result < 0 { savedErrno = lastErrno() }
                return result
            }
            if count < 0 { throw SystemError("read \(path)", errno: savedErrno) }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }

    /// Reads a whole text file; invalid UTF-8 is repaired.
    public static func readText(_ path: String) throws(SystemError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// Whether a process (or zombie) with this pid exists: `ProcessProbe.exists`, the one probe.
    public static func exists(_ pid: Int32) -> Bool { ProcessProbe.exists(pid) }

    /// How long task `pid` has waited on a run queue, runnable but not running, in nanoseconds: the second
    /// field of `/proc/PID/schedstat`. nil when it cannot be read.
    public static func runQueueWaitNanoseconds(_ pid: Int32) -> Int64? {
        guard let bytes = try? readBytes("/proc/\(pid)/schedstat") else { return nil }
        let fields = bytes.split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard fields.count >= 2, let value = decimalNumber(fields[1], maxDigits: 18) else { return nil }
        return Int64(value)
    }

    /// The `status` of one thread: `/proc/TID/status` (works for any thread id).
    public static func threadStatus(_ tid: Int32) throws(SystemError) -> ProcStatus {
        ProcStatus(parsing: try readBytes("/proc/\(tid)/status"))
    }

    /// Reads the names of one process's threads through one open `/proc/PID/task` directory: one openat,
    /// read and close per thread, no path walk (the capture reads every thread's name while it holds them).
    public final class ThreadNames {
        private let directory: Int32

        public init(pid: Int32) { directory = open("/proc/\(pid)/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }

        deinit { if directory >= 0 { close(directory) } }

        public func name(of tid: Int32) -> String? {
            guard var bytes = read(tid, "comm", limit: 64) else { return nil }
            if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// The start of file `TID/FILE` of the directory (at most `limit` bytes); nil when unreadable or empty.
        func read(_ tid: Int32, _ file: String, limit: Int) -> [UInt8]? {
            guard directory >= 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: limit)
            let count = buffer.withUnsafeMutableBytes { cw_read_small_at(directory, "\(tid)/\(file)", $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            return Array(buffer[..<Int(count)])
        }
    }

    /// The system call a stopped thread is in, from `/proc/TID/syscall` read through `names`' open task
    /// directory: its number, -1 when it is in none (it was running its own code), nil when unreadable or the
    /// thread is running (the file says so; only a stopped thread's answer holds still).
    public static func syscall(of tid: Int32, in names: ThreadNames) -> Int? {
        guard let bytes = names.read(tid, "syscall", limit: 256) else { return nil }
        return syscallNumber(bytes)
    }

    /// The first field of a `/proc/TID/syscall` line as a number (-1: no system call); nil for `running`
    /// or anything else.
    public static func syscallNumber(_ bytes: some Collection<UInt8>) -> Int? {
        let field = bytes.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
        if field.elementsEqual("-1".utf8) { return -1 }
        return decimalNumber(field, maxDigits: 6).map { Int($0) }
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
            if let tid = decimalNumber(name, maxDigits: 10).flatMap({ Int32(exactly: $0) }) { tids.append(tid) }
        }
        return tids.sorted()
    }

    /// The processes whose parent is `pid` (any of its threads: `/proc/PID/task/TID/children`), at most 4,096.
    public static func children(of pid: Int32) -> [Int32] {
        var children: [Int32] = []
        for tid in threadIDs(of: pid) {
            guard let text = try? readText("/proc/\(pid)/task/\(tid)/children") else { continue }
            children += text.split(separator: " ").compactMap { decimalNumber($0, maxDigits: 10).flatMap { Int32(exactly: $0) } }
            if children.count >= 4096 { break }
        }
        return Array(Set(children).sorted().prefix(4096))
    }

    /// A process's command line as argv; empty for kernel threads and zombies.
    public static func commandLine(_ pid: Int32) -> [String] {
        commandLineBytes(pid).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A process's command line as the exact bytes of each argument; empty for kernel threads and zombies.
    public static func commandLineBytes(_ pid: Int32) -> [[UInt8]] {
        guard let bytes = try? readBytes("/proc/\(pid)/cmdline") else { return [] }
        return splitNulTerminatedBytes(bytes)
    }

    /// Splits NUL-separated strings (cmdline, environ), dropping the empty tail.
    public static func splitNulTerminated(_ bytes: [UInt8]) -> [String] {
        splitNulTerminatedBytes(bytes).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Splits NUL-separated byte strings, dropping the empty tail.
    static func splitNulTerminatedBytes(_ bytes: [UInt8]) -> [[UInt8]] {
        var parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
        if parts.last?.isEmpty == true { parts.removeLast() }
        return parts
    }
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

/// Whether a process exists, for deciding if the holder of a spool claim is still alive.
public enum ProcessProbe {
    /// The calling process's id (`getpid`).
    public static var currentID: Int32 { getpid() }

    /// Whether a process with id `pid` exists in this pid namespace (`kill(pid, 0)`: success or EPERM).
    ///
    /// A zombie still exists here; ids ≤ 0 (process groups, "every process") never do.
    public static func exists(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        if kill(pid, 0) == 0 { return true }
        return lastErrno() == EPERM
    }
}
