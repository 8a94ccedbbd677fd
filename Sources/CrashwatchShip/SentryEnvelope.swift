// SentryEnvelope.swift — the Sentry envelope protocol around one event: the envelope (a header line, an item
// header line, the event), and what a Sentry-compatible server's answer means for the report it carried
// (Sentry's "Envelopes" and "Rate Limiting" developer documents): a 2xx is delivery; a 429 or a 2xx with
// `X-Sentry-Rate-Limits` holds sending back for the time it names; a 400 or 413 condemns the event.
import CrashwatchModel
import CrashwatchSystem

/// Sentry envelopes and the meaning of a Sentry server's answers.
public enum SentryEnvelope {
    /// The envelope's media type.
    public static let contentType = "application/x-sentry-envelope"

    /// An envelope holding one event: `{"event_id":…,"dsn":…}`, `{"type":"event","length":N,…}`, the event's
    /// bytes, each line ending in a newline. `eventID` is the event's 32 hex digits.
    public static func envelope(eventID: String, dsn: SentryDSN, event: [UInt8]) -> [UInt8] {
        var header = JSONWriter()
        header.object { json in
            json.member("event_id", eventID)
            json.member("dsn", dsn.publicText)
        }
        var item = JSONWriter()
        item.object { json in
            json.member("type", "event")
            json.member("content_type", "application/json")
            json.member("length", event.count)
        }
        var bytes = header.bytes
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: item.bytes)
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: event)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// An envelope without items (`{"dsn":…}` and a newline): servers authenticate it and accept it, so it
    /// checks a DSN without sending an event.
    public static func emptyEnvelope(dsn: SentryDSN) -> [UInt8] {
        var header = JSONWriter()
        header.object { json in json.member("dsn", dsn.publicText) }
        return header.bytes + [UInt8(ascii: "\n")]
    }

    /// The hold Sentry's `X-Sentry-Rate-Limits` puts on events, in seconds: the longest `retry_after` of the
    /// limits whose categories are empty (every category) or include `error` or `default`; nil when none applies
    /// or the header is unreadable. Form: `SECONDS:CATEGORIES:SCOPE[:REASON[:NAMESPACES]], …`, categories
    /// separated by `;`.
    public static func eventHoldSeconds(rateLimits header: String) -> Int64? {
        var hold: Int64?
        for limit in header.split(separator: ",").prefix(64) {
            let fields = limit.split(separator: ":", omittingEmptySubsequences: false)
            let seconds = fields[0].trimmingSpaces
            // Whole seconds, or a fraction the server may send: rounded up.
            guard !seconds.isEmpty, seconds.utf8.count <= 12, let value = Double(seconds), value.isFinite, value >= 0 else { continue }
            let categories = fields.count > 1 ? fields[1].split(separator: ";").map(\.trimmingSpaces) : []
            guard categories.isEmpty || categories.contains("error") || categories.contains("default") else { continue }
            hold = max(hold ?? 0, Int64(value.rounded(.up)))
        }
        return hold
    }

    /// The meaning of a Sentry server's answer to one envelope, and how long it asks the sender to hold back
    /// (seconds) even when it accepted the event.
    public static func outcome(of response: HTTPResponse) -> (outcome: ExportOutcome, holdSeconds: Int64?) {
        let status = response.status
        let hold = response.rateLimits.flatMap(eventHoldSeconds)
        let message = ExportOutcome.serverMessage(response.body).map { ": \($0)" } ?? ""
        switch status {
        case 200..<300:
            // The answer is `{"id":…}` at most: a 2xx is the acknowledgement whether or not its body was read whole.
            return (.accepted(warning: nil), hold)
        case 429:
            // Sentry's rule: the rate-limits header first, then Retry-After, else 60 seconds.
            let seconds = hold ?? response.retryAfterSeconds ?? 60
            return (.retry("HTTP 429 (rate limited for \(seconds)s)\(message)", retryAfterSeconds: seconds), nil)
        case 408, 500..<600:
            return (.retry("HTTP \(status)\(message)", retryAfterSeconds: hold ?? response.retryAfterSeconds), nil)
        case _ where ExportOutcome.configurationStatuses.contains(status):
            return (.retry("HTTP \(status)\(message) (check the DSN: its key, host and project)",
                           retryAfterSeconds: hold ?? response.retryAfterSeconds), nil)
        case 400..<500:
            return (.refused("HTTP \(status)\(message)"), nil)
        default:
            return (.retry("HTTP \(status) (redirects are not followed: give the DSN the server shows)", retryAfterSeconds: nil), nil)
        }
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String { ExportTarget.trimmedSpaces(self) }
}
