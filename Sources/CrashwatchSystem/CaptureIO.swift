// CaptureIO.swift — what capture and processing need from the system besides ptrace: reading a stopped
// process's memory, files a crashed process named (opened so they can never block or redirect us),
// in-memory files for handing a capture to the worker, and the worker process itself.
import CCrashwatch
import Glibc
import Synchronization

/// An open file descriptor, closed when the value goes away.
public final class OwnedDescriptor: Sendable {
    public let fd: Int32

    public init(adopting fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// `fstat`'s device and inode, to tell whether two opens reached the same file.
    public func identity() -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// When the file was last modified, nanoseconds since the epoch.
    public func modificationNanoseconds() -> Int64? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    /// The file's size in bytes.
    public func size() -> Int64? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Reads up to `count` bytes at `offset`; fewer at the end of the file.
    public func read(at offset: UInt64, count: Int) throws(SystemError) -> [UInt8] {
        guard count > 0, offset <= UInt64(Int64.max) else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                retryingOnEINTR { pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            }
            if got < 0 { throw SystemError("pread", errno: lastErrno()) }
            if got == 0 { break }
            done += got
        }
        bytes.removeSubrange(done...)
        return bytes
    }

    /// Writes all of `bytes` at the current offset.
    public func write(_ bytes: [UInt8]) throws(SystemError) {
        var failure: SystemError?
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try write(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Writes all of `bytes` at the current offset.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        let failure = writeFully(fd, bytes)
        if failure != 0 { throw SystemError("write", errno: failure) }
    }
}

/// Files whose names come from a crashed process, a core or a report (maps paths, debuglinks, image paths):
/// type first — never opening a FIFO, device or socket (no driver's open runs, nothing blocks), never
/// through a final symbolic link.
public enum UntrustedFile {
    static let notRegularFile = "open (not a regular file) "

    /// Opens `path` read-only when it is a regular file, checked before it is opened (an `O_PATH`
    /// descriptor's `fstat`, then the same inode opened through it: `cw_open_regular_at`); `followLinks`
    /// allows a final link (for paths under trusted directories only).
    public static func open(_ path: String, followLinks: Bool = false) throws(SystemError) -> OwnedDescriptor {
        let fd = cw_open_untrusted(path, followLinks ? 1 : 0)
        guard fd >= 0 else {
            let error = lastErrno()
            throw SystemError(error == EINVAL ? UntrustedFile.notRegularFile + path : "open \(path)", errno: error)
        }
        return OwnedDescriptor(adopting: fd)
    }

    /// A whole regular file of at most `limit` bytes, opened as `open` does; EFBIG when it is larger.
    public static func readWhole(_ path: String, limit: Int, followLinks: Bool = true) throws(SystemError) -> [UInt8] {
        let bytes = try open(path, followLinks: followLinks).read(at: 0, count: limit + 1)
        guard bytes.count <= limit else { throw SystemError("read \(path) (larger than \(limit) bytes)", errno: EFBIG) }
        return bytes
    }

    /// The first `limit` bytes of a regular file, opened as `open` does.
    public static func readPrefix(_ path: String, limit: Int, followLinks: Bool = false) throws(SystemError) -> [UInt8] {
        try open(path, followLinks: followLinks).read(at: 0, count: limit)
    }
}

/// Another process's memory (it must be stopped to be coherent), read through its `/proc/TID/mem`, opened once.
/// Not `process_vm_readv`: that faults pages in as the process would, and a page under a userfaultfd the
/// process registered (a post-copy migration, a garbage collector — or a program that wants to stall its
/// reader) waits for that descriptor's handler, the held process itself or anyone it gave it to, in a sleep no
/// signal ends; a read of `/proc/TID/mem` is refused such a page (EIO) at once. (A page of a file on a FUSE
/// file system still waits for its server: `UnreadableFiles` keeps those out.)
public final class ProcessMemory: Sendable {
    private let file: OwnedDescriptor

