// ConfigFile.swift — crashwatch's settings file (`/etc/crashwatch.conf`, or `--config FILE`): `key = value`
// lines whose keys are the long option names they stand for. Options on the command line win.

/// A parsed settings file: option values by long option name.
public struct ConfigFile: Equatable, Sendable {
    /// Where crashwatch looks when no `--config` is given; a missing file there is not an error.
    public static let defaultPath = "/etc/crashwatch.conf"

    /// The keys a settings file may hold: the spool and retention options shared by `run` and `prune`,
    /// `debuginfod` (space-separated server URLs processing may ask), and `ship`'s options (`headers` in
    /// OpenTelemetry's `k1=v1,k2=v2` form; `gzip = yes|no`).
    public static let keys: Set<String> = ["spool", "max-reports", "max-bytes", "max-age", "max-per-exe", "debuginfod",
                                           "endpoint", "headers", "ca-file", "client-cert", "client-key", "timeout",
                                           "batch", "gzip", "max-body", "max-backoff"]

    /// Values by key, the last one winning.
    public private(set) var values: [String: String] = [:]
    /// The file the values came from, for messages.
    public let path: String

    /// An empty configuration (no file).
    public init() { path = "" }

    /// Parses the file's bytes, refusing text that is not UTF-8 (naming the line) rather than repairing it.
    public init(parsing bytes: [UInt8], path: String) throws(UsageError) {
        var line = 1, start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "\n") {
            guard String(validating: bytes[start..<index], as: UTF8.self) != nil else {
                throw UsageError("\(path):\(line): not valid UTF-8")
            }
            line += 1
            start = index + 1
        }
        try self.init(parsing: String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// Parses `text`: `key = value` per line; blank lines and lines starting with `#` are ignored;
    /// values may be quoted with double quotes (and must be, to hold ` #`: a `#` starts a comment only at
    /// the start of a line). An unknown key or a malformed line is an error naming the file and line.
    public init(parsing text: String, path: String) throws(UsageError) {
        self.path = path
        // "\r\n" is one Character in Swift: split on both line endings.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (number, rawLine) in lines.enumerated() {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw UsageError("\(path):\(number + 1): expected 'key = value', got '\(line)'")
            }
            let key = line[..<equals].trimmingCharacters(in: " \t")
            var value = line[line.index(after: equals)...].trimmingCharacters(in: " \t\r")
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            } else if value.contains(" #") || value.contains("\t#") {
                // `spool = /var/crash # ours` must not quietly become a path with a comment in it.
                throw UsageError("\(path):\(number + 1): '#' starts a comment only at the start of a line; quote the value if it holds ' #'")
            }
            guard ConfigFile.keys.contains(key) else {
                throw UsageError("\(path):\(number + 1): unknown setting '\(key)' (known: \(ConfigFile.keys.sorted().joined(separator: ", ")))")
            }
            guard !value.isEmpty else { throw UsageError("\(path):\(number + 1): '\(key)' has no value") }
            values[key] = value
        }
    }

    /// The value for `key`: the command line's when given, else the file's.
    public func value(_ key: String, overriddenBy parsed: ParsedArguments) -> String? {
        parsed.value(key) ?? values[key]
    }
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
