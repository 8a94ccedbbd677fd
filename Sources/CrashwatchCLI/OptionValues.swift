// OptionValues.swift — the value forms options share, each parsed and refused in one place with one
// message shape: a count, a size, a duration, a number of seconds, one of a few words, an absolute path.
import CrashwatchSpool

/// Parsers of option values; `option` is the long name without dashes, for the message.
enum OptionValue {
    /// A whole number of at least 1 (`--limit`, `--keep-cores`).
    static func count(_ text: String, option: String) throws(UsageError) -> Int {
        guard let value = Int(text), value >= 1 else { throw UsageError("--\(option) needs a whole number of at least 1, not '\(text)'") }
        return value
    }

    /// A size: `512K`, `8M`, `1G`.
    static func byteSize(_ text: String, option: String) throws(UsageError) -> Int64 {
        do { return try ByteSize.parse(text) } catch { throw UsageError("--\(option): \(error)") }
    }

    /// A duration: `90s`, `12h`, `1d12h`.
    static func duration(_ text: String, option: String) throws(UsageError) -> Duration {
        do { return try DurationText.parse(text) } catch { throw UsageError("--\(option): \(error)") }
    }

    /// A number of seconds, more than 0 and at most an hour (`--capture-timeout`).
    static func seconds(_ text: String, option: String) throws(UsageError) -> Double {
        guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
            throw UsageError("--\(option) needs a number of seconds between 0 and 3600, not '\(text)'")
        }
        return seconds
    }

    /// One of `words` (`--color auto|always|never`).
    static func choice(_ text: String, option: String, among words: [String]) throws(UsageError) -> String {
        guard words.contains(text) else {
            throw UsageError("--\(option) takes \(words.dropLast().joined(separator: ", ")) or \(words.last!), not '\(text)'")
        }
        return text
    }

    /// An absolute path (`--pid-file`, `--sysroot`).
    static func absolutePath(_ text: String, option: String) throws(UsageError) -> String {
        guard text.hasPrefix("/") else { throw UsageError("--\(option) needs an absolute path, not '\(text)'") }
        return text
    }
}

extension ParsedArguments {
    /// The option's value made sense of by `parse` (an `OptionValue` form), or nil when it was not given.
    func value<T>(_ name: String, _ parse: (String, String) throws(UsageError) -> T) throws(UsageError) -> T? {
        guard let text = value(name) else { return nil }
        return try parse(text, name)
    }
}
