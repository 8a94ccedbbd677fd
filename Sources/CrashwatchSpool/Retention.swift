// Retention.swift — `Spool.prune`: applies a `RetentionPolicy` to the unclaimed reports, and removes abandoned
// temporary files and expired claims whose holder died; reports of other users count only when trustworthy.
import CrashwatchModel
import CrashwatchSystem

extension Spool {
    /// Applies `policy` to the spool: removes the unclaimed reports beyond its limits, temporary files
    /// older than `policy.staleTemporaryAge`, and stale claims older than `policy.maxAge`; then flushes.
    ///
    /// `now` (nanoseconds since the epoch) dates the reports through their names and the temporary files
    /// through their modification times. Only well-formed report names and `.tmp-<uuid>` regular files are
    /// ever touched in the spool. Claimed reports are in flight: they neither count towards the limits nor
    /// are removed, and they are listed in `skippedClaimed` — except a claim whose holder died (stale) on a
    /// report older than `maxAge`, which is removed (reason `.staleClaim`); a stale claim within the age
    /// limit stays for the next reader to take over. A file that another process removed or claimed first is
    /// simply not removed here; other failed removals, and an unusable `.claims`, are listed in the result
    /// and do not stop the rest. Only failing to list the spool throws.
    ///
    /// Reports owned by a user other than root or the caller count only when their name, owner and content
    /// agree (`isTrustworthy`); the rest are left alone and listed in `skippedForeign`, so another local user
    /// who may write a sticky spool cannot plant future-dated names to push real reports out. `protecting`
    /// (the report just written) is never removed, whatever its name says.
    public func prune(policy: RetentionPolicy, now: Int64 = Clock.realtimeNanoseconds(),
                      protecting: ReportFileName? = nil) throws(SpoolError) -> PruneResult
    {
        var result = PruneResult()
        let names = try entryNames()
        let (reports, foreign) = retentionCandidates(names)
        result.skippedForeign = foreign
        var temporaries: [PrunedFile] = []
        let staleLimit = nanoseconds(policy.staleTemporaryAge)
        var hasClaims = false
        for name in names {
            if ReportFileName.isTemporaryName(name) {
                guard let status = try? directory.status(of: name), status.kind == .regular,
                      now - status.modificationNanoseconds > staleLimit
                else { continue }
                temporaries.append(PrunedFile(name: name, bytes: status.size, reason: .staleTemporary))
            } else if name == Self.claimsDirectoryName {
                hasClaims = true
            }
        }
        let decisions = removals(policy: policy, from: reports, now: now, protecting: protecting)
        var removedNames = Set<ReportFileName>()
        for decision in decisions {
            let name = decision.entry.name
            if remove(name.text, into: &result) {
                result.removed.append(PrunedFile(name: name.text, bytes: decision.entry.bytes, reason: decision.reason))
            }
            removedNames.insert(name)  // removed by us, or already gone
        }
        for temporary in temporaries where remove(temporary.name, into: &result) {
            result.removed.append(temporary)
        }
        var claimsChanged = false
        if hasClaims {
            do throws(SpoolError) {
                claimsChanged = try pruneClaims(policy: policy, now: now, into: &result)
            } catch {
                result.failures.append(error)
            }
        }
        // Attempt records of reports just removed would otherwise stay forever.
        if !result.removed.isEmpty && names.contains(Self.attemptsDirectoryName) { removeOrphanedAttempts() }
        let failedNames = Set(result.failures.compactMap { failure -> String? in
            if case .removeFile(_, let name, _) = failure { return name }
            return nil
        })
        result.kept = reports.filter { !removedNames.contains($0.name) || failedNames.contains($0.name.text) }
            .sorted { $0.name < $1.name }
        if result.removed.contains(where: { $0.reason != .staleClaim }) {
            do { try directory.synchronize() } catch { result.failures.append(.syncDirectory(spool: path, error)) }
        }
        if claimsChanged, let claims = try? openSubdirectory(.claims, create: false) {
            do { try claims.synchronize() } catch {
                result.failures.append(.syncDirectory(spool: join(Self.claimsDirectoryName), error))
            }
        }
        return result
    }

    /// The largest report of another user that may agree: above the largest report crashwatch writes (16 MiB
    /// by default, plus slack).
    public static let maxForeignReportBytes = 20 << 20
    /// How many bytes of other users' reports one prune or claim reads at most to check them.
    public static let foreignReadBudget = 64 << 20

    /// What `prune(policy:now:protecting:)` would remove from the unclaimed reports, without removing anything:
    /// the same trust rule (`isTrustworthy`) and the same protection.
    public func retentionDecisions(policy: RetentionPolicy, now: Int64 = Clock.realtimeNanoseconds(),
                                   protecting: ReportFileName? = nil) throws(SpoolError) -> [RetentionDecision]
    {
        removals(policy: policy, from: retentionCandidates(try entryNames()).reports, now: now, protecting: protecting)
    }

