// Groups.swift — the group index on disk: `.groups/index` (GroupIndex, JSON) beside `.groups/lock`, in a
// subdirectory with the spool's bits less others' (like `.claims`), so a user who may only add reports cannot
// plant or swap it. Every update holds an exclusive `flock` on the lock file (concurrent supervisors never lose
// a count), reads the index (bounded parse; rebuilt from the reports when missing or damaged), applies one
// report and writes it back atomically (temporary file, fsync, rename, directory fsync): readers see the old
// index or the new one, never half of one.
import CrashwatchModel
import CrashwatchSystem

extension Spool {
    /// The index file's name in `.groups`.
    static let groupIndexName = "index"
    /// The lock file's name in `.groups`.
    static let groupLockName = "lock"
    /// How long an update waits for other writers' lock: generous, as the report it counts is already durable
    /// and nothing waits on the count but this crashwatch's exit; several writers on a loaded machine each
    /// fsync the index in turn, and the lock is taken by polling, not in order.
    static let groupLockWait: Int64 = 20_000_000_000

    /// Counts the report just written as `name` (`bytes`, its encoded form) in the group index. A report that
    /// does not decode is not counted (it is quarantined when read). Call it after each final report write,
    /// before `prune`, never while a crashed process is held.
    /// `restricted`: written as a restricted report (`write(bytes:name:restricted:)`; see `GroupSighting`).
    public func recordInGroups(reportBytes bytes: [UInt8], name: ReportFileName, restricted: Bool = false) throws(SpoolError) {
        guard let report = try? CrashReport.decode(bytes) else { return }
        try recordInGroups(GroupSighting(report, reportName: name.text, restricted: restricted))
    }

    /// Counts `sighting` in the group index, under its lock; a missing or damaged index is rebuilt from the
    /// other reports first.
    public func recordInGroups(_ sighting: GroupSighting) throws(SpoolError) {
        let groups = try openSubdirectory(.groups, create: true)
        let lock: OwnedDescriptor
        do {
            lock = try groups.exclusiveLock(named: Self.groupLockName, permissions: Self.reportPermissions,
                                            waitNanoseconds: Self.groupLockWait)
        } catch {
            throw .updateGroups(spool: path, error)
        }
        defer { withExtendedLifetime(lock) {} }
        var index: GroupIndex
        if let stored = readGroupIndex(in: groups) {
            index = stored
            index.record(sighting)
        } else {
            // The report just written is counted from the sighting, not read back (it may be large).
            index = rebuiltGroupIndex(excluding: sighting.reportName)
            index.record(sighting)
        }
        try writeGroupIndex(index, in: groups)
    }

    /// The group index: as stored, or rebuilt from the reports when missing or damaged (and then stored again
    /// when this user may write it).
    public func groupIndex() throws(SpoolError) -> GroupIndex {
        if try subdirectoryExists(.groups) {
            let groups = try openSubdirectory(.groups, create: false)
            if let stored = readGroupIndex(in: groups) { return stored }
        }
        return try rebuildGroups()
    }

    /// Rebuilds the group index from the reports in the spool (oldest first) and stores it, under its lock.
    @discardableResult
    public func rebuildGroups() throws(SpoolError) -> GroupIndex {
        guard let groups = try? openSubdirectory(.groups, create: true),
              let lock = try? groups.exclusiveLock(named: Self.groupLockName, permissions: Self.reportPermissions,
                                                   waitNanoseconds: Self.groupLockWait)
        else { return rebuiltGroupIndex() }
        defer { withExtendedLifetime(lock) {} }
        let index = rebuiltGroupIndex()
        try writeGroupIndex(index, in: groups)
        return index
    }

    /// The file names of each group's newest report, for retention; empty without a readable index (retention
    /// then decides by names alone, as before groups existed).
    func groupRepresentatives() -> Set<String> {
        guard (try? subdirectoryExists(.groups)) == true, let groups = try? openSubdirectory(.groups, create: false),
              let index = readGroupIndex(in: groups)
        else { return [] }
        return index.newestReports
    }

    /// The stored index, or nil when missing, unreadable or damaged.
    private func readGroupIndex(in groups: borrowing DirectoryHandle) -> GroupIndex? {
        guard let bytes = try? readEntry(Self.groupIndexName, in: groups, maxBytes: GroupIndex.maximumFileBytes) else { return nil }
        return GroupIndex.parse(bytes)
    }

    /// The index of the reports in the spool that retention trusts (`isTrustworthy`), oldest first; reports that
    /// do not decode are left out.
    private func rebuiltGroupIndex(excluding excluded: String? = nil) -> GroupIndex {
        var index = GroupIndex()
        guard let names = try? entryNames() else { return index }
        for entry in retentionCandidates(names).reports.sorted(by: { $0.name < $1.name }) where entry.name.text != excluded {
            guard let bytes = try? readEntry(entry.name.text, in: directory, maxBytes: Self.defaultMaxReadBytes),
                  let report = try? CrashReport.decode(bytes)
            else { continue }
            // A report its group may not read (0600) is a restricted one.
            let restricted = (try? directory.status(of: entry.name.text)).map { $0.permissions & 0o040 == 0 } ?? true
            index.record(GroupSighting(report, reportName: entry.name.text, restricted: restricted))
        }
        return index
    }

    /// Writes the index atomically into `.groups`.
    private func writeGroupIndex(_ index: GroupIndex, in groups: borrowing DirectoryHandle) throws(SpoolError) {
        // Under the lock, a temporary file left there is a dead writer's.
        try? groups.removeFile(named: "\(Self.groupIndexName).tmp")
        do {
            try groups.writeAtomically(index.encoded(), named: Self.groupIndexName, temporaryName: "\(Self.groupIndexName).tmp",
                                       permissions: Self.reportPermissions)
        } catch {
            throw .updateGroups(spool: path, error.error)
        }
    }
}
