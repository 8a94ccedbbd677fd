// Files.swift — the vocabulary of the file calls: what kind an entry is and its status (fstatat, never
// following a final link), the system errors they raise, the few path-based calls (`FileSystem`), the error of
// an atomic write and what a bounded read found. The calls on an open directory are in DirectoryHandle.swift,
// writing in WritableFile.swift.
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
    /// The status of `path`, following links on the way, with the final one following too (`stat`).
    public static func status(_ path: String) throws(SystemError) -> FileStatus {
        var raw = stat()
        guard retryingOnEINTR({ stat(path, &raw) }) == 0 else { throw SystemError("stat \(path)", errno: lastErrno()) }
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

/// What `DirectoryHandle.readFile(named:maxBytes:)` found: the bytes, or why it did not read them.
public enum FileReadResult: Equatable, Sendable {
    /// The whole file.
    case contents([UInt8])
    /// The entry is not a regular file (a symbolic link, directory, FIFO, socket or device); it was not read.
    case notRegular(FileKind)
    /// The file holds more than the allowed bytes (its size, or the bytes read when it grew meanwhile).
    case tooLarge(Int64)
}
