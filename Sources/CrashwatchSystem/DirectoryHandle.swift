// DirectoryHandle.swift — an open directory and the calls relative to it (openat, renameat, renameat2, unlinkat,
// fstatat, fdopendir/readdir, mkdirat), one path component each and never following a symbolic link there;
// plus `writeAtomically`, the one atomic write (temporary file, fsync, rename, directory fsync).
import CCrashwatch
import Glibc

/// An open directory (`O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC`), closed when dropped; names are relative to it.
///
/// Every method takes a single path component (no `/`, not `.` or `..`) and never follows a symbolic
/// link found under that name. The descriptor may be used from several threads at once.
public struct DirectoryHandle: ~Copyable, Sendable {
    /// The directory's file descriptor (module-internal: the path walk builds handles from descriptors).
    let fd: Int32

    /// Opens `path` as a directory; a symbolic link as its last component fails (ENOTDIR or ELOOP).
    ///
    /// A trailing `/` would make the kernel follow a final symbolic link, so callers must strip it.
    public init(openingPath path: String) throws(SystemError) {
        let fd = retryingOnEINTR { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { throw SystemError("open \(path)", errno: lastErrno()) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The directory's own status (`fstat`).
    public func status() throws(SystemError) -> FileStatus {
        var raw = stat()
        guard fstat(fd, &raw) == 0 else { throw SystemError("fstat", errno: lastErrno()) }
        return FileStatus(raw)
    }

    /// Publishes `bytes` as entry `name` atomically — the one way crashwatch writes a file: `temporaryName`
    /// is created exclusively (never through a link), given exactly `permissions` (and `group`, when given)
    /// whatever the umask, written fully, flushed, closed and renamed over `name` (an entry there is replaced,
    /// never written through); then the directory is flushed. Readers see the old entry or the whole new one.
    /// A failure before the rename removes the temporary file.
    ///
    /// With `locked`, the new file gets an exclusive `flock` before it is renamed into place, and its descriptor,
    /// still open and locking it, is returned (nil without): see `isLocked(named:)`. With `locked` and not
    /// `flushed`, neither the file nor the directory is flushed: the caller flushes both later (the returned
    /// descriptor's `synchronize()`, then this directory's). Readers see the same whole file either way, and it
    /// survives the writer's death; until the flushes only a crash of the kernel can lose it.
    @discardableResult
    public func writeAtomically(_ bytes: some Collection<UInt8>, named name: String, temporaryName: String,
                                permissions: UInt32, group: UInt32? = nil, locked: Bool = false,
                                flushed: Bool = true) throws(AtomicWriteError) -> OwnedDescriptor?
    {
        let flushed = flushed || !locked
        let file: WritableFile
        do { file = try createFile(named: temporaryName, permissions: permissions) } catch {
            throw AtomicWriteError(step: .createTemporary, error: error)
        }
        var step = AtomicWriteError.Step.setAttributes
        var lock: OwnedDescriptor?
        do throws(SystemError) {
            if let group { try file.setGroup(group) }
            try file.setPermissions(permissions)
            step = .write
            try file.writeAll(bytes)
            step = .synchronize
            if flushed { try file.synchronize() }
            step = .write
            if locked {
                lock = try file.lockedDescriptor()
            } else {
                try file.close()
            }
            step = .rename
            try rename(temporaryName, to: name)
        } catch {
            try? removeFile(named: temporaryName)
            throw AtomicWriteError(step: step, error: error)
        }
        if flushed {
            do { try synchronize() } catch { throw AtomicWriteError(step: .synchronizeDirectory, error: error) }
        }
        return lock
    }

    /// Whether another open file description holds a `flock` on the regular file `name` that excludes a shared
    /// one (a file `writeAtomically(locked: true)` published and its writer still holds). Never blocks: the
    /// file is opened `O_NONBLOCK` and never through a link; a missing, unopenable or non-regular entry is not
    /// locked. Its type is checked before it is opened: no other kind of file is ever opened.
    public func isLocked(named name: String) -> Bool {
        guard (try? Self.check(name, "openat")) != nil else { return false }
        let file = cw_open_regular_at(fd, name, 0)
        guard file >= 0 else { return false }
        defer { Glibc.close(file) }
        return flock(file, LOCK_SH | LOCK_NB) != 0 && lastErrno() == EWOULDBLOCK
    }

    /// The status of entry `name`, without following it when it is a symbolic link (`fstatat`).
    public func status(of name: String) throws(SystemError) -> FileStatus {
        try Self.check(name, "fstatat")
        var raw = stat()
        guard fstatat(fd, name, &raw, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw SystemError("fstatat \(name)", errno: lastErrno())
        }
        return FileStatus(raw)
    }

    /// The bytes an unprivileged user may still write on the directory's file system (`f_bavail`).
    public func availableBytes() throws(SystemError) -> UInt64 {
        var info = statvfs()
        guard retryingOnEINTR({ fstatvfs(fd, &info) }) == 0 else { throw SystemError("fstatvfs", errno: lastErrno()) }
        let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        return overflow ? .max : bytes
    }

    /// Creates a new regular file `name` for writing; fails when any entry by that name exists, links included.
    public func createFile(named name: String, permissions: UInt32) throws(SystemError) -> WritableFile {
        try Self.check(name, "openat")
        let flags = O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC
        let file = retryingOnEINTR { openat(fd, name, flags, mode_t(permissions)) }
        guard file >= 0 else { throw SystemError("openat \(name)", errno: lastErrno()) }
        return WritableFile(fd: file, name: name)
    }

    /// Renames entry `name` to `newName` in this directory, replacing whatever entry `newName` was
    /// (a symbolic link there is replaced, not followed).
    public func rename(_ name: String, to newName: String) throws(SystemError) {
        try Self.check(name, "renameat")
        try Self.check(newName, "renameat")
        guard renameat(fd, name, fd, newName) == 0 else {
            throw SystemError("renameat \(name) \(newName)", errno: lastErrno())
        }
    }

    /// Removes the non-directory entry `name` (a symbolic link is removed itself, never its target).
    public func removeFile(named name: String) throws(SystemError) {
        try Self.check(name, "unlinkat")
        guard unlinkat(fd, name, 0) == 0 else { throw SystemError("unlinkat \(name)", errno: lastErrno()) }
    }

    /// The names of all entries except `.` and `..`, in directory order, read through a fresh descriptor
    /// so that concurrent listings do not share a read position.
    public func entryNames() throws(SystemError) -> [String] {
        let listing = retryingOnEINTR { openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard listing >= 0 else { throw SystemError("openat .", errno: lastErrno()) }
        guard let stream = fdopendir(listing) else {
            let saved = lastErrno()
            close(listing)
            throw SystemError("fdopendir", errno: saved)
        }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            Glibc.errno = 0
            guard let entry = readdir(stream) else {
                let saved = lastErrno()
                if saved != 0 { throw SystemError("readdir", errno: saved) }
                return names
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                String(cString: UnsafeRawPointer(tuple).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Flushes the directory's entries to disk (`fsync`), making renames and removals durable.
    ///
    /// A file system that cannot sync directories (EINVAL) counts as success: there is nothing more to do.
    public func synchronize() throws(SystemError) {
        if retryingOnEINTR({ fsync(fd) }) == 0 { return }
        let saved = lastErrno()
        if saved != EINVAL { throw SystemError("fsync directory", errno: saved) }
    }

    /// Wraps a directory descriptor opened relative to another one; it is closed exactly once.
    init(descriptor fd: Int32) {
        self.fd = fd
    }

    /// Opens the subdirectory `name`; a symbolic link there fails (ELOOP), a non-directory too (ENOTDIR).
    public func openDirectory(named name: String) throws(SystemError) -> DirectoryHandle {
        try Self.check(name, "openat")
        let child = retryingOnEINTR { openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard child >= 0 else { throw SystemError("openat \(name)", errno: lastErrno()) }
        return DirectoryHandle(descriptor: child)
    }

    /// Sets this directory's permission bits exactly (`fchmod`), whatever the umask did when it was made.
    public func setPermissions(_ permissions: UInt32) throws(SystemError) {
        guard retryingOnEINTR({ fchmod(fd, mode_t(permissions)) }) == 0 else {
            throw SystemError("fchmod directory", errno: lastErrno())
        }
    }

    /// Creates the subdirectory `name` with `permissions` (narrowed by the umask); EEXIST when any entry has that name.
    public func createDirectory(named name: String, permissions: UInt32) throws(SystemError) {
        try Self.check(name, "mkdirat")
        guard mkdirat(fd, name, mode_t(permissions)) == 0 else {
            throw SystemError("mkdirat \(name)", errno: lastErrno())
        }
    }

    /// Moves entry `name` to `newName` in `destination` (which may be this directory) only when nothing
    /// exists under `newName` (EEXIST otherwise); a symbolic link is moved itself, never followed.
    ///
    /// The move is one `renameat2(RENAME_NOREPLACE)`: of several processes moving the same entry, exactly one
    /// succeeds and the others get ENOENT. Where the file system lacks the flag (EINVAL, ENOSYS) it falls
    /// back to a plain `renameat`, which keeps that exclusivity but may replace an entry at `newName`.
    public func move(_ name: String, to newName: String, in destination: borrowing DirectoryHandle)
        throws(SystemError)
    {
        try Self.check(name, "renameat2")
        try Self.check(newName, "renameat2")
        if retryingOnEINTR({ cw_renameat_noreplace(fd, name, destination.fd, newName) }) == 0 { return }
        let saved = lastErrno()
        guard saved == EINVAL || saved == ENOSYS else {
            throw SystemError("renameat2 \(name) \(newName)", errno: saved)
        }
        guard retryingOnEINTR({ renameat(fd, name, destination.fd, newName) }) == 0 else {
            throw SystemError("renameat \(name) \(newName)", errno: lastErrno())
        }
    }

    /// Reads the regular file `name` whole, without following a symbolic link and without opening anything
    /// else (a FIFO, a device): those, and files longer than `maxBytes`, are reported instead of read.
    ///
    /// The entry's type is checked before it is opened: an `O_PATH` descriptor (no driver's open, never
    /// blocking) is `fstat`ed, and only a regular file is then opened, through that descriptor (the inode
    /// checked, whatever the name points to by then; see `cw_open_regular_at`). A file that grows past
    /// `maxBytes` while it is read is reported as too large.
    public func readFile(named name: String, maxBytes: Int) throws(SystemError) -> FileReadResult {
        try Self.check(name, "openat")
        let path = cw_open_path(fd, name, 0)
        guard path >= 0 else { throw SystemError("openat \(name)", errno: lastErrno()) }
        defer { close(path) }
        var raw = stat()
        guard fstat(path, &raw) == 0 else { throw SystemError("fstat \(name)", errno: lastErrno()) }
        let checked = FileStatus(raw)
        guard checked.kind == .regular else { return .notRegular(checked.kind) }
        guard checked.size <= Int64(maxBytes) else { return .tooLarge(checked.size) }
        let file = cw_reopen_regular(path, fd, name, 0)
        guard file >= 0 else { throw SystemError("open \(name)", errno: lastErrno()) }
        defer { close(file) }
        guard fstat(file, &raw) == 0 else { throw SystemError("fstat \(name)", errno: lastErrno()) }
        let opened = FileStatus(raw)
        guard opened.size <= Int64(maxBytes) else { return .tooLarge(opened.size) }
        // One byte more than allowed tells a file that grew past the limit from one that ends at it.
        let capacity = max(0, min(maxBytes, Int.max - 1)) + 1
        var bytes = [UInt8](repeating: 0, count: min(capacity, Int(opened.size) + 1))
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count < capacity else { return .tooLarge(Int64(count)) }
                bytes.append(contentsOf: repeatElement(0, count: min(capacity - bytes.count, max(bytes.count, 4096))))
            }
            let room = bytes.count - count
            var saved: Int32 = 0
            let got = bytes.withUnsafeMutableBytes { buffer in
                let result = retryingOnEINTR { read(file, buffer.baseAddress! + count, room) }
                if result < 0 { saved = lastErrno() }
                return result
            }
            if got < 0 { throw SystemError("read \(name)", errno: saved) }
            if got == 0 { break }
            count += got
        }
        if count > maxBytes { return .tooLarge(Int64(count)) }
        bytes.removeSubrange(count...)
        return .contents(bytes)
    }

    /// Refuses names that are not exactly one path component.
    static func check(_ name: String, _ call: String) throws(SystemError) {
        if name.isEmpty || name == "." || name == ".." || name.utf8.contains(UInt8(ascii: "/")) {
            throw SystemError("\(call) \(name)", errno: EINVAL)
        }
    }
}
