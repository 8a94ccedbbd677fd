// SpoolError.swift — what can go wrong with the spool, one case per step, each carrying the spool path
// and the system's error, with a message a person can act on.
import CrashwatchSystem

/// A failed spool operation: which step failed, on which spool (and file), and the system's reason.
public enum SpoolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The spool directory (or a parent) could not be created.
    case createDirectory(path: String, SystemError)
    /// The spool directory exists but could not be opened or inspected.
    case openDirectory(path: String, SystemError)
    /// The spool path is a symbolic link; crashwatch does not follow one there.
    case symbolicLink(path: String)
    /// The spool path exists and is not a directory.
    case notADirectory(path: String)
    /// Group or others may write the spool and the sticky bit is not set, so they could replace reports.
    case unsafePermissions(path: String, permissions: UInt32)
    /// The temporary file for a report could not be created (an entry by that name may already exist).
    case createTemporaryFile(spool: String, name: String, SystemError)
    /// The temporary file's permissions could not be set.
    case setPermissions(spool: String, name: String, SystemError)
    /// The report's bytes could not be written (or the file could not be closed).
    case writeReport(spool: String, SystemError)
    /// The report could not be flushed to disk.
    case syncReport(spool: String, SystemError)
    /// The complete temporary file could not be renamed to the report's name.
    case publishReport(spool: String, name: String, SystemError)
    /// The report is in place but the directory could not be flushed, so it may not survive a power loss.
    case syncDirectory(spool: String, SystemError)
    /// The spool's entries could not be listed.
    case listDirectory(spool: String, SystemError)
    /// A file could not be removed from the spool.
    case removeFile(spool: String, name: String, SystemError)

    /// The spool directory the error is about.
    public var spool: String {
        switch self {
        case .createDirectory(let path, _), .openDirectory(let path, _), .symbolicLink(let path),
             .notADirectory(let path), .unsafePermissions(let path, _):
            path
        case .createTemporaryFile(let spool, _, _), .setPermissions(let spool, _, _), .writeReport(let spool, _),
             .syncReport(let spool, _), .publishReport(let spool, _, _), .syncDirectory(let spool, _),
             .listDirectory(let spool, _), .removeFile(let spool, _, _):
            spool
        }
    }

    /// The underlying system error, when a system call failed.
    public var systemError: SystemError? {
        switch self {
        case .createDirectory(_, let error), .openDirectory(_, let error), .createTemporaryFile(_, _, let error),
             .setPermissions(_, _, let error), .writeReport(_, let error), .syncReport(_, let error),
             .publishReport(_, _, let error), .syncDirectory(_, let error), .listDirectory(_, let error),
             .removeFile(_, _, let error):
            error
        case .symbolicLink, .notADirectory, .unsafePermissions:
            nil
        }
    }

    /// One line for a person, e.g. `cannot write report to spool /x: No space left on device`.
    public var description: String {
        switch self {
        case .createDirectory(let path, let error):
            "cannot create spool \(path): \(error)"
        case .openDirectory(let path, let error):
            "cannot open spool \(path): \(error.reason)"
        case .symbolicLink(let path):
            "spool \(path) is a symbolic link; crashwatch does not follow links there (give the real directory)"
        case .notADirectory(let path):
            "spool \(path) is not a directory"
        case .unsafePermissions(let path, let permissions):
            "spool \(path) is writable by group or others without the sticky bit (mode \(octal(permissions))); "
                + "refusing to use it (chmod go-w or chmod +t)"
        case .createTemporaryFile(let spool, let name, let error):
            "cannot create \(name) in spool \(spool): \(error.reason)"
        case .setPermissions(let spool, let name, let error):
            "cannot set permissions of \(name) in spool \(spool): \(error.reason)"
        case .writeReport(let spool, let error):
            "cannot write report to spool \(spool): \(error.reason)"
        case .syncReport(let spool, let error):
            "cannot flush report to disk in spool \(spool): \(error.reason)"
        case .publishReport(let spool, let name, let error):
            "cannot rename report to \(name) in spool \(spool): \(error.reason)"
        case .syncDirectory(let spool, let error):
            "report written to spool \(spool), but the directory could not be flushed to disk: \(error.reason)"
        case .listDirectory(let spool, let error):
            "cannot list spool \(spool): \(error.reason)"
        case .removeFile(let spool, let name, let error):
            "cannot remove \(name) from spool \(spool): \(error.reason)"
        }
    }
}

/// Permission bits as four octal digits, e.g. `0777` or `1777`.
func octal(_ permissions: UInt32) -> String {
    let digits = String(permissions & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
