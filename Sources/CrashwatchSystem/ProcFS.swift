// ProcFS.swift — reading /proc: small files read whole, and parsers that take text, not paths.
import CCrashwatch
import Glibc
import Synchronization

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

    /// Whether a process (or zombie) with this pid exists.
    public static func exists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || lastErrno() != ESRCH
    }

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
            guard directory >= 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { cw_read_small_at(directory, "\(tid)/comm", $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            var end = Int(count)
            if buffer[end - 1] == UInt8(ascii: "\n") { end -= 1 }
            return String(decoding: buffer[..<end], as: UTF8.self)
        }
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

/// Which signals a process catches and ignores: bit `n - 1` stands for signal `n`.
public struct SignalDispositions: Equatable, Sendable {
    public var caught: UInt64
    public var ignored: UInt64

    public init(caught: UInt64, ignored: UInt64) {
        self.caught = caught
        self.ignored = ignored
    }

    /// From a `stat` line (`/proc/TID/task/TID/stat`): fields 33 (`sigignore`) and 34 (`sigcatch`), decimal, after the `(comm)` that
    /// may itself hold spaces and parentheses; nil when the text is not a stat line. The kernel shows signals
    /// 1 to 31 only there (it masks the real-time ones): enough for every crash signal.
    public init?(statLine bytes: ArraySlice<UInt8>) {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After "(comm)" the first field is 3 (state): field N is the (N - 3)th.
        var field = 2, value: UInt64 = 0, digits = 0
        var ignored: UInt64?, caught: UInt64?
        for byte in bytes[(close + 1)...] {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                if digits > 0 {
                    if field == 33 { ignored = value } else if field == 34 { caught = value; break }
                }
                if byte == UInt8(ascii: " ") { field += 1 }
                value = 0
                digits = 0
            } else if byte >= 48 && byte <= 57, digits < 20 {
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                if overflow { return nil }
                value = product &+ UInt64(byte - 48)
                digits += 1
            } else {
                digits = 0
            }
        }
        guard let ignored, let caught else { return nil }
        self.init(caught: caught, ignored: ignored)
    }

    /// How signal `number` is disposed of: handled, ignored, or the default action.
    public func disposition(of number: Int32) -> SignalDisposition {
        guard number >= 1 && number <= 64 else { return .default }
        let bit = UInt64(1) << UInt64(number - 1)
        if caught & bit != 0 { return .handled }
        if ignored & bit != 0 { return .ignored }
        return .default
    }
}

/// Reads threads' signal dispositions on the supervisor's hot path (every crash signal a program handles:
/// a JVM takes tens of thousands): from the thread's own `/proc/TID/task/TID/stat` — not `status` (three times
/// the kernel's work), nor `/proc/TID/stat`, which sums the times and faults of every thread of the process
/// (4.8 against 3.6–3.8 µs a read for a thread of a 65-thread process) — each thread's file kept open and read
/// with one pread. Forget a thread when it exits. Signals 1 to 31 only (see `SignalDispositions(statLine:)`).
public final class DispositionReader {
    private var files: [Int32: Int32] = [:]
    private var buffer = [UInt8](repeating: 0, count: 2048)

    public init() {}

    deinit { for fd in files.values { close(fd) } }

    /// Thread `tid`'s dispositions; nil when it is gone.
    public func dispositions(of tid: Int32) -> SignalDispositions? {
        for attempt in 0..<2 {
            let fd: Int32
            if let open = files[tid] {
                fd = open
            } else {
                fd = retryingOnEINTR { Glibc.open("/proc/\(tid)/task/\(tid)/stat", O_RDONLY | O_CLOEXEC) }
                guard fd >= 0 else { return nil }
                files[tid] = fd
            }
            let count = buffer.withUnsafeMutableBytes { raw in retryingOnEINTR { pread(fd, raw.baseAddress, raw.count, 0) } }
            if count > 0 { return SignalDispositions(statLine: buffer[..<count]) }
            // The task behind a kept file ended (its tid may be another thread's now): open it afresh once.
            forget(tid)
            if attempt == 1 { return nil }
        }
        return nil
    }

    /// Closes thread `tid`'s file (it exited).
    public func forget(_ tid: Int32) {
        if let fd = files.removeValue(forKey: tid) { close(fd) }
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

    /// Writes `text` to `fd`, waiting as long as that takes.
    public static func write(_ fd: Int32, _ text: String) { writeAll(fd, text) }

    private static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { buffer in retryingOnEINTR { Glibc.write(fd, buffer.baseAddress, buffer.count) } }
            if written <= 0 { return }  // a closed stream: nothing sensible left to do
            bytes = bytes.dropFirst(written)
        }
    }
}

