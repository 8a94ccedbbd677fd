// AnnotationOptions.swift — `run`'s operator annotations: `--annotate KEY=VALUE` (repeatable) and the settings
// file's `annotate` (comma-separated KEY=VALUE pairs), merged key by key with the command line's winning; and the
// deny-list `--annotation-deny WORD[,WORD...]` (settings `annotation-deny`) that replaces the default words
// keys are redacted for. A bad one on the command line is a usage error naming it; in the file, the setting is
// left out and named (fail open), as every other setting.
import CrashwatchCapture

enum AnnotationOptions {
    static let annotate = OptionSpec("annotate", value: "KEY=VALUE", repeatable: true, help: "record KEY=VALUE in every report's annotations (a deployment fact: region, environment, cluster); wins over the app's own value of KEY; at most 64, keys of 1 to 128 printable ASCII characters, values up to 1024 bytes")
    static let deny = OptionSpec("annotation-deny", value: "WORDS", help: "record annotations whose key contains one of these comma-separated words (case-insensitively) as <redacted>, the app's and --annotate's alike (default: password,secret,token,authorization,cookie)")
    static let specs = [annotate, deny]

    /// The operator's annotations: the settings file's `annotate`, then each `--annotate` (the command line's
    /// value wins a key both give).
    static func annotations(_ parsed: ParsedArguments, settings: ConfigFile) throws(UsageError) -> [String: String] {
        var result: [String: String] = [:]
        let fromFile = try settings.fileValue("annotate") { (text) throws(UsageError) -> [(key: String, value: String)] in
            try text.split(separator: ",", omittingEmptySubsequences: false).map { pair throws(UsageError) in
                switch AnnotationRules.operatorAnnotation(String(pair.drop { $0 == " " })) {
                case .success(let entry): entry
                case .failure(let why): throw UsageError(why.description)
                }
            }
        } ?? []
        if fromFile.count > AnnotationRules.maximumOperatorAnnotations {
            throw UsageError("\(settings.path):\(settings.lines["annotate"] ?? 0): more than \(AnnotationRules.maximumOperatorAnnotations) annotations in 'annotate'",
                             settingsKey: "annotate")
        }
        for (key, value) in fromFile { result[key] = value }
        for text in parsed.all("annotate") {
            switch AnnotationRules.operatorAnnotation(text) {
            case .success(let entry): result[entry.key] = entry.value
            case .failure(let why): throw UsageError("--annotate: \(why)")
            }
        }
        guard result.count <= AnnotationRules.maximumOperatorAnnotations else {
            throw UsageError("--annotate: \(result.count) annotations given, at most \(AnnotationRules.maximumOperatorAnnotations)")
        }
        return result
    }

    /// The deny-list: `--annotation-deny`, else the settings file's, else the default words.
    static func denyList(_ parsed: ParsedArguments, settings: ConfigFile) throws(UsageError) -> [String] {
        let words = try settings.value("annotation-deny", overriddenBy: parsed) { (text) throws(UsageError) -> [String] in
            let words = text.split(separator: ",").map { String($0.drop { $0 == " " }) }
            guard !words.isEmpty, words.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 128 && $0.utf8.allSatisfy { (0x21...0x7e).contains($0) } }) else {
                throw UsageError("--annotation-deny needs comma-separated words of printable ASCII, not '\(text)'")
            }
            return words
        }
        return words ?? AnnotationRules.defaultDeny
    }
}
