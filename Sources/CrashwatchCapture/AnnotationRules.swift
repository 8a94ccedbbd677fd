// AnnotationRules.swift — who wins and what is hidden when the app's annotations (read from its memory) meet
// the operator's (`--annotate`): the operator's value wins a key both set (a deployment fact cannot be spoofed
// by the app), a key containing a deny-list word (case-insensitively) keeps its name and has its value
// replaced by `<redacted>`, and the report holds at most 256 annotations of bounded size. One function serves
// the minimal report, the worker's report and the supervisor's acceptance of it, so all three agree.
import CrashwatchModel

/// The merge, redaction and caps of annotations, and what an operator annotation may be.
public enum AnnotationRules {
    /// The words a key is redacted for when no `--annotation-deny` replaces them.
    public static let defaultDeny = ["password", "secret", "token", "authorization", "cookie"]
    /// What a redacted value reads.
    public static let redacted = "<redacted>"
    /// Operator annotations at most.
    public static let maximumOperatorAnnotations = 64

    /// Whether `key` contains one of `deny`'s words, case-insensitively.
    public static func isDenied(_ key: String, deny: [String]) -> Bool {
        let lowered = key.lowercased()
        return deny.contains { !$0.isEmpty && lowered.contains($0.lowercased()) }
    }

    /// The report's annotations: `app`'s (in precedence order: the first of a key wins) under `operator`'s,
    /// denied keys redacted, keys and values cut to the caps, at most `AnnotationFormat.maximumAnnotations`
    /// (the operator's first); nil when both are empty.
    public static func merged(app: [(key: String, value: String)], operator given: [String: String], deny: [String]) -> [String: String]? {
        var result: [String: String] = [:]
        func add(_ key: String, _ value: String) {
            let key = cut(key, AnnotationFormat.maximumKeySize)
            guard !key.isEmpty, result[key] == nil, result.count < AnnotationFormat.maximumAnnotations else { return }
            result[key] = isDenied(key, deny: deny) ? redacted : cut(value, AnnotationFormat.maximumValueSize)
        }
        for key in given.keys.sorted() { add(key, given[key] ?? "") }
        for (key, value) in app { add(key, value) }
        return result.isEmpty ? nil : result
    }

    /// `text` cut to at most `bytes` bytes of UTF-8, at a character boundary.
    static func cut(_ text: String, _ bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: bytes)
        while end > text.utf8.startIndex, end.samePosition(in: text.unicodeScalars) == nil { end = text.utf8.index(before: end) }
        return String(text[..<end])
    }

    /// Why `KEY=VALUE` is no operator annotation, or the key and value: the key 1–128 bytes of printable ASCII
    /// without `=`, the value at most 1024 bytes.
    public static func operatorAnnotation(_ text: String) -> Result<(key: String, value: String), AnnotationSyntaxError> {
        guard let equals = text.firstIndex(of: "=") else { return .failure(.init("'\(text)' is not KEY=VALUE")) }
        let key = String(text[..<equals]), value = String(text[text.index(after: equals)...])
        guard !key.isEmpty, key.utf8.count <= AnnotationFormat.maximumKeySize, key.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            return .failure(.init("annotation key '\(key)' must be 1 to \(AnnotationFormat.maximumKeySize) printable ASCII characters without spaces or '='"))
        }
        guard value.utf8.count <= AnnotationFormat.maximumValueSize else {
            return .failure(.init("the value of annotation '\(key)' is longer than \(AnnotationFormat.maximumValueSize) bytes"))
        }
        return .success((key, value))
    }

    /// The breadcrumbs a report may carry: the newest `AnnotationFormat.maximumBreadcrumbs`, messages cut to
    /// the cap, levels known or `unknown`, times kept only when they read as RFC 3339.
    public static func bounded(_ breadcrumbs: [BreadcrumbRecord]) -> [BreadcrumbRecord] {
        breadcrumbs.suffix(AnnotationFormat.maximumBreadcrumbs).map { crumb in
            BreadcrumbRecord(
                time: crumb.time.flatMap { $0.utf8.count <= 40 && RFC3339.parse($0) != nil ? $0 : nil },
                level: BreadcrumbRecord.levelNames.contains(crumb.level) ? crumb.level : "unknown",
                message: cut(crumb.message, AnnotationFormat.maximumMessageSize))
        }
    }
}

/// Why an operator annotation was refused.
public struct AnnotationSyntaxError: Error, Equatable, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
