// CrashGroup.swift — one crash group as the spool's group index keeps it and `crashwatch list --group` shows it:
// every report with one fingerprint value, counted as written (retention and shipping never lower the count).
import FoundationEssentials

/// One group: every report with one fingerprint value.
public struct GroupRecord: Codable, Sendable, Equatable {
    /// The fingerprint value (32 hex digits).
    public var fingerprint: String
    /// The algorithm that computed it.
    public var algorithm: String
    /// How many reports of this group were written to the spool.
    public var count: Int
    /// The capture time of the oldest, milliseconds since the epoch.
    public var firstSeenMs: Int64
    /// The capture time of the newest, milliseconds since the epoch.
    public var lastSeenMs: Int64
    /// The fingerprint's kind (`crash`, `hang`, `abnormalExit/memory`…).
    public var kind: String
    /// The fingerprint's signal name.
    public var signal: String
    /// The executable of the newest report.
    public var executable: String
    /// The app versions seen, oldest first, at most `the index allows (8)` (the newest kept).
    public var versions: [String]
    /// The fingerprint's first frame, when it has one.
    public var topFrame: String?
    /// The newest report's file name (retention keeps it before older duplicates of busier groups).
    public var newestReport: String
    /// The newest report's id.
    public var newestID: String

    /// Creates a group record from its fields.
    public init(fingerprint: String, algorithm: String, count: Int, firstSeenMs: Int64, lastSeenMs: Int64, kind: String,
                signal: String, executable: String, versions: [String], topFrame: String?, newestReport: String, newestID: String) {
        self.fingerprint = fingerprint
        self.algorithm = algorithm
        self.count = count
        self.firstSeenMs = firstSeenMs
        self.lastSeenMs = lastSeenMs
        self.kind = kind
        self.signal = signal
        self.executable = executable
        self.versions = versions
        self.topFrame = topFrame
        self.newestReport = newestReport
        self.newestID = newestID
    }
}
