// Spool.swift — the spool directory: opened safely, reports written atomically (temporary file, fsync,
// rename, fsync the directory) and listed by name alone.
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
/// Opening never follows a symbolic link as the spool itself and refuses a directory that group or others
/// may write without the sticky bit. Every file operation is relative to the open directory and never
/// follows a link. Safe to use from several threads; several processes may use one spool at once.
public final class Spool: Sendable {
    /// Permissions of a spool directory (and its parents) that `open` creates, before the umask.
    public static let directoryPermissions: UInt32 = 0o750
    /// Permissions of every report file, set exactly whatever the umask.
    public static let reportPermissions: UInt32 = 0o640

    /// The spool's path as given, without trailing slashes.
    public let path: String
    /// The open spool directory.
    let directory: DirectoryHandle

    /// Opens the spool at `path`, creating it and its parents (0750) when missing and `create` is true.
    public init(path: String, create: Bool = true) throws(SpoolError) {
        // A trailing slash makes the kernel follow a final symbolic link even with O_NOFOLLOW.
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let path = String(trimmed)
        self.path = path
        self.directory = try Self.openDirectory(path, create: create)
        let status: FileStatus
        do { status = try directory.status() } catch { throw .openDirectory(path: path, error) }
        if status.isWritableByGroupOrOthers && !status.isSticky {
            throw .unsafePermissions(path: path, permissions: status.permissions)
        }
    }

    /// Opens (and if allowed creates) the directory, telling a symbolic link or a non-directory apart.
    private static func openDirectory(_ path: String, create: Bool) throws(SpoolError) -> DirectoryHandle {
        do {
            return try DirectoryHandle(openingPath: path)
        } catch let error where error.isNotFound && create {
            do {
                try FileSystem.createDirectories(path, permissions: directoryPermissions)
            } catch {
                throw .createDirectory(path: path, error)
            }
        } catch let error where error.isNotADirectoryOrLink {
            switch (try? FileSystem.status(ofPath: path))?.kind {
            case .symbolicLink: throw .symbolicLink(path: path)
            case .directory, nil: throw .openDirectory(path: path, error)
            case .regular, .other: throw .notADirectory(path: path)
            }
        } catch {
            throw .openDirectory(path: path, error)
        }
        do {
            return try DirectoryHandle(openingPath: path)
        } catch let error where error.isNotADirectoryOrLink {
            // Replaced between mkdir and open: the same checks as above, without creating again.
            return try openDirectory(path, create: false)
        } catch {
            throw .openDirectory(path: path, error)
        }
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
    @discardableResult
    public func write(bytes: some Collection<UInt8>, name: ReportFileName) throws(SpoolError) -> String {
        let temporary = name.temporaryName
        let file: WritableFile
        do {
            file = try directory.createFile(named: temporary, permissions: Self.reportPermissions)
        } catch {
            throw .createTemporaryFile(spool: path, name: temporary, error)
        }
        do throws(SpoolError) {
            do { try file.setPermissions(Self.reportPermissions) } catch {
                throw .setPermissions(spool: path, name: temporary, error)
            }
            do { try file.writeAll(bytes) } catch { throw .writeReport(spool: path, error) }
            do { try file.synchronize() } catch { throw .syncReport(spool: path, error) }
            do { try file.close() } catch { throw .writeReport(spool: path, error) }
            do { try directory.rename(temporary, to: name.text) } catch {
                throw .publishReport(spool: path, name: name.text, error)
            }
        } catch {
            try? directory.removeFile(named: temporary)
            throw error
        }
        do { try directory.synchronize() } catch { throw .syncDirectory(spool: path, error) }
        return path(of: name)
    }

    /// The reports in the spool, oldest first, found by name alone (`readdir` and `fstatat`, no parsing).
    ///
    /// Entries that are not well-formed report names, not regular files (links, directories) or that
    /// vanish meanwhile are skipped: they never stop a listing.
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

    /// Every entry name in the spool directory, except `.` and `..`.
    func entryNames() throws(SpoolError) -> [String] {
        do { return try directory.entryNames() } catch { throw .listDirectory(spool: path, error) }
    }

    /// The path of entry `name` in the spool.
    func join(_ name: String) -> String { path == "/" ? "/\(name)" : "\(path)/\(name)" }
}
