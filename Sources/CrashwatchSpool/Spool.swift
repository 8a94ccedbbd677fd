// Spool.swift — the spool directory: opened safely (symbolic links on its path followed only when root or
// this user made them, in directories no one else can change), reports written atomically (temporary file,
// fsync, rename, fsync the directory) and listed by name alone; its `.claims` and `.quarantine`
// subdirectories opened without following links.
import CrashwatchSystem

/// One report in the spool as a listing sees it: its parsed name and its size, without reading it.
public struct SpoolEntry: Equatable, Sendable {
    /// The report's file name.
    public let name: ReportFileName
    /// The file's size in bytes.
    public let bytes: Int64

    /// An entry for a report file of `bytes` bytes.
    public init(name: ReportFileName, bytes: Int64) {
        self.name = name
        self.bytes = bytes
    }
}

/// An open spool directory shared by writers (supervisors) and readers (shippers, `list`, `prune`).
///
/// Layout: reports (`<time>-<pid>-<tag>-<id>.json`, mode 0640) and reports being written (`.tmp-<id>`) in
/// the directory itself; reports readers took in `.claims/<report name>.<holder>` (see `claim(limit:holder:)`);
/// files set aside in `.quarantine/<report name>` with `<report name>.reason` (see `quarantine(name:reason:now:)`);
/// the crash groups' index in `.groups/index` beside its lock file `.groups/lock` (see `recordInGroups`).
/// Opening follows a symbolic link on the spool's path only when no other user could have made or could
/// change it (see `linkProblem`), and refuses a directory owned by a user other than root or the caller, or
/// that group or others may write without the sticky bit; the same holds for `.claims` and `.quarantine`,
/// which are never links. Every file operation is relative to an open directory and never follows a
/// link, and every name or id a caller passes is validated first, so no operation can reach outside the
/// spool. Safe to use from several threads;
/// several processes may use one spool at once.
public final class Spool: Sendable {
    /// Permissions of a spool directory (and its parents) that `open` creates, before the umask.
    public static let directoryPermissions: UInt32 = 0o750
    /// Permissions of every report file, set exactly whatever the umask.
    public static let reportPermissions: UInt32 = 0o640
    /// The mode of a restricted report (`write(bytes:name:restricted:)`) outside a reader-group spool.
    public static let restrictedReportPermissions: UInt32 = 0o600

    /// The spool's path as given, without trailing slashes.
    public let path: String
    /// The open spool directory.
    let directory: DirectoryHandle

    /// Opens the spool at `path`, creating it and its parents (0750) when missing and `create` is true; a
    /// symbolic link on the way is followed only when `linkProblem` finds nothing wrong with it.
    public init(path: String, create: Bool = true) throws(SpoolError) {
        // One spelling per spool: `path` names it in messages and joins entry names.
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let path = String(trimmed)
        self.path = path
        self.directory = try Self.openDirectory(path, create: create)
        let status: FileStatus
        do { status = try directory.status() } catch { throw .openDirectory(path: path, error) }
        try Self.checkTrusted(status, path: path)
    }

    /// The name of the group whose members may read every report in a set-group-ID spool.
    public static let readerGroupName = "crashwatch"

    /// The group of services allowed to add reports to the packaged spool (an ACL entry on it: they may
    /// create reports but read none but their own; README "The spool").
    public static let writerGroupName = "crashwatch-writers"

    /// Refuses a directory (the spool, `.claims`, `.quarantine`) that someone else could rearrange: owned by
    /// a user other than root or this one, or writable by group or others without the sticky bit.
    public static func checkTrusted(_ status: FileStatus, path: String) throws(SpoolError) {
        guard isTrustedWriter(status.ownerID) else { throw .untrustedOwner(path: path, owner: status.ownerID) }
        if status.isWritableByGroupOrOthers && !status.isSticky {
            throw .unsafePermissions(path: path, permissions: status.permissions)
        }
    }

    /// Whether a file owned by `owner` may have been written by a crashwatch this spool trusts (root's or
    /// this user's); retention touches no other file, so no other user can make it delete or keep reports.
    public static func isTrustedWriter(_ owner: UInt32) -> Bool { owner == 0 || owner == effectiveUserID }

