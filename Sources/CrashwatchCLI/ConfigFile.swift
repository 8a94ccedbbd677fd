// ConfigFile.swift — crashwatch's settings file (`/etc/crashwatch.conf`, or `--config FILE`): `key = value`
// lines whose keys are the long option names they stand for. Options on the command line win.
//
// Read strictly (the first mistake is an error: the reading commands, `ship`) or leniently (`run`: one file is
// shared by every wrapped service, and a typo must not stop them all): every line that cannot be taken is left
// out and named, a value that turns out to be bad when used (`settingsKey` on the error) is dropped, and the
// defaults stand for what was left out.

/// A parsed settings file: option values by long option name.
public struct ConfigFile: Equatable, Sendable {
    /// Where crashwatch looks when no `--config` is given; a missing file there is not an error.
    public static let defaultPath = "/etc/crashwatch.conf"

    /// The keys a settings file may hold: the spool and retention options shared by `run` and `prune`,
    /// `debuginfod` (space-separated server URLs processing may ask), `run`'s `annotate` (comma-separated
    /// KEY=VALUE pairs) and `annotation-deny` (comma-separated words), and `ship`'s options (`headers` in
    /// OpenTelemetry's `k1=v1,k2=v2` form; `gzip = yes|no`; `sentry` a Sentry DSN).
    public static let keys: Set<String> = ["spool", "max-reports", "max-bytes", "max-age", "max-per-exe", "debuginfod",
                                           "annotate", "annotation-deny",
                                           "endpoint", "headers", "ca-file", "client-cert", "client-key", "timeout",
                                           "batch", "gzip", "max-body", "max-backoff", "sentry", "sentry-environment"]

    /// What each key takes, in words: the whole of a message about a bad value from the file, which never
    /// quotes the value (the file may be one the caller may not read: `--config /etc/shadow`).
    static let valueForms: [String: String] = [
        "spool": "a directory path",
        "max-reports": "a whole number", "max-per-exe": "a whole number",
        "max-bytes": "a size such as 10M or 1G",
        "max-age": "a duration of at least 1m, such as 12h, 7d or 1d12h",
        "debuginfod": "space-separated http:// or https:// URLs",
        "annotate": "comma-separated KEY=VALUE pairs (keys of printable ASCII, at most 64 pairs)",
        "annotation-deny": "comma-separated words of printable ASCII",
        "endpoint": "an http:// or https:// URL",
        "headers": "comma-separated NAME=VALUE pairs, values percent-encoded",
        "ca-file": "a readable PEM file", "client-cert": "a readable PEM file", "client-key": "a readable PEM file",
        "timeout": "seconds (10, 2.5, 10s) or milliseconds (500ms), from 1ms to 1h",
        "batch": "a number from 1 to 1000",
        "gzip": "yes or no",
        "max-body": "a size such as 1M (0: never)",
        "max-backoff": "a duration from 1s to 1d",
        "sentry": "a Sentry DSN, https://KEY@HOST/PROJECT",
        "sentry-environment": "an environment name (one line, no '/')",
    ]

    /// Values by key, the last one winning.
    public private(set) var values: [String: String] = [:]
    /// The line each value was read from.
    public private(set) var lines: [String: Int] = [:]
    /// The file the values came from, for messages.
    public let path: String

    /// An empty configuration (no file).
    public init() { path = "" }

    /// Parses the file's bytes strictly: the first mistake (text that is not UTF-8, a line that cannot be
    /// taken) is an error naming the file and line.
    public init(parsing bytes: [UInt8], path: String) throws(UsageError) {
        var problems: [String] = []
        self.init(parsingLeniently: bytes, path: path, problems: &problems)
        if let first = problems.first { throw UsageError(first) }
    }

    /// Parses `text` strictly (see `init(parsing:path:)`).
    public init(parsing text: String, path: String) throws(UsageError) {
        try self.init(parsing: Array(text.utf8), path: path)
    }

