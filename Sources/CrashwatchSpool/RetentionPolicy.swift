// RetentionPolicy.swift — how many reports the spool keeps: the policy as a value (flood guard, age, count,
// bytes) with its decision as a pure function of names and sizes, and what a prune reports back (reasons,
// removed files, the result). `Spool.prune` (Retention.swift) applies it.
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
    /// `keeping` names each crash group's newest report (`GroupIndex.newestReports`): the flood, count and bytes
    /// limits remove every other report before one of those, oldest first, so a crash loop of one bug cannot
    /// evict the only report of another; the age limit removes them like any other.
    ///
    /// `entries` may come in any order; `now` is nanoseconds since the epoch. A report whose name lies in
    /// the future (clock skew) has age zero.
    public func removals(from entries: [SpoolEntry], now: Int64, keeping: Set<String> = []) -> [RetentionDecision] {
        var remaining = entries.sorted { $0.name < $1.name }
        var decisions: [RetentionDecision] = []
        /// `candidates` (oldest first) in the order they go: reports outside `keeping` first.
        func evictionOrder(_ candidates: [SpoolEntry]) -> [SpoolEntry] {
            candidates.filter { !keeping.contains($0.name.text) } + candidates.filter { keeping.contains($0.name.text) }
        }
        func remove(_ chosen: some Sequence<SpoolEntry>, _ reason: PruneReason) {
            let names = Set(chosen.map(\.name))
            decisions += remaining.filter { names.contains($0.name) }.map { RetentionDecision(entry: $0, reason: reason) }
            remaining.removeAll { names.contains($0.name) }
        }
        if let maxPerExecutable {
            var perTag: [String: [SpoolEntry]] = [:]
            for entry in remaining { if let tag = entry.name.tag { perTag[tag, default: []].append(entry) } }
            var flooded: [SpoolEntry] = []
            for reports in perTag.values where reports.count > maxPerExecutable {
                flooded += evictionOrder(reports).prefix(reports.count - maxPerExecutable)
            }
            remove(flooded, .flood)
        }
        if let maxAge {
            let limit = nanoseconds(maxAge)
            remove(remaining.prefix { now - $0.name.timeNanoseconds > limit }, .age)
        }
        if remaining.count > maxReports {
            remove(evictionOrder(remaining).prefix(remaining.count - maxReports), .count)
        }
        if let maxBytes, !remaining.isEmpty {
            var total = remaining.reduce(Int64(0)) { $0 + $1.bytes }
            var chosen: [SpoolEntry] = []
            for entry in evictionOrder(Array(remaining.dropLast())) where total > maxBytes {
                chosen.append(entry)
                total -= entry.bytes
            }
            remove(chosen, .bytes)
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



/// A duration in whole nanoseconds, saturating at `Int64.max` (and at 0 for negative durations).
func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    if seconds < 0 { return 0 }
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return Int64.max }
    let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
    return overflow2 ? Int64.max : sum
}