    /// The group a new report must be given, or nil when the one it was created with is right.
    ///
    /// In a set-group-ID spool a new file takes the directory's group; that is wanted only when the group is
    /// `readerGroupName` (the operators' group for reading reports). Any other group — say the spool's
    /// owner's — would let its members read reports of processes they could not see, so the report gets the
    /// writer's own effective group instead.
    private func reportGroupOverride() -> UInt32? {
        guard let status = try? directory.status(), status.isSetGroupID, status.groupID != effectiveGroupID,
              status.groupID != groupID(named: Self.readerGroupName)
        else { return nil }
        return effectiveGroupID
    }

    /// Opens (and if allowed creates) the directory, following only symbolic links `linkProblem` accepts.
    private static func openDirectory(_ path: String, create: Bool) throws(SpoolError) -> DirectoryHandle {
        do {
            return try DirectoryHandle(walking: path, createMissing: create ? directoryPermissions : nil) { step in
                linkProblem(step, spool: path) == nil
            }
        } catch {
            switch error {
            case .refusedLink(let step):
                // Only `linkProblem` refuses, so it names the reason.
                throw linkProblem(step, spool: path) ?? .untrustedLink(path: path, link: step.path, owner: step.link.ownerID)
            case .notADirectory(let component) where component == path:
                throw .notADirectory(path: path)
            case .notADirectory(let component):
                // A file where a directory on the way should be.
                throw .openDirectory(path: path, .notADirectory(component))
            case .createDirectory(_, let systemError):
                throw .createDirectory(path: path, systemError)
            case .system(_, let systemError):
                throw .openDirectory(path: path, systemError)
            }
        }
    }

    /// Why a symbolic link on the spool's path must not be followed, or nil when it may be.
    ///
    /// A link is followed only when no other user could have chosen or could change where it points: the link
    /// belongs to root or to this user, and so does the directory holding it, which group and others may not
    /// write unless it is sticky (then only the link's owner or the directory's can replace the link) — the
    /// rule `checkTrusted` applies to the spool itself. So systemd's `DynamicUser=` state directory
    /// (`/var/lib/NAME`, root's link to `private/NAME` in root's `/var/lib`) is accepted, and a link another
    /// user planted, or could swap, is refused before anything is opened or created through it.
    static func linkProblem(_ step: SymbolicLinkStep, spool: String) -> SpoolError? {
        guard isTrustedWriter(step.link.ownerID) else {
            return .untrustedLink(path: spool, link: step.path, owner: step.link.ownerID)
        }
        let directory = step.directory
        guard isTrustedWriter(directory.ownerID), !directory.isWritableByGroupOrOthers || directory.isSticky else {
            return .unsafeLinkDirectory(path: spool, link: step.path, directory: step.directoryPath,
                                        owner: directory.ownerID, permissions: directory.permissions)
        }
        return nil
    }

    /// The full path a report with this name has in the spool.
    public func path(of name: ReportFileName) -> String { join(name.text) }

    /// Writes a complete report atomically and returns its final path.
    ///
    /// The bytes go to `.tmp-<report id>` (created exclusively, never through a link), get mode 0640 and
    /// an fsync, and are then renamed to `name`; finally the directory is fsynced. Readers therefore only
    /// ever see complete reports. On any failure before the rename the temporary file is removed. An entry
    /// already under the final name (normally impossible: the name holds a fresh UUID) is replaced as an
    /// entry: a symbolic link there is replaced, never written through. When only the last step (fsync of
    /// the directory) fails, the report is in place and `.syncDirectory` is thrown.
    /// Call `prune(policy:now:)` afterwards to apply retention.
    ///
    /// `restricted`: the report of a process the kernel protects from its own user (setuid or setgid, file
    /// capabilities, not dumpable). As `fs.suid_dumpable` leaves a core of such a process to root alone, the
    /// report is readable by its writer alone (0600) — but in a spool whose group is `readerGroupName`, whose
    /// members are the operators trusted with every report (0640).
    @discardableResult
    public func write(bytes: some Collection<UInt8>, name: ReportFileName, restricted: Bool = false) throws(SpoolError) -> String {
        _ = try write(bytes: bytes, name: name, pending: false, restricted: restricted)
        return path(of: name)
    }

