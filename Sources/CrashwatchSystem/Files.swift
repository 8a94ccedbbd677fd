// Files.swift — thin, EINTR-safe wrappers over the file calls the spool needs (openat, write, fsync,
// renameat, renameat2, unlinkat, fstatat, fdopendir/readdir, mkdirat), plus whether a process exists (for
// claim holders). Every name is one path component relative to an open directory, and no call here follows
// a symbolic link in that component. The spool and every later writer of files use these instead of
// calling Glibc themselves.
import CCrashwatch
import Glibc

/// What kind of file an entry is, seen without following symbolic links.
public enum FileKind: Equatable, Sendable {
    /// A regular file.
    case regular
    /// A directory.
    case directory
    /// A symbolic link (never followed here).
    case symbolicLink
    /// Anything else: FIFO, socket, device.
    case other
}

/// The parts of `struct stat` crashwatch uses, taken without following a final symbolic link.
public struct FileStatus: Equatable, Sendable {
    /// The file's kind.
    public let kind: FileKind
    /// Permission bits with setuid, setgid and sticky (`st_mode & 07777`).
    public let permissions: UInt32
    /// Size in bytes (`st_size`).
    public let size: Int64
    /// Last modification, nanoseconds since the Unix epoch (`st_mtim`).
    public let modificationNanoseconds: Int64
    /// When the inode last changed (st_ctim), in nanoseconds since the epoch: set by the kernel, so unlike
    /// the modification time no file owner can choose it.
    public let changeNanoseconds: Int64
    /// The owner's user id.
    public let ownerID: UInt32
    /// The group's id.
    public let groupID: UInt32

    /// Whether the set-group-ID bit is set: in a directory, new files take the directory's group.
    public var isSetGroupID: Bool { permissions & 0o2000 != 0 }

    /// Whether the sticky bit is set: in a directory, only an entry's owner may remove or rename it.
    public var isSticky: Bool { permissions & 0o1000 != 0 }

    /// Whether the group or others may write (`mode & 022`).
    public var isWritableByGroupOrOthers: Bool { permissions & 0o022 != 0 }

    /// Decodes a `struct stat`.
    init(_ raw: stat) {
        switch raw.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        permissions = UInt32(raw.st_mode & 0o7777)
        size = Int64(raw.st_size)
        modificationNanoseconds = Int64(raw.st_mtim.tv_sec) * 1_000_000_000 + Int64(raw.st_mtim.tv_nsec)
        changeNanoseconds = Int64(raw.st_ctim.tv_sec) * 1_000_000_000 + Int64(raw.st_ctim.tv_nsec)
        ownerID = raw.st_uid
        groupID = raw.st_gid
    }
}

extension SystemError {
    /// Whether the file or a directory on its path does not exist (ENOENT).
    public var isNotFound: Bool { errno == ENOENT }

    /// Whether a file by that name already exists (EEXIST).
    public var isAlreadyExisting: Bool { errno == EEXIST }

    /// Whether the path was a symbolic link or not a directory where a directory was required (ELOOP, ENOTDIR).
    public var isNotADirectoryOrLink: Bool { errno == ELOOP || errno == ENOTDIR }

    /// Whether the call was refused for lack of permission (EPERM, EACCES), e.g. renaming another user's
    /// entry in a sticky directory.
    public var isPermissionDenied: Bool { errno == EPERM || errno == EACCES }

    /// Opening `path` as a directory failed because it is another kind of file (ENOTDIR).
    public static func notADirectory(_ path: String) -> SystemError {
        SystemError("open \(path)", errno: ENOTDIR)
    }

    /// A failure that is not a system call's: `call` met data it cannot use (reported as EINVAL).
    public static func invalidData(_ call: String, pid: Int32? = nil) -> SystemError {
        SystemError(call, pid: pid, errno: EINVAL)
    }
}

/// Path-based file system calls: the few that cannot start from an open directory.
public enum FileSystem {
    /// Creates `path` and any missing parents with `permissions` (narrowed by the umask), like `mkdir -p`.
    ///
    /// Existing components are accepted as they are, whatever they are; opening the result decides
    /// whether it is usable.
    public static func createDirectories(_ path: String, permissions: UInt32) throws(SystemError) {
        if mkdirat(AT_FDCWD, path, mode_t(permissions)) == 0 { return }
        let saved = lastErrno()
        if saved == EEXIST { return }
        guard saved == ENOENT, let parent = parentDirectory(of: path) else {
            throw SystemError("mkdir \(path)", errno: saved)
        }
        try createDirectories(parent, permissions: permissions)
        if mkdirat(AT_FDCWD, path, mode_t(permissions)) == 0 { return }
        let again = lastErrno()
        if again != EEXIST { throw SystemError("mkdir \(path)", errno: again) }
    }

    /// Replaces (or creates) the file at `path` with `bytes` atomically, as `DirectoryHandle.writeAtomically`
    /// does in its directory, with the temporary name `.<name>.tmp-<pid>`.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, permissions: UInt32 = 0o640) throws(SystemError) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let name = String(trimmed.split(separator: "/").last ?? trimmed)
        let directory = try DirectoryHandle(openingPath: parentDirectory(of: String(trimmed)) ?? ".")
        let temporary = ".\(name).tmp-\(getpid())"
        do { try directory.writeAtomically(bytes, named: name, temporaryName: temporary, permissions: permissions) } catch {
            throw error.error
        }
    }

    /// The path without its last component, or nil for `/` and single relative names.
    static func parentDirectory(of path: String) -> String? {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        var parent = trimmed[..<slash]
        while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
        if parent.isEmpty { return trimmed == "/" ? nil : "/" }
        return String(parent)
    }
}

/// Which step of `DirectoryHandle.writeAtomically` failed, and why.
public struct AtomicWriteError: Error, Equatable, Sendable {
    /// The steps, in order.
    public enum Step: Sendable, Equatable {
        case createTemporary, setAttributes, write, synchronize, rename, synchronizeDirectory
    }
    /// The step that failed; before `.rename` the temporary file is gone, at `.synchronizeDirectory` the file is in place.
    public let step: Step
    /// The system's error.
    public let error: SystemError
}

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
    /// still open and locking it, is returned (nil without): see `isLocked(named:)`.
    @discardableResult
    public func writeAtomically(_ bytes: some Collection<UInt8>, named name: String, temporaryName: String,
                                permissions: UInt32, group: UInt32? = nil, locked: Bool = false) throws(AtomicWriteError)
        -> OwnedDescriptor?
    {
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
            try file.synchronize()
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
        do { try synchronize() } catch { throw AtomicWriteError(step: .synchronizeDirectory, error: error) }
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
    private static func check(_ name: String, _ call: String) throws(SystemError) {
        if name.isEmpty || name == "." || name == ".." || name.utf8.contains(UInt8(ascii: "/")) {
            throw SystemError("\(call) \(name)", errno: EINVAL)
        }
    }
}

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

/// What `DirectoryHandle.readFile(named:maxBytes:)` found: the bytes, or why it did not read them.
public enum FileReadResult: Equatable, Sendable {
    /// The whole file.
    case contents([UInt8])
    /// The entry is not a regular file (a symbolic link, directory, FIFO, socket or device); it was not read.
    case notRegular(FileKind)
    /// The file holds more than the allowed bytes (its size, or the bytes read when it grew meanwhile).
    case tooLarge(Int64)
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
