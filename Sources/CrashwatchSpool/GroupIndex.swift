// GroupIndex.swift — the spool's group index as a value: one record per fingerprint (count, first and last seen,
// executable, app versions, signal, top frame, newest report), bounded (groups, versions, string lengths), with
// its one update (`record`) and its bounded parse. Counts outlive retention and shipping: removing a report never
// changes them. `Spool.recordInGroups` (Groups.swift) applies an update under the index's lock. Its file is
// Codable JSON (JSONEncoder/JSONDecoder), not `JSONWriter`'s: a format only crashwatch writes and reads back,
// so one declaration gives both sides and they cannot drift (as the raw capture's metadata).
import CrashwatchModel
import FoundationEssentials

/// One report as the group index counts it: the facts a group keeps, taken from a written report.
public struct GroupSighting: Sendable, Equatable {
    /// The report's fingerprint.
    public var fingerprint: FingerprintRecord
    /// The report id (a report written again under its id moves its count, never adds one).
    public var id: String
    /// The capture time, milliseconds since the epoch.
    public var timeMilliseconds: Int64
    /// The executable's path.
    public var executable: String
    /// The app version, when known.
    public var version: String?
    /// The report's file name in the spool.
    public var reportName: String

    /// The sighting of `report`, written as `reportName`: its fingerprint (computed when it has none). For a
    /// `restricted` report (0600: a process the kernel protects from its own user, README "Security model") the
    /// index, which the spool's readers share, keeps no more than the report's file name shows: the executable's
    /// file name, no frame, no version.
    public init(_ report: CrashReport, reportName: String, restricted: Bool = false) {
        var fingerprint = report.fingerprint ?? Fingerprint.of(report)
        if restricted { fingerprint.frames = [] }
        self.fingerprint = fingerprint
        id = report.id
        timeMilliseconds = (RFC3339.parse(report.captureTime) ?? 0) / 1_000_000
        executable = restricted ? ImageRecord.basename(report.process.executable) : report.process.executable
        version = restricted ? nil : report.process.app?.version
        self.reportName = reportName
    }
}

/// The group index: the groups, most recently seen last, and the last report ids counted (to tell a report
/// replaced under its id — the full report over its minimal one — from a new one).
public struct GroupIndex: Codable, Sendable, Equatable {
    /// The value of `format`.
    public static let formatName = "crashwatch.groups"
    /// The most groups kept: beyond it the least recently seen goes.
    public static let maximumGroups = 1000
    /// The most report ids remembered as recently counted.
    public static let maximumRecent = 256
    /// The most app versions kept per group.
    public static let maximumVersions = 8
    /// The longest string kept, in bytes.
    public static let maximumStringBytes = 1024
    /// The largest index file read.
    public static let maximumFileBytes = 4 << 20

    /// A report id counted recently, and the group it was counted in.
    public struct Recent: Codable, Sendable, Equatable {
        /// The report id.
        public var id: String
        /// Its fingerprint value.
        public var fingerprint: String
    }

    /// Always `crashwatch.groups`.
    public var format = GroupIndex.formatName
    /// The index format's version (1).
    public var version = 1
    /// The groups, in no particular order.
    public var groups: [GroupRecord] = []
    /// The last `maximumRecent` report ids counted, oldest first.
    public var recent: [Recent] = []

    /// An empty index.
    public init() {}