    /// Opens the memory of the process thread `tid` belongs to; nil when it cannot be (gone, not allowed).
    public init?(through tid: Int32) {
        let fd = Glibc.open("/proc/\(tid)/mem", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        file = OwnedDescriptor(adopting: fd)
    }

    /// Reads up to `buffer.count` bytes at `address` into `buffer`; the number read (short at an unmapped or
    /// unreadable page), 0 when none.
    public func read(address: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty, address <= UInt64(Int64.max) - UInt64(buffer.count) else { return 0 }
        let got = retryingOnEINTR { pread(file.fd, base, buffer.count, off_t(address)) }
        return max(got, 0)
    }

    /// Reads many ranges, each into its buffer; the total read, which stops short at the first range that
    /// cannot be read whole.
    public func read(ranges: [(address: UInt64, buffer: UnsafeMutableRawBufferPointer)]) -> Int {
        var total = 0
        for range in ranges {
            let got = read(address: range.address, into: range.buffer)
            total += got
            if got < range.buffer.count { break }
        }
        return total
    }

    /// Reads `count` bytes at each of `addresses`: by address, the bytes of each range that could be read whole.
    public func read(addresses: [UInt64], count: Int) -> [UInt64: [UInt8]] {
        guard count > 0 else { return [:] }
        var result: [UInt64: [UInt8]] = [:]
        var buffer = [UInt8](repeating: 0, count: count)
        for address in addresses {
            let got = buffer.withUnsafeMutableBytes { read(address: address, into: $0) }
            if got == count { result[address] = buffer }
        }
        return result
    }

    /// Reads up to `count` bytes at `address`.
    public func read(address: UInt64, count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { read(address: address, into: $0) }
        bytes.removeSubrange(got...)
        return bytes
    }
}

extension SystemError {
    /// Whether `UntrustedFile` refused the path for not being a regular file (a FIFO, device, socket or directory).
    public var isNotRegularFile: Bool { errno == EINVAL && call.hasPrefix(UntrustedFile.notRegularFile) }
}

extension OwnedDescriptor {
    /// Opens a directory crashwatch owns (never through a final link); nil when it is not a directory owned
    /// by `owner` (default: the effective user) and closed to group and others. As root, a private directory
    /// of root's there is handed to `owner` (a cache made before its workers ran as another user).
    public static func privateDirectory(_ path: String, owner: (uid: UInt32, gid: UInt32)? = nil) -> OwnedDescriptor? {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let wanted = owner ?? (geteuid(), getegid())
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & 0o077 == 0,
              info.st_uid == wanted.uid || (geteuid() == 0 && info.st_uid == 0 && fchown(fd, wanted.uid, wanted.gid) == 0) else {
            close(fd)
            return nil
        }
        return OwnedDescriptor(adopting: fd)
    }
}

/// A descriptor read front to back (a pipe: the kernel hands a core to a `core_pattern` helper on stdin).
public final class InputStream {
    public let fd: Int32
    /// Bytes consumed so far.
    public private(set) var position: UInt64 = 0
    /// Sees every byte the stream consumes, read or skipped, in order (a copy of the stream being kept).
    public var tee: ((UnsafeRawBufferPointer) -> Void)?
    /// When reading stops (CLOCK_MONOTONIC nanoseconds): the stream then reads as ended. A writer that stalls
    /// or streams without end (a huge, mostly empty core through a pipe) cannot keep the reader past it.
    public var deadlineNanoseconds: Int64?
    /// Whether the stream read as ended because the deadline came, not because its writer ended it.
    public private(set) var stoppedAtDeadline = false

    public init(fd: Int32) { self.fd = fd }

    /// Whether a read may go on: at once without a deadline; else once there is something to read before
    /// the deadline (false when it came first, which ends the stream for good).
    private func readable() -> Bool {
        guard let deadline = deadlineNanoseconds, !stoppedAtDeadline else { return !stoppedAtDeadline }
        while true {
            let remaining = deadline - Clock.monotonicNanoseconds()
            if remaining > 0 {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(clamping: (remaining + 999_999) / 1_000_000))
                if ready > 0 { return true }
                if ready < 0 && lastErrno() == EINTR { continue }
                if ready < 0 { return true }  // the read itself says what is wrong
            }
            stoppedAtDeadline = true
            return false
        }
    }

    /// Reads the stream to its end, or until `keepGoing` says no (asked every MiB); how many bytes that was.
    @discardableResult
    public func drain(while keepGoing: () -> Bool = { true }) throws(SystemError) -> UInt64 {
        var total: UInt64 = 0
        while keepGoing() {
            let got = try skip(1 << 20)
            total += got
            if got < 1 << 20 { break }
        }
        return total
    }

    /// Up to `count` bytes: fewer only at the end of the stream.
    public func read(_ count: Int) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count, readable() {
            let got = bytes.withUnsafeMutableBytes { raw in
                retryingOnEINTR { Glibc.read(fd, raw.baseAddress! + filled, count - filled) }
            }
            if got < 0 { throw SystemError("read", errno: lastErrno()) }
            if got == 0 { break }
            if let tee { bytes.withUnsafeBytes { tee(UnsafeRawBufferPointer(rebasing: $0[filled..<filled + got])) } }
            filled += got
        }
        position += UInt64(filled)
        return filled == count ? bytes : Array(bytes.prefix(filled))
    }

