// TextFormatting.swift — the small text tools the renderers share: making report strings safe to print on a
// terminal (a crashed process chose its own argv, thread names and paths, and may have put escape sequences in
// them), display widths counted in Characters, padding and eliding, UTC times, durations, shell quoting.
import CrashwatchModel

/// Text helpers shared by the list, show and summary renderers; all pure.
enum TextFormatting {
    // MARK: Terminal safety

    /// Whether a scalar must not reach a terminal as it is: C0 and C1 controls, DEL, and bidirectional overrides.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F: true
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The text with every scalar `needsEscape` flags written as `\xHH` or `\u{HHHH}`, so it prints on one line.
    static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) { result += escape(scalar) } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }

    /// One scalar as `\xHH` (below U+0100) or `\u{HHHH}`.
    static func escape(_ scalar: Unicode.Scalar) -> String {
        if scalar.value < 0x100 { return "\\x" + pad(Int(scalar.value), 2, radix: 16) }
        return "\\u{" + String(scalar.value, radix: 16) + "}"
    }

    // MARK: Widths

    /// The display width of already sanitized text, counted in Characters (one column each).
    static func width(_ text: String) -> Int { text.count }

    /// The text padded with spaces to `width` columns, on the right (left-aligned) or on the left (right-aligned).
    static func padded(_ text: String, to width: Int, rightAligned: Bool = false) -> String {
        let missing = width - self.width(text)
        guard missing > 0 else { return text }
        let spaces = String(repeating: " ", count: missing)
        return rightAligned ? spaces + text : text + spaces
    }

    /// The text cut to at most `width` columns, its end replaced by `…` when cut.
    static func elidingTail(_ text: String, to width: Int) -> String {
        guard self.width(text) > width else { return text }
        guard width > 1 else { return String(text.prefix(max(width, 0))) }
        return String(text.prefix(width - 1)) + "…"
    }

    /// The text cut to at most `width` columns, its start replaced by `…` when cut (for paths: the file name stays).
    static func elidingHead(_ text: String, to width: Int) -> String {
        guard self.width(text) > width else { return text }
        guard width > 1 else { return String(text.suffix(max(width, 0))) }
        return "…" + String(text.suffix(width - 1))
    }

    // MARK: Times and durations

    /// An RFC 3339 time as `2026-11-30 09:35:33` (UTC), or with `.532` milliseconds; sanitized input when unparsable.
    static func utcTime(_ rfc3339: String, milliseconds: Bool) -> String {
        guard let nanoseconds = RFC3339.parse(rfc3339) else { return sanitized(rfc3339) }
        let time = UTCDateTime(nanosecondsSinceEpoch: nanoseconds)
        var text = pad(time.year, 4) + "-" + pad(time.month, 2) + "-" + pad(time.day, 2)
        text += " " + pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2)
        if milliseconds { text += "." + pad(time.nanosecond / 1_000_000, 3) }
        return text
    }

    /// An RFC 3339 time as `2026-11-30 09:35:33.532 UTC`; the sanitized input, without `UTC`, when unparsable.
    static func utcStamp(_ rfc3339: String) -> String {
        RFC3339.parse(rfc3339) == nil ? sanitized(rfc3339) : utcTime(rfc3339, milliseconds: true) + " UTC"
    }

    /// A duration in milliseconds rounded to one decimal: `18.8 ms`; `?` for a non-finite or negative value.
    static func milliseconds(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 1e15 else { return "? ms" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) ms"
    }

    // MARK: Command lines

    /// Characters that need no quoting in a POSIX shell word, besides ASCII letters and digits.
    private static let shellSafePunctuation: Set<Unicode.Scalar> = ["@", "%", "+", "=", ":", ",", ".", "/", "-", "_"]

    /// One argument as a shell would need it typed: bare when safe, `'single quoted'`, or `$'…'` with escapes
    /// when it holds characters `needsEscape` flags.
    static func shellQuoted(_ argument: String) -> String {
        if argument.isEmpty { return "''" }
        let scalars = argument.unicodeScalars
        if scalars.contains(where: needsEscape) {
            return "$'" + scalars.map(dollarQuoted).joined() + "'"
        }
        let safe = scalars.allSatisfy { scalar in
            (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                || shellSafePunctuation.contains(scalar) || (!scalar.isASCII && !scalar.properties.isWhitespace)
        }
        if safe { return argument }
        return "'" + argument.replacing("'", with: "'\\''") + "'"
    }

    /// One character inside `$'…'`: itself, or the escape a shell reads back as it.
    private static func dollarQuoted(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\\": "\\\\"
        case "'": "\\'"
        case "\n": "\\n"
        case "\t": "\\t"
        case "\r": "\\r"
        default:
            !needsEscape(scalar) ? String(scalar)
                : scalar.value < 0x100 ? escape(scalar) : "\\u" + pad(Int(scalar.value), 4, radix: 16)
        }
    }

    /// An argument's exact bytes as a shell would need them typed: as `shellQuoted` when they are UTF-8,
    /// else `$'…'` with each byte that does not begin a valid UTF-8 character as `\xHH`.
    static func shellQuoted(bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return shellQuoted(text) }
        var text = "$'"
        var index = 0
        while index < bytes.count {
            // The character starting here (UTF-8 characters are 1 to 4 bytes), else one raw byte.
            let character = (1...min(4, bytes.count - index)).lazy
                .compactMap { String(validating: bytes[index..<(index + $0)], as: UTF8.self) }.first
            if let character, let scalar = character.unicodeScalars.first {
                text += dollarQuoted(scalar)
                index += character.utf8.count
            } else {
                text += "\\x" + pad(Int(bytes[index]), 2, radix: 16)
                index += 1
            }
        }
        return text + "'"
    }

    // MARK: Paths

    /// The last component of a path (`/src/demo/main.c` → `main.c`); the path itself when it has none.
    static func basename(_ path: String) -> String { ImageRecord.basename(path) }
}
