// Streams.swift — a descriptor read front to back within a deadline (the kernel's core on a core_pattern
// helper's stdin) and a gzip stream written as its input arrives (a kept core).
import CCrashwatch
import Glibc

/// A descriptor read front to back (a pipe: the kernel hands a core to a `core_pattern` helper on stdin; or a
/// core file, `analyze-core`).
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

    /// The size of the file read when it is a regular file (asked once), nil for a pipe or anything else.
    private lazy var regularFileSize: Int? = {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return info.st_size
    }()

    /// Reads and drops `count` bytes (fewer at the end of the stream); how many were dropped. In a regular
    /// file nothing `tee` must see, it seeks over them instead (`analyze-core`: a core's memory left out is
    /// never read).
    @discardableResult
    public func skip(_ count: UInt64) throws(SystemError) -> UInt64 {
        if tee == nil, count > 0, let size = regularFileSize, readable() {
            let offset = lseek(fd, 0, SEEK_CUR)
            guard offset >= 0 else { throw SystemError("lseek", errno: lastErrno()) }
            let step = min(count, UInt64(max(size - offset, 0)))
            guard lseek(fd, offset + Int(step), SEEK_SET) >= 0 else { throw SystemError("lseek", errno: lastErrno()) }
            position += step
            return step
        }
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

