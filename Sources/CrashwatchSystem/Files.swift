// Files.swift — thin, EINTR-safe wrappers over the file calls the spool needs (openat, write, fsync,
// renameat, unlinkat, fstatat, fdopendir/readdir, mkdir). Every name is one path component relative to an
// open directory, and no call here follows a symbolic link in that component. The spool and every later
// writer of files use these instead of calling Glibc themselves.
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
    /// The owner's user id.
    public let ownerID: UInt32

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
        ownerID = raw.st_uid
    }
}

extension SystemError {
    /// Whether the file or a directory on its path does not exist (ENOENT).
    public var isNotFound: Bool { errno == ENOENT }

    /// Whether a file by that name already exists (EEXIST).
    public var isAlreadyExisting: Bool { errno == EEXIST }

    /// Whether the path was a symbolic link or not a directory where a directory was required (ELOOP, ENOTDIR).
    public var isNotADirectoryOrLink: Bool { errno == ELOOP || errno == ENOTDIR }
}

/// Path-based file system calls: the few that cannot start from an open directory.
public enum FileSystem {
    /// The status of `path` itself (`lstat`): a symbolic link is reported, not followed.
    public static func status(ofPath path: String) throws(SystemError) -> FileStatus {
        var raw = stat()
        guard fstatat(AT_FDCWD, path, &raw, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw SystemError("lstat \(path)", errno: lastErrno())
        }
        return FileStatus(raw)
    }

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

    /// Replaces (or creates) the file at `path` with `bytes` atomically: a temporary file beside it,
    /// written fully, flushed, then renamed over it. On failure the temporary file is removed.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, permissions: UInt32 = 0o644) throws(SystemError) {
        let temporary = "\(parentDirectory(of: path) ?? ".")/.\(path.split(separator: "/").last ?? "out").tmp-\(getpid())"
        let fd = retryingOnEINTR { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(permissions)) }
        guard fd >= 0 else { throw SystemError("open \(temporary)", errno: lastErrno()) }
        var failure: SystemError?
        var written = 0
        while written < bytes.count && failure == nil {
            let count = bytes.withUnsafeBytes { buffer in
                retryingOnEINTR { write(fd, buffer.baseAddress! + written, buffer.count - written) }
            }
            if count < 0 { failure = SystemError("write \(temporary)", errno: lastErrno()) } else { written += count }
        }
        if failure == nil && fsync(fd) != 0 { failure = SystemError("fsync \(temporary)", errno: lastErrno()) }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = SystemError("rename \(temporary) to \(path)", errno: lastErrno()) }
        if let failure {
            unlink(temporary)
            throw failure
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

/// An open directory (`O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC`), closed when dropped; names are relative to it.
///
/// Every method takes a single path component (no `/`, not `.` or `..`) and never follows a symbolic
/// link found under that name. The descriptor may be used from several threads at once.
public struct DirectoryHandle: ~Copyable, Sendable {
    /// The directory's file descriptor.
    private let fd: Int32

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

    /// Writes every byte, continuing after short writes and EINTR.
    public func writeAll(_ bytes: some Collection<UInt8>) throws(SystemError) {
        let result: Int32? = bytes.withContiguousStorageIfAvailable { writeAll(UnsafeRawBufferPointer($0)) }
        let failure = result ?? Array(bytes).withUnsafeBytes { writeAll($0) }
        if failure != 0 { throw SystemError("write \(name)", errno: failure) }
    }

    /// The write loop over one buffer; returns 0 on success or the errno of the failed write.
    private func writeAll(_ buffer: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < buffer.count {
            let written = retryingOnEINTR { write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
            if written < 0 { return lastErrno() }
            if written == 0 { return EIO }  // a regular file that accepts nothing: never loop forever
            offset += written
        }
        return 0
    }

    /// Flushes the file's data and metadata to disk (`fsync`).
    public func synchronize() throws(SystemError) {
        guard retryingOnEINTR({ fsync(fd) }) == 0 else { throw SystemError("fsync \(name)", errno: lastErrno()) }
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