    /// Parses the file's bytes leniently: each line that cannot be taken is left out and its mistake appended
    /// to `problems`, in line order; the other lines stand.
    ///
    /// `key = value` per line; blank lines and lines starting with `#` are ignored; values may be quoted with
    /// double quotes (and must be, to hold ` #`: a `#` starts a comment only at the start of a line). An
    /// unknown key, a malformed line, text that is not UTF-8 or a value holding a control character (NUL, a
    /// line break, any C0 or C1 control, DEL) is a mistake naming the file and line — and the key when it is
    /// a known one — but never quoting the file's text: `--config` may name a file the caller may not read,
    /// and its messages must not print it.
    public init(parsingLeniently bytes: [UInt8], path: String, problems: inout [String]) {
        self.path = path
        var number = 0, start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "\n") {
            number += 1
            defer { start = index + 1 }
            guard let text = String(validating: bytes[start..<index], as: UTF8.self) else {
                problems.append("\(path):\(number): not valid UTF-8")
                continue
            }
            do throws(UsageError) {
                guard let (key, value) = try Self.entry(text, path: path, number: number) else { continue }
                values[key] = value
                lines[key] = number
            } catch {
                problems.append(error.message)
            }
        }
    }

    /// The key and value of one line (`number`), nil for a blank or comment line; a mistake is an error.
    private static func entry(_ text: String, path: String, number: Int) throws(UsageError) -> (String, String)? {
        let line = text.drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" })
        if line.isEmpty || line.hasPrefix("#") { return nil }
        guard let equals = line.firstIndex(of: "=") else {
            throw UsageError("\(path):\(number): not a 'key = value' line (it has no '=')")
        }
        let key = line[..<equals].trimmingCharacters(in: " \t")
        guard ConfigFile.keys.contains(key) else {
            throw UsageError("\(path):\(number): unknown setting (the known ones: \(ConfigFile.keys.sorted().joined(separator: ", ")))")
        }
        var value = line[line.index(after: equals)...].trimmingCharacters(in: " \t\r")
        if let control = value.unicodeScalars.first(where: Self.isControl) {
            throw UsageError("\(path):\(number): the value of '\(key)' holds a control character "
                             + "(U+\(String(control.value, radix: 16, uppercase: true).leftPadded(to: 4))); values are one line of text")
        }
        if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
            value = String(value.dropFirst().dropLast())
        } else if value.contains(" #") || value.contains("\t#") {
            // `spool = /var/crash # ours` must not quietly become a path with a comment in it.
            throw UsageError("\(path):\(number): '#' starts a comment only at the start of a line; quote the value if it holds ' #'")
        }
        guard !value.isEmpty else { throw UsageError("\(path):\(number): '\(key)' has no value") }
        // Checked here, where the line is known: `run` reads it later and would quote a bad URL.
        if key == "debuginfod", value.split(separator: " ").contains(where: { !$0.hasPrefix("http://") && !$0.hasPrefix("https://") }) {
            throw UsageError("\(path):\(number): the value of 'debuginfod' is not \(Self.valueForms[key] ?? "valid")")
        }
        return (key, value)
    }

    /// Leaves `key` out, as if the file did not set it (its value was found bad when used).
    public mutating func remove(_ key: String) {
        values[key] = nil
        lines[key] = nil
    }

    /// Whether `scalar` is a control character: C0 (NUL to U+001F, the tab included), DEL, or C1.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
    }

    /// The file's value of `key` made sense of by `parse`; nil when the file has none. A refusal names the
    /// file, the line, the key and what the key takes (`valueForms`), never the value nor `parse`'s words,
    /// which may quote it.
    public func fileValue<T>(_ key: String, _ parse: (String) throws(UsageError) -> T) throws(UsageError) -> T? {
        guard let text = values[key] else { return nil }
        do { return try parse(text) } catch {
            throw UsageError("\(path):\(lines[key] ?? 0): the value of '\(key)' is not \(Self.valueForms[key] ?? "valid")",
                             settingsKey: key)
        }
    }

    /// The command line's value of `key` made sense of by `parse` (its errors passed on as they are: the
    /// caller typed it), else the file's (`fileValue`); nil when neither has one.
    public func value<T>(_ key: String, overriddenBy parsed: ParsedArguments,
                         _ parse: (String) throws(UsageError) -> T) throws(UsageError) -> T? {
        if let given = parsed.value(key) { return try parse(given) }
        return try fileValue(key, parse)
    }

    /// The value for `key`: the command line's when given, else the file's.
    public func value(_ key: String, overriddenBy parsed: ParsedArguments) -> String? {
        parsed.value(key) ?? values[key]
    }
}

extension String {
    /// The text with zeros in front, to at least `width` characters.
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

extension Substring {
    /// The text without leading and trailing characters from `set`.
    func trimmingCharacters(in set: String) -> String {
        var result = self
        while let first = result.first, set.contains(first) { result.removeFirst() }
        while let last = result.last, set.contains(last) { result.removeLast() }
        return String(result)
    }
}