    /// Writes a report as `write(bytes:name:)` does, as one its writer is still to replace under the same
    /// name (a minimal report whose full report is being made): readers do not claim it — which would ship
    /// it and have the full one arrive as a second report with the same id — while the returned value lives.
    /// That is an exclusive `flock` on the file, held through the open descriptor: it goes when the value
    /// goes, and with the writer should it die, leaving the report claimable as it is.
    ///
    /// The report is published whole (readers never see part of it) and survives its writer's death, but it is
    /// not flushed to the device: a live crash's minimal report is written while the process is held, and the
    /// flushes, which guard only against a crash of the kernel (that the held process would not survive either),
    /// wait for the release: `synchronize(_:)`.
    public func writePending(bytes: some Collection<UInt8>, name: ReportFileName, restricted: Bool = false) throws(SpoolError) -> PendingReport {
        PendingReport(path: path(of: name), lock: try write(bytes: bytes, name: name, pending: true, restricted: restricted))
    }

    /// Flushes a pending report (`writePending`) and the spool directory that names it to the device.
    public func synchronize(_ pending: PendingReport) throws(SpoolError) {
        do { try pending.lock?.synchronize() } catch { throw .syncReport(spool: path, error) }
        do { try directory.synchronize() } catch { throw .syncDirectory(spool: path, error) }
    }

    /// Whether new reports take the operators' group `readerGroupName` (a set-group-ID spool of that group).
    private var hasReaderGroup: Bool {
        guard let status = try? directory.status(), status.isSetGroupID else { return false }
        return status.groupID == groupID(named: Self.readerGroupName)
    }

    private func write(bytes: some Collection<UInt8>, name: ReportFileName, pending: Bool, restricted: Bool) throws(SpoolError) -> OwnedDescriptor? {
        let temporary = name.temporaryName
        let permissions = restricted && !hasReaderGroup ? Self.restrictedReportPermissions : Self.reportPermissions
        do {
            return try directory.writeAtomically(bytes, named: name.text, temporaryName: temporary,
                                                 permissions: permissions, group: reportGroupOverride(), locked: pending,
                                                 flushed: !pending)
        } catch {
            switch error.step {
            case .createTemporary: throw .createTemporaryFile(spool: path, name: temporary, error.error)
            case .setAttributes: throw .setPermissions(spool: path, name: temporary, error.error)
            case .write: throw .writeReport(spool: path, error.error)
            case .synchronize: throw .syncReport(spool: path, error.error)
            case .rename: throw .publishReport(spool: path, name: name.text, error.error)
            case .synchronizeDirectory: throw .syncDirectory(spool: path, error.error)
            }
        }
    }

    /// Whether the report `name` is pending: its writer will replace it (`writePending`), so it is not claimed yet.
    public func isPending(_ name: ReportFileName) -> Bool {
        directory.isLocked(named: name.text)
    }

    /// The names of the unclaimed reports in the spool, oldest first, from `readdir` alone: no `stat`,
    /// no contents. An entry that is not a regular file is refused later, when it is read.
    public func reportNames() throws(SpoolError) -> [ReportFileName] {
        try entryNames().compactMap { ReportFileName(parsing: $0) }.sorted()
    }

    /// The unclaimed reports in the spool, oldest first, found by name alone (`readdir` and `fstatat`, no
    /// parsing of their contents); claimed ones are listed by `claims()`, quarantined ones by `quarantined()`.
    ///
    /// Entries that are not well-formed report names, not regular files (links, directories) or that
    /// vanish meanwhile are skipped: they never stop a listing. One `fstatat` each: `reportNames()` is
    /// the cheaper listing when sizes are not needed.
    public func reports() throws(SpoolError) -> [SpoolEntry] {
        var entries: [SpoolEntry] = []
        for name in try entryNames() {
            guard let parsed = ReportFileName(parsing: name),
                  let status = try? directory.status(of: name), status.kind == .regular
            else { continue }
            entries.append(SpoolEntry(name: parsed, bytes: status.size))
        }
        return entries.sorted { $0.name < $1.name }
    }

    /// The subdirectories the spool keeps beside its reports.
    enum Subdirectory: String {
        /// `.claims`: reports readers have taken.
        case claims = ".claims"
        /// `.quarantine`: files set aside as unreadable or corrupt.
        case quarantine = ".quarantine"
        /// `.attempts`: failed delivery attempts of reports a shipper will retry.
        case attempts = ".attempts"
        /// `.groups`: the group index and its lock file (Groups.swift).
        case groups = ".groups"
    }

