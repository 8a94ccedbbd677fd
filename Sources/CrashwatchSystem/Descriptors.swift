// Descriptors.swift — open files as values: a descriptor closed when the value goes away, files whose names
// come from a crashed process, a core or a report (typed before they are opened, never through a final link),
// and directories crashwatch owns.
import CCrashwatch
import Glibc

/// An open file descriptor, closed when the value goes away.
public final class OwnedDescriptor: Sendable {
    public let fd: Int32

    public init(adopting fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// Flushes the file's data and metadata to its device (`fsync`).
    public func synchronize() throws(SystemError) {
        guard retryingOnEINTR({ fsync(fd) }) == 0 else { throw SystemError("fsync", errno: lastErrno()) }
    }

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

    /// `fstat`'s type, mode, size and owner.
    public func status() -> FileStatus? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return FileStatus(info)
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
