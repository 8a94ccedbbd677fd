// Retention.swift — how many reports the spool keeps: the policy as a value, the decision as a pure
// function of names and sizes, and `Spool.prune` that applies it (plus removal of abandoned temporary files).
import CrashwatchSystem

/// Limits on what the spool keeps; the oldest reports go first.
public struct RetentionPolicy: Equatable, Sendable {
    /// The default maximum number of reports.
    public static let defaultMaxReports = 50
    /// How old a `.tmp-*` file must be before it counts as left behind by a writer that died.
    public static let defaultStaleTemporaryAge: Duration = .seconds(3600)

    /// The most reports kept; at least 1, so the report just written always survives the count limit.
    public let maxReports: Int
    /// The most bytes all reports may take together, or nil for no limit; never removes the newest report.
    public let maxBytes: Int64?
    /// Reports whose name says they are older than this (relative to `now`) are removed, or nil for no limit.
    public let maxAge: Duration?
    /// Temporary files whose modification time is older than this are removed.
    public let staleTemporaryAge: Duration

    /// A policy; `maxReports` is clamped to at least 1 and `maxBytes` to at least 0.
    public init(maxReports: Int = defaultMaxReports, maxBytes: Int64? = nil, maxAge: Duration? = nil,
                staleTemporaryAge: Duration = defaultStaleTemporaryAge)
    {
        self.maxReports = max(maxReports, 1)
        self.maxBytes = maxBytes.map { max($0, 0) }
        self.maxAge = maxAge
        self.staleTemporaryAge = staleTemporaryAge
    }

    /// Which reports to remove and why, oldest first: expired ones (age), then the oldest beyond
    /// `maxReports` (count), then the oldest until the rest fit in `maxBytes` (bytes, keeping the newest).
    ///
    /// `entries` may come in any order; `now` is nanoseconds since the epoch. A report whose name lies in
    /// the future (clock skew) has age zero.
    public func removals(from entries: [SpoolEntry], now: Int64) -> [RetentionDecision] {
        var remaining = entries.sorted { $0.name < $1.name }[...]
        var decisions: [RetentionDecision] = []
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
    /// Older than `maxAge`.
    case age
    /// Beyond `maxReports`.
    case count
    /// The reports together exceeded `maxBytes`.
    case bytes
    /// A temporary file abandoned by a writer that died mid-write.
    case staleTemporary

    /// A few words for a person: `older than the age limit`.
    public var description: String {
        switch self {
        case .age: "older than the age limit"
        case .count: "beyond the report count limit"
        case .bytes: "beyond the size limit"
        case .staleTemporary: "abandoned temporary file"
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
    /// The file name (a report name or `.tmp-<id>`).
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

/// What `Spool.prune` did: the files removed, the reports left, and the removals that failed.
public struct PruneResult: Equatable, Sendable {
    /// Files removed, in the order they were removed (oldest reports first, then temporary files).
    public var removed: [PrunedFile] = []
    /// The reports still in the spool, oldest first (including those whose removal failed).
    public var kept: [SpoolEntry] = []
    /// Removals that failed (each a `.removeFile`); the others went ahead regardless.
    public var failures: [SpoolError] = []

    /// A result; the default is "nothing removed, nothing kept, nothing failed".
    public init(removed: [PrunedFile] = [], kept: [SpoolEntry] = [], failures: [SpoolError] = []) {
        self.removed = removed
        self.kept = kept
        self.failures = failures
    }
}

extension Spool {
    /// Applies `policy` to the spool: removes the oldest reports beyond its limits and temporary files
    /// older than `policy.staleTemporaryAge`, then flushes the directory.
    ///
    /// `now` (nanoseconds since the epoch) dates the reports through their names and the temporary files
    /// through their modification times. Only well-formed report names and `.tmp-<uuid>` regular files are
    /// ever touched. A file that another process removed first is simply gone; other failed removals are
    /// listed in the result and do not stop the rest. Only failing to list the spool throws.
    public func prune(policy: RetentionPolicy, now: Int64 = Clock.realtimeNanoseconds()) throws(SpoolError)
        -> PruneResult
    {
        var result = PruneResult()
        let names = try entryNames()
        var reports: [SpoolEntry] = []
        var temporaries: [PrunedFile] = []
        let staleLimit = nanoseconds(policy.staleTemporaryAge)
        for name in names {
            if let parsed = ReportFileName(parsing: name) {
                guard let status = try? directory.status(of: name), status.kind == .regular else { continue }
                reports.append(SpoolEntry(name: parsed, bytes: status.size))
            } else if ReportFileName.isTemporaryName(name) {
                guard let status = try? directory.status(of: name), status.kind == .regular,
                      now - status.modificationNanoseconds > staleLimit
                else { continue }
                temporaries.append(PrunedFile(name: name, bytes: status.size, reason: .staleTemporary))
            }
        }
        let decisions = policy.removals(from: reports, now: now)
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
        let failedNames = Set(result.failures.compactMap { failure -> String? in
            if case .removeFile(_, let name, _) = failure { return name }
            return nil
        })
        result.kept = reports.filter { !removedNames.contains($0.name) || failedNames.contains($0.name.text) }
            .sorted { $0.name < $1.name }
        if !result.removed.isEmpty {
            do { try directory.synchronize() } catch { result.failures.append(.syncDirectory(spool: path, error)) }
        }
        return result
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

/// A duration in whole nanoseconds, saturating at `Int64.max` (and at 0 for negative durations).
func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    if seconds < 0 { return 0 }
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return Int64.max }
    let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
    return overflow2 ? Int64.max : sum
}
