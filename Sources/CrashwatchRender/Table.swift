// Table.swift — aligned text columns: widths measured on sanitized text, padding outside the colour codes, no
// padding at line ends, and, when a width limit is given, the elidable columns shrunk (widest first) until lines fit.

/// One cell: its (sanitized) text and the paint to wrap it in when colour is on.
struct Cell: Sendable {
    /// The text shown, already safe for a terminal.
    var text: String
    /// The paint applied to the text (not to its padding), or nil.
    var paint: Paint?

    /// Creates a cell.
    init(_ text: String, _ paint: Paint? = nil) {
        self.text = text
        self.paint = paint
    }
}

/// How a column aligns its cells and whether it may be shortened to fit a width limit.
struct Column: Sendable {
    /// How a cell too long for a shortened column is cut.
    enum Elision: Sendable {
        /// Never shortened.
        case none
        /// Keep the start, end with `…` (function names).
        case tail
        /// Keep the end, start with `…` (paths).
        case head
    }

    /// The header text.
    var title: String
    /// Whether cells are padded on the left.
    var rightAligned: Bool = false
    /// How cells are cut when the column must shrink.
    var elision: Elision = .none
    /// The narrowest the column may become when shrinking.
    var minimumWidth: Int = 12
}

/// Lays out rows of cells in aligned columns separated by two spaces.
struct Table {
    /// The columns, left to right.
    var columns: [Column]
    /// The rows; each has one cell per column.
    var rows: [[Cell]]
    /// Whether the first line shows the column titles.
    var showsHeader: Bool = true
    /// Text put before every line.
    var indent: String = ""
    /// The paint for the header line's titles.
    var headerPaint: Paint? = .bold

    /// The lines of the table, each ending in a newline; lines fit in `style.width` when the columns can shrink.
    func render(style: Style) -> String {
        let widths = fittedWidths(limit: style.width)
        var lines: [String] = []
        if showsHeader {
            lines.append(line(columns.map { Cell($0.title, headerPaint) }, widths: widths, style: style))
        }
        for row in rows { lines.append(line(row, widths: widths, style: style)) }
        return lines.map { $0 + "\n" }.joined()
    }

    /// The natural width of each column: its widest cell, or its title when the header shows.
    func naturalWidths() -> [Int] {
        columns.indices.map { index in
            let cells = rows.map { TextFormatting.width($0[index].text) }.max() ?? 0
            return max(cells, showsHeader ? TextFormatting.width(columns[index].title) : 0)
        }
    }

    /// The column widths after shrinking elidable columns, widest first, until a line fits `limit` (or none can shrink).
    func fittedWidths(limit: Int?) -> [Int] {
        var widths = naturalWidths()
        guard let limit else { return widths }
        let total = { TextFormatting.width(indent) + widths.reduce(0, +) + 2 * max(widths.count - 1, 0) }
        var overflow = total() - limit
        while overflow > 0 {
            let candidates = columns.indices.filter {
                columns[$0].elision != .none && widths[$0] > max(columns[$0].minimumWidth, TextFormatting.width(columns[$0].title))
            }
            guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
            widths[widest] -= 1
            overflow -= 1
        }
        return widths
    }

    /// One line: each cell cut to its column, painted, padded (except the last), joined by two spaces.
    func line(_ cells: [Cell], widths: [Int], style: Style) -> String {
        // Cells after the last non-empty one are dropped, so no line ends in padding.
        let used = (cells.lastIndex { !$0.text.isEmpty } ?? -1) + 1
        var parts: [String] = []
        for (index, cell) in cells.prefix(used).enumerated() {
            let column = columns[index]
            let text = switch column.elision {
            case .none: cell.text
            case .tail: TextFormatting.elidingTail(cell.text, to: widths[index])
            case .head: TextFormatting.elidingHead(cell.text, to: widths[index])
            }
            let missing = max(widths[index] - TextFormatting.width(text), 0)
            let isLast = index == used - 1
            let painted = style.paint(text, cell.paint)
            if column.rightAligned {
                parts.append(String(repeating: " ", count: missing) + painted)
            } else {
                parts.append(isLast ? painted : painted + String(repeating: " ", count: missing))
            }
        }
        return indent + parts.joined(separator: "  ")
    }
}