    /// Reads and drops `count` bytes (fewer at the end of the stream); how many were dropped.
    @discardableResult
    public func skip(_ count: UInt64) throws(SystemError) -> UInt64 {
        var left = count
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while left > 0, readable() {
            let want = Int(min(left, UInt64(buffer.count)))
            let got = buffer.withUnsafeMutableBytes { raw in retryingOnEINTR { Glibc.read(fd, raw.baseAddress, want) } }
            if got < 0 { throw SystemError("read", errno: lastErrno()) }
            if got == 0 { break }
            if let tee { buffer.withUnsafeBytes { tee(UnsafeRawBufferPointer(rebasing: $0[0..<got])) } }
            left -= UInt64(got)
        }
        position += count - left
        return count - left
    }
}

/// A gzip stream written to an open file as its input arrives (zlib, level 1: a core dump is mostly zeros
/// and repeated pages, and is compressed while the kernel waits).
public final class GzipWriter {
    private let handle: OpaquePointer

    /// Starts the stream on the open file `fd` (kept open by its owner; `WritableFile.compressing()`).
    init(fd: Int32) throws(SystemError) {
        guard let handle = cw_gzip_writer_create(fd, 1) else { throw SystemError("gzip", errno: lastErrno()) }
        self.handle = handle
    }

    deinit { cw_gzip_writer_destroy(handle) }

    /// Compressed bytes written so far.
    public var written: UInt64 { cw_gzip_writer_written(handle) }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        guard cw_gzip_writer_write(handle, bytes.baseAddress, bytes.count) == 0 else { throw SystemError("write", errno: lastErrno()) }
    }

    /// Ends the stream: the gzip trailer.
    public func finish() throws(SystemError) {
        guard cw_gzip_writer_finish(handle) == 0 else { throw SystemError("write", errno: lastErrno()) }
    }
}

/// An anonymous in-memory file (`memfd_create`), for handing bytes to a child process.
public enum MemoryFile {
    public static func create(name: String) throws(SystemError) -> OwnedDescriptor {
        let fd = cw_memfd(name)
        guard fd >= 0 else { throw SystemError("memfd_create", errno: lastErrno()) }
        return OwnedDescriptor(adopting: fd)
    }

    /// Makes `file` (from `create`) immutable for good: whoever holds it — a worker handed it as input — can
    /// neither write, shrink nor grow it, nor lift the seals.
    public static func seal(_ file: OwnedDescriptor) throws(SystemError) {
        let result = cw_memfd_seal(file.fd)
        guard result == 0 else { throw SystemError("seal the memfd", errno: result) }
    }
}

/// A read-only mapping of a whole file, unmapped when the value goes away.
public final class MappedFile {
    public let bytes: UnsafeRawBufferPointer

    /// Maps the file open at `fd` (at most `limit` bytes of it).
    public init(_ descriptor: OwnedDescriptor, limit: Int) throws(SystemError) {
        guard let size = descriptor.size() else { throw SystemError("fstat", errno: lastErrno()) }
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard size <= Int64(limit) else { throw SystemError("map capture (\(size) bytes, limit \(limit))", errno: EFBIG) }
        let address = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, descriptor.fd, 0)
        guard let address, address != MAP_FAILED else { throw SystemError("mmap", errno: lastErrno()) }
        bytes = UnsafeRawBufferPointer(start: address, count: Int(size))
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}

/// Holds a worker back until its input is complete, so the input can be finished while the worker starts:
/// a close-on-exec pipe whose read end the worker gets as one of its descriptors (`workerEnd`) and reads
/// to EOF (`WorkerGate.wait(fd:)`) before it reads its input. `open` ends the wait: EOF when the worker may
/// go on, a byte first when it must not.
public final class WorkerGate: Sendable {
    /// The end passed to the worker.
    public let workerEnd: OwnedDescriptor
    /// Ours, until `open` closes it (-1 then).
    private let ourEnd: Mutex<Int32>

    public init() throws(SystemError) {
        var fds: [Int32] = [-1, -1]
        guard cw_pipe_cloexec(&fds) == 0 else { throw SystemError("pipe", errno: lastErrno()) }
        workerEnd = OwnedDescriptor(adopting: fds[0])
        ourEnd = Mutex(fds[1])
    }

    deinit { open(proceed: false) }

    /// Lets the worker go on (`proceed`), or tells it to end without reading its input; later calls do
    /// nothing. Should this process die first, the worker goes on too, and finds its input unfinished.
    public func open(proceed: Bool) {
        ourEnd.withLock { fd in
            guard fd >= 0 else { return }
            if !proceed {
                var no: UInt8 = 0
                _ = retryingOnEINTR { write(fd, &no, 1) }
            }
            // EOF for the worker once every copy is closed: the only other ones, inherited by children
            // forked meanwhile, are closed at their exec.
            Glibc.close(fd)
            fd = -1
        }
    }

