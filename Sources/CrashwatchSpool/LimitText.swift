// LimitText.swift — the text forms of retention limits that commands accept: sizes like `10M` and durations
// like `1d12h`, parsed by pure functions with errors that say what was wrong.
import CrashwatchModel
import CrashwatchSystem

/// Why a size or duration text was not accepted.
public enum LimitParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is empty (or only spaces).
    case empty
    /// The text is not a number followed by known units; `text` is what was given.
    case invalid(text: String, expected: String)
    /// The text has a minus sign: limits are never negative.
    case negative(text: String)
    /// The value does not fit in 64 bits.
    case overflow(text: String)

    /// One line for a person, e.g. `"10Q" is not a size (expected a number with K, M, G or T, e.g. 10M)`.
    public var description: String {
        switch self {
        case .empty: "empty value"
        case .invalid(let text, let expected): "\(quoted(text)) is not \(expected)"
        case .negative(let text): "\(quoted(text)) is negative"
        case .overflow(let text): "\(quoted(text)) is too large"
        }
    }
}

/// Sizes in bytes as text: `4096`, `512K`, `10M`, `2G`, `1T`.
public enum ByteSize {
    /// What `parse` expects, for error messages.
    static let expected = "a size (bytes, or a number with K, M, G or T, e.g. 10M)"

    /// Parses a size: a decimal number of bytes, optionally followed by `K`, `M`, `G` or `T` (powers of
    /// 1024, any case) and optionally `B` or `iB` after the unit (`10MB`, `10MiB`), or by `B` alone.
    ///
    /// Surrounding spaces are ignored; fractions, signs, spaces inside and values beyond `Int64.max` are
    /// refused.
    public static func parse(_ text: String) throws(LimitParseError) -> Int64 {
        let trimmed = try unsignedText(text)
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { throw .invalid(text: text, expected: expected) }
        let unit = trimmed.dropFirst(digits.count).lowercased()
        let shift: Int64
        switch unit {
        case "", "b": shift = 0
        case "k", "kb", "kib": shift = 10
        case "m", "mb", "mib": shift = 20
        case "g", "gb", "gib": shift = 30
        case "t", "tb", "tib": shift = 40
        default: throw .invalid(text: text, expected: expected)
        }
        let value = try number(digits, of: text)
        let (scaled, overflow) = value.multipliedReportingOverflow(by: Int64(1) << shift)
        if overflow { throw .overflow(text: text) }
        return scaled
    }
}

/// Durations as text: `90s`, `15m`, `12h`, `7d`, `2w`, and combinations like `1d12h` or `1h 30m`.
public enum DurationText {
    /// What `parse` expects, for error messages.
    static let expected = "a duration (a number with s, m, h, d or w, e.g. 7d or 1d12h)"

    /// Parses a duration: one or more parts, each a decimal number followed by `s` (seconds), `m`
    /// (minutes), `h` (hours), `d` (days) or `w` (weeks), optionally separated by spaces; a lone number is
    /// seconds. Units are lowercase only (`M` could be read as months).
    ///
    /// Parts add up, in any order. Fractions, signs and totals beyond `Int64.max` seconds are refused.
    public static func parse(_ text: String) throws(LimitParseError) -> Duration {
        let trimmed = try unsignedText(text)
        if trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) {
            let seconds = try number(trimmed, of: text)
            return .seconds(seconds)
        }
        var total: Int64 = 0
        var rest = Substring(trimmed)
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let unit = rest.dropFirst(digits.count).first else {
                throw .invalid(text: text, expected: expected)
            }
            let seconds: Int64
            switch unit {
            case "s": seconds = 1
            case "m": seconds = 60
            case "h": seconds = 3600
            case "d": seconds = 86_400
            case "w": seconds = 604_800
            default: throw .invalid(text: text, expected: expected)
            }
            let count = try number(digits, of: text)
            let (part, overflow) = count.multipliedReportingOverflow(by: seconds)
            let (sum, overflow2) = total.addingReportingOverflow(part)
            if overflow || overflow2 { throw .overflow(text: text) }
            total = sum
            rest = rest.dropFirst(digits.count + 1).drop { $0 == " " }
        }
        return .seconds(total)
    }
}

/// `text` without surrounding spaces and tabs; `.empty` when nothing is left, `.negative` when it starts with `-`.
private func unsignedText(_ text: String) throws(LimitParseError) -> String {
    let trimmed = text.trimmingSpaces
    guard !trimmed.isEmpty else { throw .empty }
    if trimmed.hasPrefix("-") { throw .negative(text: text) }
    return trimmed
}

/// The value of ASCII `digits` (`decimalNumber`), part of `text`; `.overflow` beyond `Int64.max`.
private func number(_ digits: some StringProtocol, of text: String) throws(LimitParseError) -> Int64 {
    guard let value = decimalNumber(digits).flatMap({ Int64(exactly: $0) }) else { throw .overflow(text: text) }
    return value
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isBlank).reversed().drop(while: isBlank).reversed())
    }
}
