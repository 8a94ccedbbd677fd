// SpoolError.swift — what can go wrong with the spool (writing, reading, claiming, quarantining), one case
// per step, each carrying the spool path and the system's error, with a message a person can act on.
import CrashwatchSystem

/// A failed spool operation: which step failed, on which spool (and file), and the system's reason.
public enum SpoolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The spool directory (or a parent) could not be created.
    case createDirectory(path: String, SystemError)
    /// The spool directory exists but could not be opened or inspected.
    case openDirectory(path: String, SystemError)
    /// A symbolic link on the spool's path (`link`) belongs to a user who is neither root nor the one running
    /// crashwatch, so that user chose where the spool is; crashwatch does not follow it.
    case untrustedLink(path: String, link: String, owner: UInt32)
    /// A symbolic link on the spool's path (`link`) is in a directory another user could change — owned by
    /// someone other than root or this user (`owner`), or writable by group or others without the sticky
    /// bit — so the link could be swapped; crashwatch does not follow it.
    case unsafeLinkDirectory(path: String, link: String, directory: String, owner: UInt32, permissions: UInt32)
    /// The spool path exists and is not a directory.
    case notADirectory(path: String)
    /// Group or others may write the spool and the sticky bit is not set, so they could replace reports.
    case unsafePermissions(path: String, permissions: UInt32)
    /// The directory (the spool, `.claims` or `.quarantine`) belongs to a user who is neither root nor the
    /// one running crashwatch, so that user could swap its entries; crashwatch does not use it.
    case untrustedOwner(path: String, owner: UInt32)
    /// The spool's file system has less room than a report needs (`available` bytes free).
    case noSpace(path: String, available: UInt64)
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
    /// No report (claimed or not, as the operation says) has an id that starts with `id`.
    case noSuchReport(spool: String, id: String)
    /// More than one report id starts with `prefix`; `count` is how many.
    case ambiguous(spool: String, prefix: String, count: Int)
    /// A report id (or prefix) given by a caller holds something other than hexadecimal digits and `-`.
    case invalidID(spool: String, id: String)
    /// A file name given by a caller is not a report file name (so it could name something outside the spool).
    case invalidName(spool: String, name: String)
    /// The entry is a symbolic link, directory, FIFO, socket or device, not a report file; it was not opened.
    case notARegularFile(spool: String, name: String, kind: FileKind)
    /// A report owned by another user whose name, owner and content do not agree (see `Spool.isTrustworthy`):
    /// possibly planted; it is not claimed.
    case disagreeingReport(spool: String, name: String, owner: UInt32)
    /// The report is larger than the reader allowed.
    case tooLarge(spool: String, name: String, bytes: Int64, limit: Int)
    /// A report (or claimed report, or quarantine reason) could not be read.
    case readReport(spool: String, name: String, SystemError)
    /// `.claims`, `.quarantine` or `.attempts` (`name`) in the spool is a symbolic link or not a directory;
    /// crashwatch does not use it.
    case unsafeSubdirectory(spool: String, name: String, kind: FileKind)
    /// `.claims`, `.quarantine` or `.attempts` (`name`) could not be created, opened or listed.
    case openSubdirectory(spool: String, name: String, SystemError)
    /// The identity (pid and start time) of the process that would hold a claim could not be read.
    case holderIdentity(spool: String, pid: Int32, SystemError)
    /// A report could not be moved into `.claims` (or a stale claim taken over).
    case claimReport(spool: String, name: String, SystemError)
    /// The report is claimed by another process that is still alive, so this one may not take, ack or release it.
    case claimedByAnother(spool: String, name: String, pid: Int32)
    /// The report is a minimal one its writer is about to replace with the full report: not claimable yet.
    case reportPending(spool: String, name: String)
    /// The report is in the spool but nobody claimed it, so there is nothing to acknowledge or release.
    case notClaimed(spool: String, name: String)
    /// The claim is gone: acknowledged or released already, or taken over after its holder was judged dead.
    case claimLost(spool: String, name: String)
    /// A claimed report could not be removed after acknowledgement.
    case acknowledgeReport(spool: String, name: String, SystemError)
    /// A claimed report could not be renamed back into the spool.
    case releaseReport(spool: String, name: String, SystemError)
    /// A file could not be moved into `.quarantine`.
    case quarantineFile(spool: String, name: String, SystemError)
    /// The file was quarantined, but its `.reason` file could not be written.
    case writeQuarantineReason(spool: String, name: String, SystemError)
    /// A report's record of failed delivery attempts (`.attempts/<name>`) could not be written.
    case writeAttempts(spool: String, name: String, SystemError)
    /// The group index (`.groups/index`) could not be locked, read or written.
    case updateGroups(spool: String, SystemError)

    /// The spool directory the error is about.
    public var spool: String {
        switch self {
        case .createDirectory(let path, _), .openDirectory(let path, _), .untrustedLink(let path, _, _),
             .unsafeLinkDirectory(let path, _, _, _, _),
             .notADirectory(let path), .unsafePermissions(let path, _), .untrustedOwner(let path, _), .noSpace(let path, _):
            path
        case .createTemporaryFile(let spool, _, _), .setPermissions(let spool, _, _), .writeReport(let spool, _),
             .syncReport(let spool, _), .publishReport(let spool, _, _), .syncDirectory(let spool, _),
             .listDirectory(let spool, _), .removeFile(let spool, _, _), .noSuchReport(let spool, _),
             .ambiguous(let spool, _, _), .invalidID(let spool, _), .invalidName(let spool, _),
             .notARegularFile(let spool, _, _), .disagreeingReport(let spool, _, _), .tooLarge(let spool, _, _, _), .readReport(let spool, _, _),
             .unsafeSubdirectory(let spool, _, _), .openSubdirectory(let spool, _, _),
             .holderIdentity(let spool, _, _), .claimReport(let spool, _, _), .claimedByAnother(let spool, _, _),
             .reportPending(let spool, _),
             .notClaimed(let spool, _), .claimLost(let spool, _), .acknowledgeReport(let spool, _, _),
             .releaseReport(let spool, _, _), .quarantineFile(let spool, _, _),
             .writeQuarantineReason(let spool, _, _), .writeAttempts(let spool, _, _), .updateGroups(let spool, _):
            spool
        }
    }

    /// The underlying system error, when a system call failed.
    public var systemError: SystemError? {
        switch self {
        case .createDirectory(_, let error), .openDirectory(_, let error), .createTemporaryFile(_, _, let error),
             .setPermissions(_, _, let error), .writeReport(_, let error), .syncReport(_, let error),
             .publishReport(_, _, let error), .syncDirectory(_, let error), .listDirectory(_, let error),
             .removeFile(_, _, let error), .readReport(_, _, let error), .openSubdirectory(_, _, let error),
             .holderIdentity(_, _, let error), .claimReport(_, _, let error), .acknowledgeReport(_, _, let error),
             .releaseReport(_, _, let error), .quarantineFile(_, _, let error), .writeQuarantineReason(_, _, let error),
             .writeAttempts(_, _, let error), .updateGroups(_, let error):
            error
        case .untrustedLink, .unsafeLinkDirectory, .notADirectory, .unsafePermissions, .untrustedOwner, .noSpace,
             .noSuchReport, .ambiguous, .invalidID, .invalidName,
             .notARegularFile, .disagreeingReport, .tooLarge, .unsafeSubdirectory, .claimedByAnother, .reportPending,
             .notClaimed, .claimLost:
            nil
        }
    }

    /// One line for a person, e.g. `cannot write report to spool /x: No space left on device`.
    public var description: String {
        switch self {
        case .createDirectory(let path, let error): "cannot create spool \(path): \(error)"
        case .openDirectory(let path, let error): "cannot open spool \(path): \(error.reason)"
        case .untrustedLink(let path, let link, let owner):
            "spool \(path): symbolic link \(link) belongs to uid \(owner), neither root nor this user (uid \(effectiveUserID)); "
                + "refusing to follow it (give the real directory, or make the link root's)"
        case .unsafeLinkDirectory(let path, let link, let directory, let owner, let permissions):
            "spool \(path): symbolic link \(link) is in \(directory), which "
                + (Spool.isTrustedWriter(owner) ? "group or others may write without the sticky bit (mode \(octal(permissions)))"
                                                : "belongs to uid \(owner), neither root nor this user (uid \(effectiveUserID))")
                + ", so another user could replace the link; refusing to follow it (give the real directory)"
        case .notADirectory(let path): "spool \(path) is not a directory"
        case .unsafePermissions(let path, let permissions):
            "spool \(path) is writable by group or others without the sticky bit (mode \(octal(permissions))); "
                + "refusing to use it (chmod go-w or chmod +t)"
        case .noSpace(let path, let available):
            "spool \(path) has \(available >> 10) KiB free, less than a report needs (\(Spool.minimumFreeBytes >> 10) KiB)"
        case .untrustedOwner(let path, let owner):
            "\(path) belongs to uid \(owner), neither root nor this user (uid \(effectiveUserID)); "
                + "refusing to use it (chown it to root or to this user)"
        case .createTemporaryFile(let spool, let name, let error): "cannot create \(name) in spool \(spool): \(error.reason)"
        case .setPermissions(let spool, let name, let error):
            "cannot set permissions of \(name) in spool \(spool): \(error.reason)"
        case .writeReport(let spool, let error): "cannot write report to spool \(spool): \(error.reason)"
        case .syncReport(let spool, let error): "cannot flush report to disk in spool \(spool): \(error.reason)"
        case .publishReport(let spool, let name, let error): "cannot rename report to \(name) in spool \(spool): \(error.reason)"
        case .syncDirectory(let spool, let error):
            "report written to spool \(spool), but the directory could not be flushed to disk: \(error.reason)"
        case .listDirectory(let spool, let error): "cannot list spool \(spool): \(error.reason)"
        case .removeFile(let spool, let name, let error): "cannot remove \(name) from spool \(spool): \(error.reason)"
        case .noSuchReport(let spool, let id): "no report with id \(id) in spool \(spool)"
        case .ambiguous(let spool, let prefix, let count):
            "\(count) reports in spool \(spool) have ids starting with \(prefix); give more of the id"
        case .invalidID(let spool, let id): "\(quoted(id)) is not a report id (hexadecimal digits and -) for spool \(spool)"
        case .invalidName(let spool, let name): "\(quoted(name)) is not a report file name in spool \(spool)"
        case .notARegularFile(let spool, let name, let kind):
            kind == .symbolicLink
                ? "\(name) in spool \(spool) is a symbolic link; crashwatch never follows links in the spool"
                : "\(name) in spool \(spool) is not a regular file (\(kindWords(kind))); not opened"
        case .disagreeingReport(let spool, let name, let owner):
            "\(name) in spool \(spool) belongs to uid \(owner), and its content does not agree with its name and "
                + "owner (report id, capture time, the process's uid); not claimed"
        case .tooLarge(let spool, let name, let bytes, let limit):
            "\(name) in spool \(spool) has \(bytes) bytes, more than the limit of \(limit)"
        case .readReport(let spool, let name, let error): "cannot read \(name) in spool \(spool): \(error.reason)"
        case .unsafeSubdirectory(let spool, let name, let kind):
            "\(spool)/\(name) is \(kindWords(kind)), not a directory; refusing to use it (remove it)"
        case .openSubdirectory(let spool, let name, let error): "cannot open \(name) in spool \(spool): \(error.reason)"
        case .holderIdentity(let spool, let pid, let error):
            "cannot read the start time of pid \(pid) to claim reports in spool \(spool): \(error.reason)"
        case .claimReport(let spool, let name, let error): "cannot claim \(name) in spool \(spool): \(error.reason)"
        case .claimedByAnother(let spool, let name, let pid):
            "\(name) in spool \(spool) is claimed by pid \(pid), which is still running"
        case .reportPending(let spool, let name):
            "\(name) in spool \(spool) is a minimal report its crashwatch is replacing with the full one; claim it once that is written"
        case .notClaimed(let spool, let name): "\(name) in spool \(spool) is not claimed"
        case .claimLost(let spool, let name):
            "the claim on \(name) in spool \(spool) is gone (acknowledged, released, or taken over)"
        case .acknowledgeReport(let spool, let name, let error):
            "cannot remove acknowledged \(name) from spool \(spool): \(error.reason)"
        case .releaseReport(let spool, let name, let error): "cannot return \(name) to spool \(spool): \(error.reason)"
        case .quarantineFile(let spool, let name, let error):
            "cannot move \(name) to the quarantine of spool \(spool): \(error.reason)"
        case .writeQuarantineReason(let spool, let name, let error):
            "\(name) was quarantined in spool \(spool), but its reason could not be written: \(error.reason)"
        case .writeAttempts(let spool, let name, let error):
            "cannot record the delivery attempts of \(name) in spool \(spool): \(error.reason)"
        case .updateGroups(let spool, let error): "cannot update the group index of spool \(spool): \(error)"
        }
    }
}

/// A file kind as a person says it: `a symbolic link`, `a regular file`.
func kindWords(_ kind: FileKind) -> String {
    switch kind {
    case .regular: "a regular file"
    case .directory: "a directory"
    case .symbolicLink: "a symbolic link"
    case .other: "a FIFO, socket or device"
    }
}

/// Text from a caller, quoted and cut short for a message, with control characters shown as `?`.
func quoted(_ text: String) -> String {
    let shown = String(text.unicodeScalars.prefix(80).map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
    return "\"\(shown)\(text.unicodeScalars.count > 80 ? "…" : "")\""
}

/// Permission bits as four octal digits, e.g. `0777` or `1777`.
func octal(_ permissions: UInt32) -> String {
    let digits = String(permissions & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
