// ReportAnnotations.swift — what the app knew when it crashed: the key/value annotations and the breadcrumb
// ring a program keeps in its own memory (annotations/crashwatch_annotations.h, docs/annotations.md), read
// while the process is held and decoded by the worker, merged with the operator's `--annotate` facts.

/// One breadcrumb: something the app recorded shortly before the crash, as it was in the ring.
public struct BreadcrumbRecord: Codable, Sendable, Equatable {
    /// When the app recorded it (its CLOCK_REALTIME), RFC 3339 UTC with milliseconds; nil when the time the
    /// table held was not a plausible one (before 2000 or after the capture by more than a day).
    public var time: String?
    /// `debug`, `info`, `warning`, `error` or `fatal`; `unknown` for a level number the format does not define.
    public var level: String
    /// The text, UTF-8 (invalid bytes replaced by U+FFFD, with a soft error).
    public var message: String

    public init(time: String?, level: String, message: String) {
        self.time = time
        self.level = level
        self.message = message
    }

    /// The level names of the format's level numbers 0...4.
    public static let levelNames = ["debug", "info", "warning", "error", "fatal"]

    /// The level name of a level number (`unknown` past the known ones).
    public static func levelName(_ number: Int) -> String {
        levelNames.indices.contains(number) ? levelNames[number] : "unknown"
    }
}