/// Lines for a standard stream that the writer never waits on: a stream shared with the supervised program
/// (a pipe it filled and nobody reads, a stopped terminal, a journald stream that stalls) can block a write
/// for as long as it likes, and the tracer thread must not wait on it while it holds a crashed process or
/// while other processes wait for it. Once `start()`ed, lines are written in order by a `HelperThread` of
/// their own (at most `capacity` bytes waiting: past that they are dropped and counted); before, each is
/// written at once, as `StandardStream` does.
public final class LineOutput: Sendable {
    private struct Pending {
        var bytes = 0
        var dropped = 0
        var last: HelperTask?
    }

    private let fd: Int32
    private let capacity: Int
    private let thread = Mutex<HelperThread?>(nil)
    private let pending = Mutex(Pending())

    public init(fd: Int32, capacity: Int = 1 << 20) {
        self.fd = fd
        self.capacity = capacity
    }

    /// Starts the writing thread; false when none could be started (lines are then written at once).
    /// A thread started before the supervised command would change what it inherits: call it after.
    @discardableResult
    public func start() -> Bool {
        guard let started = HelperThread.start() else { return false }
        thread.withLock { $0 = started }
        return true
    }

    /// Writes `text` (whole lines), or hands it to the thread; never waits once started.
    public func write(_ text: String) {
        guard let thread = thread.withLock({ $0 }) else { return StandardStream.write(fd, text) }
        let count = text.utf8.count
        let accepted = pending.withLock { pending -> Bool in
            guard pending.bytes + count <= capacity else {
                pending.dropped += 1
                return false
            }
            pending.bytes += count
            return true
        }
        if accepted { hand(text, bytes: count, to: thread) }
    }

    /// Waits until every line handed over is written (and a count of the dropped ones), or the monotonic
    /// clock reaches `deadline` (nanoseconds); whether they all were.
    @discardableResult
    public func flush(until deadline: Int64) -> Bool {
        if let thread = thread.withLock({ $0 }), pending.withLock({ $0.dropped }) > 0 { hand(nil, bytes: 0, to: thread) }
        guard let last = pending.withLock({ $0.last }) else { return true }
        return last.wait(until: deadline)
    }

    /// Queues `text` (nil: only the count of lines dropped before it) on `thread`.
    private func hand(_ text: String?, bytes: Int, to thread: HelperThread) {
        let work: @Sendable () -> Void = { [self] in
            let dropped = pending.withLock { pending in
                defer { pending.dropped = 0 }
                return pending.dropped
            }
            if dropped > 0 {
                StandardStream.write(fd, "crashwatch: \(dropped) line(s) to this stream were dropped: it was not being read\n")
            }
            if let text { StandardStream.write(fd, text) }
            pending.withLock { $0.bytes -= bytes }
        }
        // Submitted under the lock, so that `last` is the last line of all, whichever thread hands one over.
        pending.withLock { $0.last = thread.submit(work) }
    }
}

