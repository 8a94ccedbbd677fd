// GroupRenderer.swift — `crashwatch list --group`: one aligned line per crash group (newest first, as given):
// last seen, count, first seen, signal, executable, app versions, top frame, fingerprint (12 digits); and the
// JSON form, an array of one-line objects with keys in a fixed order.
import CrashwatchModel

/// Renders crash groups as a table for a terminal or a pipe, or as JSON.
public enum GroupRenderer {
    /// The table's columns, left to right.
    static let columns: [Column] = [
        Column(title: "LAST SEEN (UTC)"),
        Column(title: "COUNT", rightAligned: true),
        Column(title: "FIRST SEEN (UTC)"),
        Column(title: "SIGNAL"),
        Column(title: "EXECUTABLE", elision: .head, minimumWidth: 16),
        Column(title: "VERSIONS", elision: .head, minimumWidth: 8),
        Column(title: "TOP FRAME", elision: .tail, minimumWidth: 16),
        Column(title: "FINGERPRINT"),
    ]

    /// The table text, each line ending in a newline; `No crash groups in SPOOL.` when there are none. Every
    /// string from the index is sanitized, so a crafted name cannot move the cursor.
    public static func render(_ groups: [GroupRecord], spool: String, style: Style) -> String {
        if groups.isEmpty { return "No crash groups in \(TextFormatting.sanitized(spool)).\n" }
        let rows = groups.map { group in
            [
                Cell(TextFormatting.utcTime(time(group.lastSeenMs), milliseconds: false)),
                Cell(String(group.count)),
                Cell(TextFormatting.utcTime(time(group.firstSeenMs), milliseconds: false)),
                Cell(TextFormatting.sanitized(group.signal), .alarm),
                Cell(TextFormatting.sanitized(group.executable)),
                Cell(group.versions.isEmpty ? "-" : TextFormatting.sanitized(group.versions.joined(separator: ","))),
                group.topFrame.map { Cell(TextFormatting.sanitized($0), .inApp) } ?? Cell("-"),
                Cell(TextFormatting.sanitized(String(group.fingerprint.prefix(12)))),
            ]
        }
        return Table(columns: columns, rows: rows).render(style: style)
    }

    /// The groups as a JSON array, one object per line, ending in a newline: `fingerprint`, `algorithm`, `count`,
    /// `firstSeen`, `lastSeen` (RFC 3339 UTC with milliseconds), `kind`, `signal`, `executable`, `versions`,
    /// `topFrame`, `newestReport`, `newestID`.
    public static func json(_ groups: [GroupRecord]) -> String {
        if groups.isEmpty { return "[]\n" }
        return "[\n" + groups.map { "  " + json($0) }.joined(separator: ",\n") + "\n]\n"
    }

    /// One group as a one-line JSON object.
    static func json(_ group: GroupRecord) -> String {
        var json = JSONWriter(spaced: true)
        json.object { json in
            json.member("fingerprint", group.fingerprint)
            json.member("algorithm", group.algorithm)
            json.member("count", group.count)
            json.member("firstSeen", time(group.firstSeenMs))
            json.member("lastSeen", time(group.lastSeenMs))
            json.member("kind", group.kind)
            json.member("signal", group.signal)
            json.member("executable", group.executable)
            json.member("versions", strings: group.versions)
            json.member("topFrame", group.topFrame)
            json.member("newestReport", group.newestReport)
            json.member("newestID", group.newestID)
        }
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Milliseconds since the epoch as RFC 3339 UTC with milliseconds.
    static func time(_ milliseconds: Int64) -> String {
        RFC3339.format(nanosecondsSinceEpoch: milliseconds.multipliedReportingOverflow(by: 1_000_000).overflow ? 0 : milliseconds * 1_000_000)
    }
}
