// ListRenderer.swift — `crashwatch list`: one aligned line per report under a header, in the order given (the
// caller sorts, newest first). Times are UTC to the second; ids are shortened to eight hex digits. Given a
// terminal width, the executable (its start elided) and the top frame (its end elided) shrink so lines fit.
// The default columns are TIME, PID, KIND, SIGNAL, EXECUTABLE, TOP FRAME and ID, with UNIT and VERSION when
// some report listed has one, and SHIP when some report failed to ship (`3 failed`); `--columns` picks others.

/// Renders report summaries as an aligned table for a terminal or a pipe.
public enum ListRenderer {
    /// One column `list` can show: the name `--columns` takes, its header and how a summary fills it.
    public struct ListColumn: Sendable {
        /// The name `--columns` takes (`time`, `unit`).
        public let name: String
        let column: Column
        let cell: @Sendable (ReportSummary) -> Cell
    }

    /// Every column, in the default order.
    public static let allColumns: [ListColumn] = [
        ListColumn(name: "time", column: Column(title: "TIME (UTC)")) { Cell(TextFormatting.utcTime($0.time, milliseconds: false)) },
        ListColumn(name: "pid", column: Column(title: "PID", rightAligned: true)) { Cell(String($0.pid)) },
        ListColumn(name: "kind", column: Column(title: "KIND")) { Cell(TextFormatting.sanitized($0.kind)) },
        ListColumn(name: "signal", column: Column(title: "SIGNAL")) { Cell(TextFormatting.sanitized($0.signal), .alarm) },
        ListColumn(name: "unit", column: Column(title: "UNIT", elision: .tail, minimumWidth: 8)) {
            Cell($0.unit.map(TextFormatting.sanitized) ?? "-")
        },
        ListColumn(name: "version", column: Column(title: "VERSION", elision: .tail, minimumWidth: 7)) {
            Cell($0.version.map(TextFormatting.sanitized) ?? "-")
        },
        ListColumn(name: "executable", column: Column(title: "EXECUTABLE", elision: .head, minimumWidth: 16)) {
            Cell(TextFormatting.sanitized($0.executable))
        },
        ListColumn(name: "frame", column: Column(title: "TOP FRAME", elision: .tail, minimumWidth: 16)) {
            $0.topFrame.map { Cell(TextFormatting.sanitized($0), .inApp) } ?? Cell("-")
        },
        ListColumn(name: "id", column: Column(title: "ID")) { Cell(TextFormatting.sanitized($0.shortID)) },
        ListColumn(name: "ship", column: Column(title: "SHIP")) { Cell($0.shipAttempts.map { "\($0) failed" } ?? "", .alarm) },
    ]

    /// The names `--columns` takes, in the default order.
    public static var columnNames: [String] { allColumns.map(\.name) }

    /// The default columns for `summaries`: UNIT, VERSION and SHIP only when some summary has one.
    static func defaultColumns(for summaries: [ReportSummary]) -> [String] {
        columnNames.filter { name in
            switch name {
            case "unit": summaries.contains { $0.unit != nil }
            case "version": summaries.contains { $0.version != nil }
            case "ship": summaries.contains { ($0.shipAttempts ?? 0) > 0 }
            default: true
            }
        }
    }

    /// The list text, each line ending in a newline; `No crash reports in SPOOL.` when there are none.
    ///
    /// `columns` are names from `columnNames` (unknown ones are skipped); nil is the default set. The signal is
    /// bold red and the top in-app frame green when `style.color` is set; a report without an in-app frame shows
    /// `-` there. Every string from a report is sanitized, so a crafted name cannot move the cursor.
    public static func render(_ summaries: [ReportSummary], spool: String, style: Style, columns: [String]? = nil) -> String {
        if summaries.isEmpty { return "No crash reports in \(TextFormatting.sanitized(spool)).\n" }
        let names = columns ?? defaultColumns(for: summaries)
        let chosen = names.compactMap { name in allColumns.first { $0.name == name } }
        let rows = summaries.map { summary in chosen.map { $0.cell(summary) } }
        return Table(columns: chosen.map(\.column), rows: rows).render(style: style)
    }
}
