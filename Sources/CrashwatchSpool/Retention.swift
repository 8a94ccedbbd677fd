// Retention.swift — how many reports the spool keeps: the policy as a value (flood guard, age, count,
// bytes), the decision as a pure function of names and sizes, and `Spool.prune` that applies it to unclaimed
// reports (plus removal of abandoned temporary files and of expired claims whose holder died).
import CrashwatchModel
import CrashwatchSystem

/// Limits on what the spool keeps; the oldest reports go first, and one executable's crash loop cannot
/// push out the reports of others.
public struct RetentionPolicy: Equatable, Sendable {
    /// The default maximum number of reports.
    public static let defaultMaxReports = 50
    /// How old a `.tmp-*` file must be before it counts as left behind by a writer that died.
    public static let defaultStaleTemporaryAge: Duration = .seconds(3600)

    /// The most reports kept; at least 1, so the report just written always survives the count limit.
    public let maxReports: Int
    /// The flood guard: the most reports kept per executable tag (at least 1), or nil for no limit.
    ///
    /// Applied before every other limit, so that a crash loop of one executable removes its own oldest
    /// reports rather than everyone else's. Legacy names without a tag are not grouped; reports whose
    /// executable was unknown share the tag `unknown`.
    public let maxPerExecutable: Int?
    /// The most bytes all reports may take together, or nil for no limit; never removes the newest report.
    public let maxBytes: Int64?
    /// Reports whose name says they are older than this (relative to `now`) are removed, or nil for no limit.
    public let maxAge: Duration?
    /// Temporary files whose modification time is older than this are removed.
    public let staleTemporaryAge: Duration

    /// A policy; `maxReports` and `maxPerExecutable` are clamped to at least 1 and `maxBytes` to at least 0.
    public init(maxReports: Int = defaultMaxReports, maxPerExecutable: Int? = nil, maxBytes: Int64? = nil,
                maxAge: Duration? = nil, staleTemporaryAge: Duration = defaultStaleTemporaryAge)
    {
        self.maxReports = max(maxReports, 1)
        self.maxPerExecutable = maxPerExecutable.map { max($0, 1) }
        self.maxBytes = maxBytes.map { max($0, 0) }
        self.maxAge = maxAge
        self.staleTemporaryAge = staleTemporaryAge
    }

    /// Which reports to remove and why: first, per executable tag, the oldest beyond `maxPerExecutable`
    /// (flood); then, among the rest, expired ones (age), the oldest beyond `maxReports` (count), and the
    /// oldest until the rest fit in `maxBytes` (bytes, keeping the newest). Each group comes oldest first.
    ///
    /// `entries` may come in any order; `now` is nanoseconds since the epoch. A report whose name lies in
    /// the future (clock skew) has age zero.
    public func removals(from entries: [SpoolEntry], now: Int64) -> [RetentionDecision] {
        var sorted = entries.sorted { $0.name < $1.name }
        var decisions: [RetentionDecision] = []
        if let maxPerExecutable {
            var perTag: [String: Int] = [:]
            for entry in sorted { if let tag = entry.name.tag { perTag[tag, default: 0] += 1 } }
            var flooded = Set<ReportFileName>()
            var seen: [String: Int] = [:]
            for entry in sorted {
                guard let tag = entry.name.tag, let total = perTag[tag], total > maxPerExecutable else { continue }
                seen[tag, default: 0] += 1
                if seen[tag]! <= total - maxPerExecutable {
                    flooded.insert(entry.name)
                    decisions.append(RetentionDecision(entry: entry, reason: .flood))
                }
            }
            if !flooded.isEmpty { sorted.removeAll { flooded.contains($0.name) } }
        }
        var remaining = sorted[...]
        if let maxAge {
            let limit = nanoseconds(maxAge)
            let expired = remaining.prefix { now - $0.name.timeNanoseconds > limit }
            decisions += expired.map { RetentionDecision(entry: $0, reason: .age) }
            remaining = remaining.dropFirst(expired.count)
        }
        if remaining.count > maxReports {
            let excess = remaining.prefix(remaining.count - maxReports)
            decisions += excess.map { RetentionDecision(entry: $0, reason: .count) }
            remaining = remaining.dropFirst(excess.count)
        }
        if let maxBytes {
            var total = remaining.reduce(Int64(0)) { $0 + $1.bytes }
            while total > maxBytes, remaining.count > 1, let oldest = remaining.first {
                decisions.append(RetentionDecision(entry: oldest, reason: .bytes))
                total -= oldest.bytes
                remaining = remaining.dropFirst()
            }
        }
        return decisions
    }
}