/// The terminal a standard stream may be.
public enum Terminal {
    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// The terminal's width in columns, nil when `fd` is not a terminal or it does not say.
    public static func columns(_ fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

/// What of a process's memory crashwatch must never read: pages of files on FUSE file systems. Their server —
/// perhaps the crashed program's own helper, in a mount namespace of its own — can leave a read of them
/// (`/proc/PID/mem`, `/proc/PID/cmdline`, `/proc/PID/environ`) waiting for ever, in an uninterruptible
/// sleep no signal ends, and every process crashwatch traces would wait with its tracer thread.
public struct UnreadableFiles: Sendable, Equatable {
    /// The devices (`major << 32 | minor`) of the FUSE file systems the process sees.
    public let devices: Set<UInt64>
    /// Whether the mount table was read whole. When it was not (a process can make a namespace of 100,000
    /// mounts and put its FUSE mount last), a file on a device the part read does not list is not read either.
    public let complete: Bool
    /// Every device the part read lists (kept only when it is not `complete`).
    public let listed: Set<UInt64>

    public init(devices: Set<UInt64>) {
        self.devices = devices
        complete = true
        listed = []
    }

    /// The most of a mount table read (about 30,000 mounts).
    public static let mountTableLimit = 4 << 20

    /// The FUSE file systems in process `pid`'s mount namespace (`/proc/PID/mountinfo`: its field 3 is the
    /// device, the first after " - " the file system type: `fuse`, `fuse.NAME` or `fuseblk`).
    public init(pid: Int32) {
        let bytes = (try? ProcFS.readBytes("/proc/\(pid)/mountinfo", limit: Self.mountTableLimit + 1)) ?? []
        guard bytes.count > Self.mountTableLimit else {
            self.init(mountinfo: bytes[...])
            return
        }
        // Cut: only whole lines count.
        let whole = bytes[..<Self.mountTableLimit].lastIndex(of: UInt8(ascii: "\n")).map { bytes[...$0] } ?? []
        self.init(mountinfo: whole, complete: false)
    }

    /// The FUSE file systems of a `mountinfo` text (paths in it escape blanks as `\040`: " - " is the separator);
    /// `complete`: whether the text is the whole table.
    public init(mountinfo text: String, complete: Bool = true) {
        self.init(mountinfo: Array(text.utf8)[...], complete: complete)
    }

    /// The same from the table's bytes, read as bytes: a hostile table holds megabytes.
    public init(mountinfo bytes: ArraySlice<UInt8>, complete: Bool = true) {
        var devices = Set<UInt64>(), listed = Set<UInt64>()
        let space = UInt8(ascii: " "), colon = UInt8(ascii: ":")
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: space)
            guard fields.count > 4, let separator = fields.firstIndex(where: { $0.elementsEqual([UInt8(ascii: "-")]) }),
                  separator + 1 < fields.count else { continue }
            let numbers = fields[2].split(separator: colon)
            guard numbers.count == 2, let major = Self.decimal(numbers[0]), let minor = Self.decimal(numbers[1]) else { continue }
            let device = major << 32 | minor
            if !complete { listed.insert(device) }
            let type = fields[separator + 1]
            if type.elementsEqual("fuse".utf8) || type.elementsEqual("fuseblk".utf8) || type.starts(with: "fuse.".utf8) {
                devices.insert(device)
            }
        }
        self.devices = devices
        self.complete = complete
        self.listed = listed
    }

    /// A decimal number of at most 10 digits (a device's major or minor); nil for anything else.
    private static func decimal(_ digits: ArraySlice<UInt8>) -> UInt64? {
        decimalNumber(digits, maxDigits: 10)
    }

    /// Whether a mapping on `device` — as `/proc/PID/maps` prints it, hex `major:minor` — is on one of them, or,
    /// the table not read whole, on a device it does not list (an anonymous mapping, 00:00, is on none).
    public func contains(mapsDevice device: some StringProtocol) -> Bool {
        guard !devices.isEmpty || !complete else { return false }
        let numbers = device.split(separator: ":")
        guard numbers.count == 2, let major = UInt64(numbers[0], radix: 16), let minor = UInt64(numbers[1], radix: 16) else {
            return !complete
        }
        let number = major << 32 | minor
        return devices.contains(number) || (!complete && number != 0 && !listed.contains(number))
    }

    /// Whether `/proc/PID/cmdline` and `environ` of process `pid` (read through thread `through`) may be read:
    /// no part of the argument and environment areas (`/proc/PID/stat` fields 48–51) is a page of such a file.
    public func argumentsReadable(pid: Int32, through: Int32) -> Bool {
        guard !devices.isEmpty || !complete else { return true }
        guard let stat = try? ProcFS.readText("/proc/\(through)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        // After the name: field 3 onwards; arg_start is field 48.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count >= 49, let argStart = UInt64(fields[45]), let argEnd = UInt64(fields[46]),
              let envStart = UInt64(fields[47]), let envEnd = UInt64(fields[48]) else { return false }
        let ranges = [argStart..<max(argStart, argEnd), envStart..<max(envStart, envEnd)]
        guard let maps = try? ProcFS.readText("/proc/\(through)/maps") else { return false }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 4, contains(mapsDevice: fields[3]) else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16) else { continue }
            if ranges.contains(where: { $0.overlaps(start..<end) }) { return false }
        }
        return true
    }
}

/// The value of 1 to `maxDigits` ASCII decimal digits (at most 19, which cannot overflow); nil for anything else.
private func decimalNumber(_ digits: ArraySlice<UInt8>, maxDigits: Int) -> UInt64? {
    guard !digits.isEmpty, digits.count <= min(maxDigits, 19) else { return nil }
    var value: UInt64 = 0
    for digit in digits {
        guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + UInt64(digit - UInt8(ascii: "0"))
    }
    return value
}