    /// `policy`'s removals from `reports`, except `protecting`.
    private func removals(policy: RetentionPolicy, from reports: [SpoolEntry], now: Int64,
                          protecting: ReportFileName?) -> [RetentionDecision]
    {
        policy.removals(from: reports, now: now, keeping: groupRepresentatives()).filter { $0.entry.name != protecting }
    }

    /// Of the spool entries `names`, the report files retention may act on (`isTrustworthy`), and the names
    /// of those it must leave alone (sorted); other names, links and vanished entries are in neither.
    func retentionCandidates(_ names: [String]) -> (reports: [SpoolEntry], foreign: [String]) {
        var budget = Self.foreignReadBudget
        return Self.retentionCandidates(names, in: directory, parse: { ReportFileName(parsing: $0) }) { name, status in
            isTrustworthy(name, status: status, budget: &budget)
        }
    }

    /// Of the entries `names` of `directory`, the regular files named as `parse` reads names (its report name)
    /// that `trusted` accepts, and the names of those it does not (sorted); other names, links and vanished
    /// entries are in neither. The one listing retention acts on, in the spool and beside it (kept cores).
    static func retentionCandidates(_ names: [String], in directory: borrowing DirectoryHandle, parse: (String) -> ReportFileName?,
                                    trusted: (ReportFileName, FileStatus) -> Bool) -> (reports: [SpoolEntry], foreign: [String])
    {
        var reports: [SpoolEntry] = []
        var foreign: [String] = []
        for name in names {
            guard let parsed = parse(name), let status = try? directory.status(of: name), status.kind == .regular
            else { continue }
            if trusted(parsed, status) {
                reports.append(SpoolEntry(name: parsed, bytes: status.size))
            } else {
                foreign.append(name)
            }
        }
        return (reports, foreign.sorted())
    }

    /// Whether retention may count and remove report `name`, and a reader claim it: one owned by root or the
    /// caller, or one owned by another user whose name, owner and content agree — the content is a report
    /// with the name's id and capture time about a process of the file's owner (a user can only report
    /// crashes of their own processes), and the name's time is no later than a minute after the file's
    /// inode changed (a time the kernel sets, so a name dated in the future does not agree).
    ///
    /// Reading another user's reports is bounded: one larger than any report crashwatch writes
    /// (`maxForeignReportBytes`) does not agree, and once `budget` bytes have been read in one operation the
    /// rest do not either (they are left alone), so planted files cannot make a prune or a claim slow.
    func isTrustworthy(_ name: ReportFileName, status: FileStatus, budget: inout Int) -> Bool {
        if Self.isTrustedWriter(status.ownerID) { return true }
        guard name.timeNanoseconds <= status.changeNanoseconds &+ 60_000_000_000,
              status.size <= Int64(Self.maxForeignReportBytes), status.size <= Int64(budget)
        else { return false }
        budget -= Int(status.size)
        guard let bytes = try? readEntry(name.text, in: directory, maxBytes: Self.maxForeignReportBytes),
              let report = try? CrashReport.decode(bytes),
              let captured = RFC3339.parse(report.captureTime)
        else { return false }
        return report.process.uid == status.ownerID && report.id.lowercased() == name.id.uuidString.lowercased()
            && captured / 1_000_000 == name.timeMilliseconds
    }

    /// Removes the stale claims on reports older than `policy.maxAge` and lists every other claim as
    /// skipped; true when something was removed.
    private func pruneClaims(policy: RetentionPolicy, now: Int64, into result: inout PruneResult) throws(SpoolError)
        -> Bool
    {
        let claims = try openSubdirectory(.claims, create: false)
        var liveness = HolderLiveness(me: (try? ClaimHolder.current()) ?? ClaimHolder(pid: 0, startTicks: 0))
        let ageLimit = policy.maxAge.map(nanoseconds)
        var removedAny = false
        for entry in try claimEntries(in: claims) {
            guard let status = try? claims.status(of: entry.text), status.kind == .regular else { continue }
            if let ageLimit, now - entry.name.timeNanoseconds > ageLimit, !liveness.isAlive(entry.holder) {
                let shown = "\(Self.claimsDirectoryName)/\(entry.text)"
                do {
                    try claims.removeFile(named: entry.text)
                    result.removed.append(PrunedFile(name: shown, bytes: status.size, reason: .staleClaim))
                    removedAny = true
                    continue
                } catch let error where error.isNotFound {
                    continue  // taken over or acknowledged meanwhile
                } catch {
                    result.failures.append(.removeFile(spool: path, name: shown, error))
                }
            }
            result.skippedClaimed.append(entry.name.text)
        }
        return removedAny
    }

    /// Removes entry `name`; true when this call removed it. A missing file is not a failure; others are recorded.
    private func remove(_ name: String, into result: inout PruneResult) -> Bool {
        do {
            try directory.removeFile(named: name)
            return true
        } catch {
            if !error.isNotFound { result.failures.append(.removeFile(spool: path, name: name, error)) }
            return false
        }
    }
}