    /// The error for a subdirectory entry that is `kind` instead of a directory.
    private func unsafe(_ which: Subdirectory, _ kind: FileKind) -> SpoolError {
        .unsafeSubdirectory(spool: path, name: which.rawValue, kind: kind)
    }

    /// Whether the subdirectory exists; a link or non-directory under its name is refused.
    func subdirectoryExists(_ which: Subdirectory) throws(SpoolError) -> Bool {
        let status: FileStatus
        do { status = try directory.status(of: which.rawValue) } catch let error where error.isNotFound {
            return false
        } catch {
            throw .openSubdirectory(spool: path, name: which.rawValue, error)
        }
        guard status.kind == .directory else { throw unsafe(which, status.kind) }
        return true
    }

    /// Opens a subdirectory (creating it when missing and `create` is true) without following a link.
    ///
    /// It is created with the spool's own permission bits less any for others (0750 for a spool crashwatch
    /// created, less the umask; 1770 in a 1777 spool), so whoever may take reports out of the spool may also
    /// claim or quarantine them, and a user who may only add reports cannot plant or swap entries there. A
    /// symbolic link or non-directory under its name is refused (`.unsafeSubdirectory`), and so
    /// is a directory owned by another user (`.untrustedOwner`) or that group or others may write without the
    /// sticky bit (`.unsafePermissions`).
    func openSubdirectory(_ which: Subdirectory, create: Bool) throws(SpoolError) -> DirectoryHandle {
        let name = which.rawValue
        var created: UInt32?
        if create {
            let permissions = ((try? directory.status())?.permissions ?? Self.directoryPermissions) & 0o1770
            do {
                try directory.createDirectory(named: name, permissions: permissions)
                created = permissions
            } catch let error where error.isAlreadyExisting {
                // Made by an earlier call or another process; opening decides whether it is usable.
            } catch {
                throw .openSubdirectory(spool: path, name: name, error)
            }
        }
        let handle: DirectoryHandle
        do { handle = try directory.openDirectory(named: name) } catch let error where error.isNotADirectoryOrLink {
            throw unsafe(which, (try? directory.status(of: name))?.kind ?? .other)
        } catch {
            throw .openSubdirectory(spool: path, name: name, error)
        }
        let status: FileStatus
        do { status = try handle.status() } catch { throw .openSubdirectory(spool: path, name: name, error) }
        try Self.checkTrusted(status, path: join(name))
        // The umask of whoever made it (a service with UMask=0027) must not take the group's write bit away:
        // the spool's other readers would then be unable to claim, quarantine or record attempts.
        if let created, status.permissions != created { try? handle.setPermissions(created) }
        return handle
    }

    /// Reads entry `name` of `directory` (the spool or a subdirectory) whole, refusing links, non-regular
    /// files and more than `maxBytes`; `shown` names it in errors.
    func readEntry(_ name: String, in directory: borrowing DirectoryHandle, maxBytes: Int, shown: String? = nil)
        throws(SpoolError) -> [UInt8]
    {
        let shown = shown ?? name
        let result: FileReadResult
        do { result = try directory.readFile(named: name, maxBytes: maxBytes) } catch {
            throw .readReport(spool: path, name: shown, error)
        }
        switch result {
        case .contents(let bytes): return bytes
        case .notRegular(let kind): throw .notARegularFile(spool: path, name: shown, kind: kind)
        case .tooLarge(let bytes): throw .tooLarge(spool: path, name: shown, bytes: bytes, limit: maxBytes)
        }
    }

    /// Every entry name in the spool directory, except `.` and `..`.
    func entryNames() throws(SpoolError) -> [String] {
        do { return try directory.entryNames() } catch { throw .listDirectory(spool: path, error) }
    }

    /// The path of entry `name` in the spool.
    func join(_ name: String) -> String { path == "/" ? "/\(name)" : "\(path)/\(name)" }
}

/// A report its writer published and will replace (`Spool.writePending`): not claimed while this lives.
public struct PendingReport: Sendable {
    /// The report's path in the spool.
    public let path: String
    /// The published file's descriptor, holding an exclusive `flock` on it.
    let lock: OwnedDescriptor?
}