/// Why a file was removed from the spool.
public enum PruneReason: String, Equatable, Sendable, CustomStringConvertible {
    /// One of the oldest reports of an executable that has more than `maxPerExecutable`.
    case flood
    /// Older than `maxAge`.
    case age
    /// Beyond `maxReports`.
    case count
    /// The reports together exceeded `maxBytes`.
    case bytes
    /// A temporary file abandoned by a writer that died mid-write.
    case staleTemporary
    /// A claim whose holder died, on a report older than `maxAge`.
    case staleClaim

    /// A few words for a person: `older than the age limit`.
    public var description: String {
        switch self {
        case .flood: "beyond the per-executable limit"
        case .age: "older than the age limit"
        case .count: "beyond the report count limit"
        case .bytes: "beyond the size limit"
        case .staleTemporary: "abandoned temporary file"
        case .staleClaim: "claimed by a reader that died, and older than the age limit"
        }
    }
}

/// One report the policy decided to remove, and why.
public struct RetentionDecision: Equatable, Sendable {
    /// The report.
    public let entry: SpoolEntry
    /// The first limit it broke.
    public let reason: PruneReason

    /// A decision to remove `entry` for `reason`.
    public init(entry: SpoolEntry, reason: PruneReason) {
        self.entry = entry
        self.reason = reason
    }
}

/// A file `prune` removed: its name in the spool, its size, and why.
public struct PrunedFile: Equatable, Sendable {
    /// The file's name relative to the spool: a report name, `.tmp-<id>`, or `.claims/<report name>.<holder>`.
    public let name: String
    /// Its size in bytes when it was listed.
    public let bytes: Int64
    /// Why it was removed.
    public let reason: PruneReason

    /// A record of removing `name` (`bytes` long) for `reason`.
    public init(name: String, bytes: Int64, reason: PruneReason) {
        self.name = name
        self.bytes = bytes
        self.reason = reason
    }
}

/// What `Spool.prune` did: the files removed, the reports left, the claims left alone, and what failed.
public struct PruneResult: Equatable, Sendable {
    /// Files removed, in the order they were removed (reports oldest first, then temporary files, then
    /// expired stale claims).
    public var removed: [PrunedFile] = []
    /// The unclaimed reports still in the spool, oldest first (including those whose removal failed).
    public var kept: [SpoolEntry] = []
    /// The report names (`ReportFileName.text`) of the claims prune saw and left alone, oldest first.
    public var skippedClaimed: [String] = []
    /// Report names owned by a user other than root or this one whose name, owner and content do not agree
    /// (see `Spool.isTrustworthy`), oldest first: retention neither counts nor removes them, as their names
    /// could claim any time.
    public var skippedForeign: [String] = []
    /// Steps that failed (`.removeFile`, `.syncDirectory`, or an unusable `.claims`); the rest went ahead.
    public var failures: [SpoolError] = []

    /// A result; the default is "nothing removed, nothing kept, nothing skipped, nothing failed".
    public init(removed: [PrunedFile] = [], kept: [SpoolEntry] = [], skippedClaimed: [String] = [],
                skippedForeign: [String] = [], failures: [SpoolError] = [])
    {
        self.removed = removed
        self.kept = kept
        self.skippedClaimed = skippedClaimed
        self.skippedForeign = skippedForeign
        self.failures = failures
    }
}

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
        policy.removals(from: reports, now: now).filter { $0.entry.name != protecting }
    }

    /// Of the spool entries `names`, the report files retention may act on (`isTrustworthy`), and the names
    /// of those it must leave alone (sorted); other names, links and vanished entries are in neither.
    private func retentionCandidates(_ names: [String]) -> (reports: [SpoolEntry], foreign: [String]) {
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

/// A duration in whole nanoseconds, saturating at `Int64.max` (and at 0 for negative durations).
func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    if seconds < 0 { return 0 }
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return Int64.max }
    let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
    return overflow2 ? Int64.max : sum
}