    /// Counts `sighting`: in its group (made when new), or, for a report id counted before in another group
    /// (its minimal report's fingerprint), moved there; a report id counted in the same group is not counted twice.
    public mutating func record(_ sighting: GroupSighting) {
        let value = sighting.fingerprint.value
        var counted = false
        if let earlier = recent.firstIndex(where: { $0.id == sighting.id }) {
            let old = recent[earlier].fingerprint
            if old == value {
                counted = true
            } else if let group = groups.firstIndex(where: { $0.fingerprint == old }) {
                groups[group].count -= 1
                if groups[group].count <= 0 { groups.remove(at: group) }
            }
            recent.remove(at: earlier)
        }
        recent.append(Recent(id: sighting.id, fingerprint: value))
        if recent.count > Self.maximumRecent { recent.removeFirst(recent.count - Self.maximumRecent) }
        let time = sighting.timeMilliseconds
        if let index = groups.firstIndex(where: { $0.fingerprint == value }) {
            var group = groups[index]
            if !counted { group.count += 1 }
            group.firstSeenMs = min(group.firstSeenMs, time)
            if time >= group.lastSeenMs {
                group.lastSeenMs = time
                group.executable = Self.capped(sighting.executable)
                group.newestReport = sighting.reportName
                group.newestID = sighting.id
            }
            if let version = sighting.version.map(Self.capped) {
                group.versions.removeAll { $0 == version }
                group.versions.append(version)
                if group.versions.count > Self.maximumVersions { group.versions.removeFirst(group.versions.count - Self.maximumVersions) }
            }
            groups[index] = group
        } else {
            groups.append(GroupRecord(
                fingerprint: value, algorithm: Self.capped(sighting.fingerprint.algorithm), count: 1, firstSeenMs: time,
                lastSeenMs: time, kind: Self.capped(sighting.fingerprint.kind), signal: Self.capped(sighting.fingerprint.signal),
                executable: Self.capped(sighting.executable), versions: sighting.version.map { [Self.capped($0)] } ?? [],
                topFrame: sighting.fingerprint.frames.first.map(Self.capped), newestReport: sighting.reportName, newestID: sighting.id))
        }
        evict()
    }

    /// Drops the least recently seen groups beyond `maximumGroups`.
    mutating func evict() {
        guard groups.count > Self.maximumGroups else { return }
        groups.sort { ($0.lastSeenMs, $0.fingerprint) > ($1.lastSeenMs, $1.fingerprint) }
        groups.removeLast(groups.count - Self.maximumGroups)
    }

    /// The groups newest first (by last seen, then by fingerprint).
    public var newestFirst: [GroupRecord] {
        groups.sorted { ($0.lastSeenMs, $0.fingerprint) > ($1.lastSeenMs, $1.fingerprint) }
    }

    /// The file names of each group's newest report.
    public var newestReports: Set<String> { Set(groups.map(\.newestReport)) }

    /// The index as the file holds it: JSON, one line.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(self)).map { Array($0) } ?? []) + [UInt8(ascii: "\n")]
    }

    /// The index in `bytes`, or nil when they are not one (too large, not well-formed JSON, another format or
    /// version, more than the bounds allow, a count below 1, a fingerprint that is not 32 hex digits, a time
    /// range backwards): the file is input another writer made, so nothing in it is taken on trust.
    public static func parse(_ bytes: [UInt8]) -> GroupIndex? {
        guard bytes.count <= maximumFileBytes, JSONSyntax.isWellFormed(bytes),
              let index = try? JSONDecoder().decode(GroupIndex.self, from: Data(bytes)),
              index.format == formatName, index.version == 1,
              index.groups.count <= maximumGroups, index.recent.count <= maximumRecent
        else { return nil }
        for group in index.groups {
            guard group.count >= 1, group.firstSeenMs <= group.lastSeenMs, isFingerprint(group.fingerprint),
                  group.versions.count <= maximumVersions,
                  ([group.algorithm, group.kind, group.signal, group.executable, group.newestReport, group.newestID]
                    + group.versions + [group.topFrame ?? ""]).allSatisfy({ $0.utf8.count <= maximumStringBytes })
            else { return nil }
        }
        guard Set(index.groups.map(\.fingerprint)).count == index.groups.count,
              index.recent.allSatisfy({ isFingerprint($0.fingerprint) && $0.id.utf8.count <= 64 })
        else { return nil }
        return index
    }

    /// Whether `text` is 32 lower-case hex digits.
    static func isFingerprint(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { Hex.nibble($0) != nil && !(UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }
    }

    /// `text` cut to `maximumStringBytes` bytes at a character boundary.
    static func capped(_ text: String) -> String {
        guard text.utf8.count > maximumStringBytes else { return text }
        var cut = text.utf8.prefix(maximumStringBytes)
        while !cut.isEmpty, String(cut) == nil { cut = cut.dropLast() }
        return String(cut) ?? ""
    }
}
