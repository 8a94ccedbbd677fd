// WritableFile.swift — a file open for writing, closed when dropped, and the one write loop (`writeFully`).
import Glibc

/// A file open for writing, closed when dropped; `close()` reports the close's own error.
public struct WritableFile: ~Copyable, Sendable {
    /// The file descriptor; -1 once `close()` has taken it.
    private var fd: Int32
    /// The name it was created under, for error messages.
    public let name: String

    /// Wraps an open descriptor; it is closed exactly once.
    init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Sets the permission bits exactly (`fchmod`), whatever the umask did at creation.
    public func setPermissions(_ permissions: UInt32) throws(SystemError) {
        guard retryingOnEINTR({ fchmod(fd, mode_t(permissions)) }) == 0 else {
            throw SystemError("fchmod \(name)", errno: lastErrno())
        }
    }

    /// Gives the file `group` (fchown, owner unchanged).
    public func setGroup(_ group: UInt32) throws(SystemError) {
        guard fchown(fd, UInt32.max, group) == 0 else { throw SystemError("fchown", errno: lastErrno()) }
    }

    /// Writes every byte, continuing after short writes and EINTR.
    public func writeAll(_ bytes: some Collection<UInt8>) throws(SystemError) {
        let result: Int32? = bytes.withContiguousStorageIfAvailable { writeFully(fd, UnsafeRawBufferPointer($0)) }
        let failure = result ?? Array(bytes).withUnsafeBytes { writeFully(fd, $0) }
        if failure != 0 { throw SystemError("write \(name)", errno: failure) }
    }

    /// Flushes the file's data and metadata to disk (`fsync`).
    public func synchronize() throws(SystemError) {
        guard retryingOnEINTR({ fsync(fd) }) == 0 else { throw SystemError("fsync \(name)", errno: lastErrno()) }
    }

    /// A gzip stream written into this file as its input arrives; the file must stay open while it is used.
    public func compressing() throws(SystemError) -> GzipWriter { try GzipWriter(fd: fd) }

    /// Takes an exclusive `flock` on the file and hands over its descriptor, which keeps the lock until it closes.
    public consuming func lockedDescriptor() throws(SystemError) -> OwnedDescriptor {
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw SystemError("flock \(name)", errno: lastErrno()) }
        let descriptor = OwnedDescriptor(adopting: fd)
        fd = -1
        return descriptor
    }

    /// Closes the file, reporting a failure (delayed write errors surface here on some file systems).
    ///
    /// The descriptor is released even when this throws; close is never retried (Linux frees it on EINTR).
    public consuming func close() throws(SystemError) {
        let fd = self.fd
        self.fd = -1
        if Glibc.close(fd) != 0 {
            let saved = lastErrno()
            if saved != EINTR { throw SystemError("close \(name)", errno: saved) }
        }
    }
}

/// Writes all of `buffer` to `fd`, continuing after short writes and EINTR; returns 0, or the errno of the
/// write that failed (EIO when the file accepts nothing: never loop forever). The one write loop.
func writeFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
    var offset = 0
    while offset < buffer.count {
        let written = retryingOnEINTR { write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
        if written < 0 { return lastErrno() }
        if written == 0 { return EIO }
        offset += written
    }
    return 0
}
