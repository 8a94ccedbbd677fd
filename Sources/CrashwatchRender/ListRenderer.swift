// ListRenderer.swift — `crashwatch list`: one aligned line per report under a header, in the order given (the
// caller sorts, newest first). Times are UTC to the second; ids are shortened to eight hex digits. Given a
// terminal width, the executable (its start elided) and the top frame (its end elided) shrink so lines fit.
// When some report failed to ship, a SHIP column says how often (`3 failed`).

/// Renders report summaries as an aligned table for a terminal or a pipe.
public enum ListRenderer {
    /// The table's columns, left to right.
    static let columns: [Column] = [
        Column(title: "TIME (UTC)"),
        Column(title: "PID", rightAligned: true),
        Column(title: "SIGNAL"),
        Column(title: "EXECUTABLE", elision: .head, minimumWidth: 16),
        Column(title: "TOP FRAME", elision: .tail, minimumWidth: 16),
        Column(title: "ID"),
    ]
    /// The column added when some report has failed attempts to ship it.
    static let shipColumn = Column(title: "SHIP")

    /// The list text, each line ending in a newline; `No crash reports in SPOOL.` when there are none.
    ///
    /// The signal is bold red and the top in-app frame green when `style.color` is set; a report without an in-app
    /// frame shows `-` there. Every string from a report is sanitized, so a crafted name cannot move the cursor.
    public static func render(_ summaries: [ReportSummary], spool: String, style: Style) -> String {
        if summaries.isEmpty { return "No crash reports in \(TextFormatting.sanitized(spool)).\n" }
        let showShipping = summaries.contains { ($0.shipAttempts ?? 0) > 0 }
        let rows = summaries.map { summary in
            let row = [
                Cell(TextFormatting.utcTime(summary.time, milliseconds: false)),
                Cell(String(summary.pid)),
                Cell(TextFormatting.sanitized(summary.signal), .alarm),
                Cell(TextFormatting.sanitized(summary.executable)),
                summary.topFrame.map { Cell(TextFormatting.sanitized($0), .inApp) } ?? Cell("-"),
                Cell(TextFormatting.sanitized(summary.shortID)),
            ]
            guard showShipping else { return row }
            return row + [Cell(summary.shipAttempts.map { "\($0) failed" } ?? "", .alarm)]
        }
        return Table(columns: showShipping ? columns + [shipColumn] : columns, rows: rows).render(style: style)
    }
}