    /// In the worker: waits until the gate on `fd` opens; whether the input may be read (false: it will
    /// never be finished, or the descriptor is not a gate).
    public static func wait(fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return retryingOnEINTR { read(fd, &byte, 1) } == 0
    }
}

/// How a worker process is confined.
public struct WorkerLimits: Sendable {
    /// RLIMIT_AS in bytes.
    public var addressSpaceBytes: UInt64
    /// RLIMIT_CPU in seconds.
    public var cpuSeconds: UInt64
    /// RLIMIT_FSIZE in bytes: the most it can write to any file.
    public var fileSizeBytes: UInt64
    /// RLIMIT_FSIZE's hard limit: what the worker's debug-cache writer may raise it to.
    public var fileSizeHardBytes: UInt64 = 0
    /// Start in the background (SCHED_BATCH at nice 19, yielding its CPU every 0.25 ms; the supervisor promotes
    /// it when starved): for a worker beside traced programs, whose stops must not wait on it. Not for one a
    /// person or the kernel waits on (analyze-core, core-handler), nor under a seccomp filter (the scheduling
    /// calls could be refused by a kill).
    public var background = false

    public init(addressSpaceBytes: UInt64, cpuSeconds: UInt64, fileSizeBytes: UInt64) {
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.fileSizeBytes = fileSizeBytes
    }
}

/// Starts crashwatch's own executable again as a confined worker with `arguments`, passing `descriptors`
/// as fds 3, 4, …; `environment` replaces the environment. With `standardError`, that file is the worker's
/// stderr and /dev/null its stdin and stdout; without, it keeps crashwatch's. It starts with crashwatch's
/// credentials and takes its own identity itself (`WorkerIdentity.assume`). Returns its pid.
public func spawnWorker(arguments: [String], environment: [String], descriptors: [Int32], standardError: Int32? = nil,
                        limits: WorkerLimits) throws(SystemError) -> Int32
{
    var pid: pid_t = 0
    var raw = cw_worker_limits(
        address_space_bytes: limits.addressSpaceBytes, cpu_seconds: limits.cpuSeconds,
        file_size_bytes: limits.fileSizeBytes, file_size_hard_bytes: limits.fileSizeHardBytes,
        background: limits.background ? 1 : 0)
    let result = withCStringArray(["crashwatch"] + arguments) { argv in
        withCStringArray(environment) { envp in
            descriptors.withUnsafeBufferPointer { fds in
                cw_spawn_worker("/proc/self/exe", argv, envp, fds.baseAddress, fds.count, standardError ?? -1, &raw, &pid)
            }
        }
    }
    guard result == 0 else { throw SystemError("fork worker", errno: lastErrno()) }
    return pid
}

/// Moves a worker out of the background (SCHED_BATCH at nice 19, yielding every 0.25 ms) to SCHED_OTHER at
/// nice 0, so that a busy machine cannot starve it; false when not allowed (an unprivileged
/// crashwatch without RLIMIT_NICE) or the worker is gone.
public func promoteWorker(_ pid: Int32) -> Bool {
    cw_worker_promote(pid) == 0
}

/// For the processing worker: gives up the CPU every `microseconds` (SIGALRM from ITIMER_REAL, a handler
/// calling sched_yield, SA_RESTART), so that a task the scheduler queued on its CPU — a traced program
/// whose stop was just answered, the tracer thread — waits at most about that long, whatever the kernel's
/// preemption does: on this PREEMPT_NONE kernel a task woken onto the busy worker's CPU was measured
/// waiting for the next tick (3.5–4 ms at HZ=250) while the other CPU idled. (A CPU-time timer would not
/// do: those fire at ticks too.) Not under a seccomp filter, which might kill the worker for `setitimer`.
/// Whether the timer is set.
@discardableResult
public func yieldCPU(everyMicroseconds microseconds: UInt32) -> Bool {
    guard SelfProcess.hasNoSeccompFilter else { return false }
    return cw_yield_every(microseconds) == 0
}

/// Sends SIGKILL to `pid` (a worker past its deadline); a process already gone is fine.
public func killProcess(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}

/// The calling process's effective user id.
public var effectiveUserID: UInt32 { geteuid() }

/// The calling process's effective group id.
public var effectiveGroupID: UInt32 { getegid() }

/// The id of the group named `name` in the system's group database, or nil when there is none.
public func groupID(named name: String) -> UInt32? {
    var group = Glibc.group()
    var result: UnsafeMutablePointer<Glibc.group>?
    var buffer = [CChar](repeating: 0, count: 16_384)
    let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
    guard status == 0, result != nil else { return nil }
    return group.gr_gid
}
