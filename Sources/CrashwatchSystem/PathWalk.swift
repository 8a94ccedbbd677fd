// PathWalk.swift — opening a directory by path one component at a time, so that every symbolic link on the
// way is shown to the caller (the link's owner, the directory holding it, its target) and followed only when
// the caller agrees, instead of the kernel following every link unseen. The spool uses it to accept links
// that only root or its own user could have made — systemd's `DynamicUser=` makes `/var/lib/NAME` such a
// link to `private/NAME` — and to refuse links anyone else could have planted or could swap.
import CCrashwatch
import Glibc

/// A symbolic link met while walking a path: what a caller needs to judge whether following it is safe.
public struct SymbolicLinkStep: Equatable, Sendable {
    /// The link's path as walked (earlier links already replaced by their targets).
    public let path: String
    /// The link itself, not followed: its owner chose where it points.
    public let link: FileStatus
    /// The path of the directory holding the link.
    public let directoryPath: String
    /// The directory holding the link: whoever may write it may replace the link.
    public let directory: FileStatus
    /// Where the link points, as stored (relative to `directoryPath` unless absolute).
    public let target: String
}

/// Why `DirectoryHandle(walking:createMissing:follow:)` did not open the directory.
public enum PathWalkError: Error, Equatable, Sendable {
    /// A system call failed on `path` (the path walked up to the failing component).
    case system(path: String, SystemError)
    /// A missing directory could not be created at `path`.
    case createDirectory(path: String, SystemError)
    /// `path` exists and is neither a directory nor a symbolic link.
    case notADirectory(path: String)
    /// The caller declined to follow this link.
    case refusedLink(SymbolicLinkStep)

    /// The failed call's error, when a call failed.
    public var systemError: SystemError? {
        switch self {
        case .system(_, let error), .createDirectory(_, let error): error
        case .notADirectory, .refusedLink: nil
        }
    }
}

extension DirectoryHandle {
    /// The most symbolic links one walk follows (the kernel's own limit): more is ELOOP, so a loop ends.
    public static let maximumLinksFollowed = 40

    /// Opens the directory at `path`, walking it one component at a time from `/` (or the working directory
    /// for a relative path) with path-only descriptors, so that no symbolic link is followed unseen.
    ///
    /// Each link met, the last component's included, is passed to `follow`; it is followed only when that
    /// returns true (its target replaces it; an absolute one restarts the walk at `/`), otherwise the walk
    /// stops with `.refusedLink`. Because every step is taken relative to the directory just checked, a link
    /// swapped in after the check is met (and judged) rather than followed. Missing components are created
    /// with `createMissing` permissions (narrowed by the umask) when given, after the links leading to them
    /// were accepted. `.` is skipped and `..` is the parent of the directory reached so far. Walking needs
    /// search permission on the way (as the kernel's own walk does); the result is opened for reading.
    public init(walking path: String, createMissing permissions: UInt32? = nil,
                follow: (SymbolicLinkStep) -> Bool) throws(PathWalkError)
    {
        guard !path.isEmpty else { throw .system(path: path, SystemError("open ''", errno: ENOENT)) }
        let absolute = path.hasPrefix("/")
        var walked = absolute ? "/" : "."
        var current = try Self.pathDescriptor(AT_FDCWD, walked, shown: walked)
        // Components still to walk, the next one last.
        var pending = Array(Self.components(of: path).reversed())
        var linksFollowed = 0
        var justCreated = false
        while let name = pending.popLast() {
            if name == "." { continue }
            let here = Self.join(walked, name)
            let child = cw_open_path_directory(current.fd, name)
            if child >= 0 {
                current = DirectoryHandle(descriptor: child)
                walked = here
                justCreated = false
                continue
            }
            let saved = lastErrno()
            switch saved {
            case ENOENT where permissions != nil && !justCreated:
                if mkdirat(current.fd, name, mode_t(permissions ?? 0)) != 0 {
                    let failure = lastErrno()
                    // Made meanwhile by another process: opening it decides whether it is usable.
                    if failure != EEXIST { throw .createDirectory(path: here, SystemError("mkdir \(here)", errno: failure)) }
                }
                justCreated = true
                pending.append(name)
            case ELOOP, ENOTDIR:
                let status: FileStatus
                do { status = try current.status(of: name) } catch { throw .system(path: here, error) }
                guard status.kind == .symbolicLink else { throw .notADirectory(path: here) }
                linksFollowed += 1
                guard linksFollowed <= Self.maximumLinksFollowed else {
                    throw .system(path: here, SystemError("open \(path)", errno: ELOOP))
                }
                let target = try Self.linkTarget(current.fd, name, shown: here)
                let directory: FileStatus
                do { directory = try current.status() } catch { throw .system(path: walked, error) }
                let step = SymbolicLinkStep(path: here, link: status, directoryPath: walked, directory: directory, target: target)
                guard follow(step) else { throw .refusedLink(step) }
                // An empty target names nothing (the kernel says ENOENT too).
                guard !target.isEmpty else { throw .system(path: here, SystemError("readlink \(here)", errno: ENOENT)) }
                if target.hasPrefix("/") {
                    current = try Self.pathDescriptor(AT_FDCWD, "/", shown: "/")
                    walked = "/"
                }
                pending.append(contentsOf: Self.components(of: target).reversed())
                justCreated = false
            default:
                throw .system(path: here, SystemError("open \(here)", errno: saved))
            }
        }
        // Path-only descriptors can neither list nor sync: open the directory reached for reading.
        let fd = retryingOnEINTR { openat(current.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw .system(path: walked, SystemError("open \(walked)", errno: lastErrno())) }
        self.init(descriptor: fd)
    }

    /// A path-only descriptor for `name` relative to `directory`.
    private static func pathDescriptor(_ directory: Int32, _ name: String, shown: String) throws(PathWalkError) -> DirectoryHandle {
        let fd = cw_open_path_directory(directory, name)
        guard fd >= 0 else { throw .system(path: shown, SystemError("open \(shown)", errno: lastErrno())) }
        return DirectoryHandle(descriptor: fd)
    }

    /// The target of link `name` in `directory` (`readlinkat`), read whole however long it is.
    private static func linkTarget(_ directory: Int32, _ name: String, shown: String) throws(PathWalkError) -> String {
        var capacity = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let length = buffer.withUnsafeMutableBytes { readlinkat(directory, name, $0.baseAddress!.assumingMemoryBound(to: CChar.self), capacity) }
            guard length >= 0 else { throw .system(path: shown, SystemError("readlink \(shown)", errno: lastErrno())) }
            // A full buffer may be a cut: read again with more room (PATH_MAX bounds what the kernel stores).
            if length < capacity {
                // Paths here are Strings: a target that is not UTF-8 could only be followed to another name.
                guard let target = String(validating: buffer[..<length], as: UTF8.self) else {
                    throw .system(path: shown, SystemError("readlink \(shown) (target not UTF-8)", errno: EILSEQ))
                }
                return target
            }
            capacity *= 2
        }
    }

    /// The non-empty components of a path, in order.
    private static func components(of path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// `directory/name` for messages, without doubling the slash after `/` or showing a leading `./`.
    private static func join(_ directory: String, _ name: String) -> String {
        directory == "/" ? "/" + name : directory == "." ? name : directory + "/" + name
    }
}
