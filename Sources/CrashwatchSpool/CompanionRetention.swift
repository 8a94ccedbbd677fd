// CompanionRetention.swift — retention for the files kept beside reports (`core-handler --keep-core DIR`:
// `<report name>.core.gz`), by the spool's trust model; their content is never read.
import CrashwatchModel
import CrashwatchSystem

/// Retention for files crashwatch keeps beside its reports under the report's name with another suffix, in a
/// directory of their own (`core-handler --keep-core DIR`: `<report name>.core.gz`), by the spool's trust
/// model: the directory must be one no other user could rearrange (`Spool.checkTrusted`), and only regular
/// files owned by root or this user (`Spool.isTrustedWriter`) count and are removed — a name is a hint, and
/// what another user planted (future-dated names, to evict the real files) is left alone and never counted.
/// Their content is not read: unlike a report, a kept file of another user is never taken as crashwatch's.
public enum CompanionRetention {
    /// What `prune` did: the names removed, the names left alone as another user's, and what failed.
    public struct Result: Equatable, Sendable {
        public var removed: [String] = []
        public var foreign: [String] = []
        public var failures: [String] = []
    }

    /// Refuses `directory` (at `path`) as a place for kept files when someone else could rearrange it: owned
    /// by a user other than root or this one, or writable by group or others without the sticky bit.
    public static func checkTrusted(_ directory: borrowing DirectoryHandle, path: String) throws(SpoolError) {
        let status: FileStatus
        do { status = try directory.status() } catch { throw .openDirectory(path: path, error) }
        try Spool.checkTrusted(status, path: path)
    }

    /// Keeps the newest `count` (at least 1) of the files of `directory` named `<report name without .json><suffix>`,
    /// crashwatch's own only, removing the older ones (by the report time in their names); `protecting` (the
    /// one just kept) counts among them and is never removed, whatever its name says.
    public static func prune(_ directory: borrowing DirectoryHandle, suffix: String, keep count: Int,
                             protecting: ReportFileName? = nil) -> Result
    {
        var result = Result()
        guard let names = try? directory.entryNames() else { return result }
        var entryName: [ReportFileName: String] = [:]
        let (files, foreign) = Spool.retentionCandidates(names, in: directory, parse: { name in
            guard name.hasSuffix(suffix), let parsed = ReportFileName(parsing: name.dropLast(suffix.count) + ".json") else { return nil }
            entryName[parsed] = name
            return parsed
        }) { _, status in Spool.isTrustedWriter(status.ownerID) }
        result.foreign = foreign
        let others = files.map(\.name).filter { $0 != protecting }.sorted()
        let room = max(count, 1) - (others.count < files.count ? 1 : 0)
        for file in others.dropLast(room) {
            guard let name = entryName[file] else { continue }
            do {
                try directory.removeFile(named: name)
                result.removed.append(name)
            } catch where error.isNotFound {
            } catch {
                result.failures.append("remove \(name): \(error)")
            }
        }
        if !result.removed.isEmpty { try? directory.synchronize() }
        return result
    }
}
