// Style.swift — how rendered text looks: whether to emit ANSI colour (SGR) codes and how wide the terminal is.
// The renderers are pure functions of a report and a `Style`; deciding the style (isatty, `NO_COLOR`, the
// terminal's column count) is the caller's job, helped by `Style(isTerminal:environment:width:)`.

/// Whether rendered text uses ANSI colour, and the terminal width a list must fit in.
public struct Style: Sendable, Equatable {
    /// Whether to wrap highlighted text in ANSI SGR escape codes; when false the output holds no escape at all.
    public var color: Bool
    /// The terminal width in columns that list lines should fit in, or nil for no limit (pipes, files).
    public var width: Int?

    /// Creates a style; no width means lines are never shortened.
    public init(color: Bool, width: Int? = nil) {
        self.color = color
        self.width = width
    }

    /// No colour and no width limit: the style for files, pipes and `export --format text`.
    public static let plain = Style(color: false)

    /// The conventional choice for a stream: colour only on a terminal, unless `NO_COLOR` is set or `TERM=dumb`.
    ///
    /// Follows https://no-color.org: a `NO_COLOR` variable with a non-empty value disables colour.
    public init(isTerminal: Bool, environment: [String: String], width: Int? = nil) {
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let dumb = environment["TERM"] == "dumb"
        self.init(color: isTerminal && !noColor && !dumb, width: width)
    }

    /// Wraps `text` in the escape codes of `paint` when colour is on; returns it unchanged otherwise.
    func paint(_ text: String, _ paint: Paint?) -> String {
        guard color, let paint, !text.isEmpty else { return text }
        return paint.rawValue + text + Paint.reset
    }
}

/// The few ANSI SGR sequences the renderers use; each is undone by `Paint.reset`.
enum Paint: String, Sendable {
    /// Bold: in-app frames, section headings, the list header.
    case bold = "\u{1B}[1m"
    /// Bold red: the signal.
    case alarm = "\u{1B}[1;31m"
    /// Green: the top in-app frame in a list line.
    case inApp = "\u{1B}[32m"

    /// Resets every attribute.
    static let reset = "\u{1B}[0m"
}
