// SentryEventAppContext.swift — what the app said about its run, in a Sentry event: each annotation a tag when
// Sentry takes it as one as it is (a key of at most 32 letters, digits, `_`, `.`, `:` or `-` that is none of
// crashwatch's own tags nor a key Sentry reserves; a value of 1 to 200 characters on one line), else a member
// of `extra.annotations`, unchanged; the breadcrumbs as Sentry breadcrumbs (the newest 256, oldest first),
// category `crashwatch`, their levels Sentry's (crashwatch's five are Sentry's own; another goes as `info`, with
// the level as it was in `data.level`). Bounded as AppContext bounds every renderer.
import CrashwatchModel

extension SentryEvent {
    /// crashwatch's own tags (`tags(of:)`): an annotation of the same key goes to `extra`.
    static let ownTagKeys: Set<String> = ["kind", "signal", "signal_code", "executable", "systemd_unit", "app", "fingerprint"]

    /// Tag keys Sentry keeps for itself (it drops or rewrites such tags): an annotation of such a key goes to `extra`.
    static let reservedTagKeys: Set<String> = ["release", "dist", "environment", "user", "filename", "function", "level",
                                               "logger", "server_name", "transaction", "event.type", "platform"]

    /// The report's annotations (`AppContext.annotations`, sorted by key) split into those Sentry takes as tags
    /// as they are and the others, for `extra.annotations`.
    static func annotations(of report: CrashReport) -> (tags: [(key: String, value: String)], extra: [(key: String, value: String)]) {
        var tags: [(key: String, value: String)] = []
        var extra: [(key: String, value: String)] = []
        for entry in AppContext.annotations(of: report).entries {
            if fitsTag(key: entry.key, value: entry.value) { tags.append(entry) } else { extra.append(entry) }
        }
        return (tags, extra)
    }

    /// Whether Sentry takes `key: value` as a tag unchanged: a key of 1 to 32 ASCII letters, digits, `_`, `.`, `:`
    /// or `-`, not crashwatch's nor Sentry's own (nor `sentry:…`), and a value of 1 to 200 characters (Unicode
    /// scalars, as Sentry counts) with no control character or line break and no space at either end.
    static func fitsTag(key: String, value: String) -> Bool {
        let keyAllowed = key.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_.:-".unicodeScalars.contains(scalar))
        }
        guard (1...32).contains(key.count), keyAllowed, !ownTagKeys.contains(key), !reservedTagKeys.contains(key),
              !key.hasPrefix("sentry:") else { return false }
        guard (1...200).contains(value.unicodeScalars.count), value.first != " ", value.last != " " else { return false }
        return !value.unicodeScalars.contains { scalar in
            scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
        }
    }

    /// `"breadcrumbs":{"values":[…]}` — the newest `AppContext.maxShippedBreadcrumbs`, oldest first: `timestamp`
    /// (when the app gave a plausible time), `type` `default`, `category` `crashwatch`, `level`, `message`;
    /// nothing for a report without breadcrumbs.
    static func breadcrumbs(of report: CrashReport, into json: inout JSONWriter) {
        let breadcrumbs = AppContext.breadcrumbs(of: report, limit: AppContext.maxShippedBreadcrumbs).entries
        guard !breadcrumbs.isEmpty else { return }
        json.object("breadcrumbs") { json in
            json.array("values") { json in
                for breadcrumb in breadcrumbs {
                    json.object { json in
                        if let time = breadcrumb.time, RFC3339.parse(time) != nil { json.member("timestamp", time) }
                        json.member("type", "default")
                        json.member("category", "crashwatch")
                        let level = sentryLevel(breadcrumb.level)
                        json.member("level", level)
                        json.member("message", breadcrumb.message)
                        if level != breadcrumb.level {
                            json.object("data") { json in json.member("level", breadcrumb.level) }
                        }
                    }
                }
            }
        }
    }

    /// Sentry's level of a crashwatch breadcrumb level: `debug`, `info`, `warning`, `error` and `fatal` are the
    /// same words; anything else (`unknown`) is `info`.
    static func sentryLevel(_ level: String) -> String {
        BreadcrumbRecord.levelNames.contains(level) ? level : "info"
    }
}
