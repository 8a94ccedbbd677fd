// HTML.swift — the one way report text becomes HTML: `HTML.escaped` and `HTMLBuilder`. A report is hostile input
// (a crashed program chose its own argv, thread names, paths, environment, and the symbols of what it loaded), so
// the builder takes tag and attribute names only as `StaticString`s written in this module, and every value —
// element text and attribute values alike — goes through `HTML.escaped`: terminal-unsafe characters become
// visible `\xHH` escapes first (as on the show page), then `& < > " '` become character references. The page's
// own style and script are `StaticString`s too, and the page's Content-Security-Policy allows only them
// (HTMLAssets.swift), so a markup mistake here still could not run or load anything.
import CrashwatchModel

/// HTML escaping for report text.
enum HTML {
    /// The text made safe for element content and double- or single-quoted attribute values: sanitized as on the
    /// show page (controls and bidirectional overrides as `\xHH`/`\u{…}`), then `& < > " '` as references.
    static func escaped(_ text: String) -> String {
        let clean = TextFormatting.sanitized(text)
        guard clean.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return clean
        }
        var result = ""
        result.reserveCapacity(clean.utf8.count + 16)
        for scalar in clean.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// An HTML document being written: fixed tag and attribute names from this module, escaped values from reports.
struct HTMLBuilder {
    /// The markup so far.
    private(set) var html = ""

    /// Appends a start tag; attributes whose value is nil are left out, the others are escaped and double-quoted.
    mutating func open(_ tag: StaticString, _ attributes: KeyValuePairs<StaticString, String?> = [:]) {
        html += "<" + tag.description
        for (name, value) in attributes {
            guard let value else { continue }
            html += " " + name.description + "=\"" + HTML.escaped(value) + "\""
        }
        html += ">"
    }

    /// Appends an end tag.
    mutating func close(_ tag: StaticString) {
        html += "</" + tag.description + ">"
    }

    /// Appends report (or any) text, escaped.
    mutating func text(_ value: String) {
        html += HTML.escaped(value)
    }

    /// Appends `<tag>text</tag>`, the text escaped.
    mutating func element(_ tag: StaticString, _ value: String) {
        element(tag, [:], value)
    }

    /// Appends `<tag …>text</tag>`, the text escaped.
    mutating func element(_ tag: StaticString, _ attributes: KeyValuePairs<StaticString, String?>, _ value: String) {
        open(tag, attributes)
        text(value)
        close(tag)
    }

    /// Appends markup written in this module as it is: the page's frame, style and script.
    mutating func markup(_ fixed: StaticString) {
        html += fixed.description
    }

    /// Appends a newline, so the page source reads line by line.
    mutating func newline() {
        html += "\n"
    }

    /// Appends `<dt>label</dt><dd>value</dd>` on a line of its own (one fact of a description list); nothing
    /// when the value is nil.
    mutating func fact(_ label: StaticString, _ value: String?, class className: String? = nil) {
        guard let value else { return }
        open("dt")
        markup(label)
        close("dt")
        element("dd", ["class": className], value)
        newline()
    }
}
