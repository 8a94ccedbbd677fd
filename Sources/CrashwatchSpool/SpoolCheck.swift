// SpoolCheck.swift — a spool proved usable before anything is written to it: `run` checks its spool before
// the program starts (a spool that cannot take a report is named then, not at the first crash), and falls
// back to a runtime spool when it cannot.
import CrashwatchSystem
import FoundationEssentials

extension Spool {
    /// The least free space a spool must have to take a report (a 64-thread full report is ~330 KB).
    public static let minimumFreeBytes: UInt64 = 1 << 20

    /// Opens the spool at `path` for writing reports, creating it when missing, and proves it: trusted (as
    /// every open checks), a file can be created and removed in it, and its file system has at least
    /// `minimumFreeBytes` free. Throws the step that failed.
    public static func openForWriting(_ path: String) throws(SpoolError) -> Spool {
        let spool = try Spool(path: path, create: true)
        let probe = ".tmp-check-\(SelfProcess.pid)-\(UUID().uuidString.lowercased())"
        do {
            _ = try spool.directory.createFile(named: probe, permissions: 0o600)
        } catch {
            throw .createTemporaryFile(spool: spool.path, name: probe, error)
        }
        do throws(SystemError) { try spool.directory.removeFile(named: probe) } catch {
            throw .removeFile(spool: spool.path, name: probe, error)
        }
        let available: UInt64
        do { available = try spool.directory.availableBytes() } catch { throw .openDirectory(path: spool.path, error) }
        guard available >= minimumFreeBytes else { throw .noSpace(path: spool.path, available: available) }
        return spool
    }
}

extension SpoolLocation {
    /// Where `run` writes reports when its spool cannot be used: `/run/crashwatch/reports` as root, else
    /// `$XDG_RUNTIME_DIR/crashwatch/reports`; nil without a runtime directory. Reports there do not outlive a
    /// reboot, but a crash is not lost for a mistyped path or a missing `ReadWritePaths=`.
    public static func fallback(environment: [String: String], isRoot: Bool) -> String? {
        if isRoot { return "/run/crashwatch/reports" }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/crashwatch/reports"
    }
}
