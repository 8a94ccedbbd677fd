// Export.swift — one OTLP/HTTP export: where it goes (the endpoint, its headers), how it is sent (gzip,
// timeout) and what the answer means for the reports in it (accepted, refused for good, or try again later).
// FoundationEssentials only (JSONDecoder): the full Foundation would map ICU and about 6 MB more into every
// `crashwatch run`, which links this module.
import CrashwatchModel
import CrashwatchSystem
import FoundationEssentials

/// An OTLP/HTTP logs endpoint and how to talk to it.
public struct ExportTarget: Equatable, Sendable {
    /// The full URL requests are POSTed to (`…/v1/logs`).
    public var url: String
    /// Extra headers (authentication, tenancy), name and value.
    public var headers: [(String, String)]
    /// Whether request bodies are gzip-compressed.
    public var gzip: Bool
    /// The whole request's time limit, in milliseconds.
    public var timeoutMilliseconds: Int
    /// Whom to trust and who we are, for HTTPS.
    public var tls: TLSSettings
    /// The request bodies' media type.
    public var contentType: String

    public init(url: String, headers: [(String, String)] = [], gzip: Bool = false, timeoutMilliseconds: Int = 10_000,
                tls: TLSSettings = TLSSettings(), contentType: String = "application/json") {
        self.url = url
        self.headers = headers
        self.gzip = gzip
        self.timeoutMilliseconds = timeoutMilliseconds
        self.tls = tls
        self.contentType = contentType
    }

    public static func == (lhs: ExportTarget, rhs: ExportTarget) -> Bool {
        lhs.url == rhs.url && lhs.headers.elementsEqual(rhs.headers, by: ==) && lhs.gzip == rhs.gzip
            && lhs.timeoutMilliseconds == rhs.timeoutMilliseconds && lhs.tls == rhs.tls && lhs.contentType == rhs.contentType
    }

    /// The endpoint for a URL as given: http or https with a host; without a path (or with `/`) the OTLP
    /// logs path `/v1/logs` is added, any other path is used as it is. Throws a message for anything else.
    public static func normalizedURL(_ text: String) throws(ExportSetupError) -> String {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw ExportSetupError("endpoint '\(text)' is not an http:// or https:// URL")
        }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) else {
            throw ExportSetupError("endpoint '\(text)' contains spaces or control characters")
        }
        // The scheme was checked above: the authority starts after "://".
        let afterScheme = text.dropFirst(lower.hasPrefix("https://") ? 8 : 7)
        let authorityEnd: Substring.Index = afterScheme.firstIndex { (character: Character) in
            character == "/" || character == "?" || character == "#"
        } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        let host = authority.split(separator: "@").last.map(String.init) ?? ""
        guard !host.isEmpty, !host.hasPrefix(":") else { throw ExportSetupError("endpoint '\(text)' has no host") }
        let rest = afterScheme[authorityEnd...]
        if rest.isEmpty || rest == "/" { return String(text[..<authorityEnd]) + "/v1/logs" }
        return text
    }

    /// Headers from OpenTelemetry's `OTEL_EXPORTER_OTLP_HEADERS` form: `k1=v1,k2=v2`, percent-encoded values.
    public static func parseHeaderList(_ text: String) throws(ExportSetupError) -> [(String, String)] {
        var headers: [(String, String)] = []
        for item in text.split(separator: ",") {
            let trimmed = trimmedSpaces(item)
            if trimmed.isEmpty { continue }
            headers.append(try parseHeader(trimmed, percentDecoded: true))
        }
        return headers
    }

    /// One `NAME=VALUE` header; the name must be an HTTP token, the value free of line breaks.
    public static func parseHeader(_ text: String, percentDecoded: Bool = false) throws(ExportSetupError) -> (String, String) {
        guard let equals = text.firstIndex(of: "=") else { throw ExportSetupError("header '\(text)' is not NAME=VALUE") }
        let name = trimmedSpaces(text[..<equals])
        var value = trimmedSpaces(text[text.index(after: equals)...])
        if percentDecoded { value = percentDecoding(value) ?? value }
        let token = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".unicodeScalars)
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ token.contains($0) }) else {
            throw ExportSetupError("header name '\(name)' is not a valid HTTP header name")
        }
        guard !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7f }) else {
            throw ExportSetupError("the value of header '\(name)' contains control characters")
        }
        let reserved = ["content-type", "content-encoding", "content-length", "host", "transfer-encoding"]
        guard !reserved.contains(name.lowercased()) else {
            throw ExportSetupError("header '\(name)' is set by crashwatch itself and cannot be given")
        }
        return (name, value)
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmedSpaces(_ text: some StringProtocol) -> String {
        var slice = Substring(text)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }

    /// `%XX` escapes decoded (as UTF-8); nil when an escape is malformed or the bytes are not UTF-8.
    static func percentDecoding(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.nibble), let low = iterator.next().flatMap(Hex.nibble) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// A setting that cannot work, in words.
public struct ExportSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What an export's answer means for the reports it carried.
public enum ExportOutcome: Equatable, Sendable {
    /// Every record was accepted (a 2xx read whole, without rejected records); `warning` is the server's
    /// message, if any.
    case accepted(warning: String?)
    /// The server refused these records for good: a 2xx that rejected records, or a 4xx other than the ones
    /// that mean "later" or "misconfigured". Retrying the same bytes cannot help.
    case refused(String)
    /// Not delivered, for a reason that may pass: 5xx, 408, 429, a network or TLS failure, a 401/403/404/
    /// 405/407/415 that says the shipper's own configuration is wrong (not the report), or a 2xx whose body
    /// was longer than the client reads (not read whole: not an acknowledgement). `retryAfterSeconds` is
    /// the server's Retry-After.
    case retry(String, retryAfterSeconds: Int64?)

    /// Statuses of a 4xx that mean the endpoint or credentials are wrong, not the report: the reports are
    /// kept and retried, never quarantined for a shipper's misconfiguration.
    static let configurationStatuses: Set<Int> = [401, 403, 404, 405, 407, 415]

    /// The meaning of a response that arrived.
    public static func of(_ response: HTTPResponse) -> ExportOutcome {
        let status = response.status
        let message = serverMessage(response.body)
        switch status {
        case 200..<300 where response.bodyTruncated:
            // The answer was not read whole: a partialSuccess rejection may be in the part not read, so this
            // is no acknowledgement. The reports are kept and sent again later.
            return .retry("HTTP \(status) with a response body longer than the \(response.body.count) bytes crashwatch reads: "
                          + "not read whole, so not taken as an acknowledgement", retryAfterSeconds: response.retryAfterSeconds)
        case 200..<300:
            let partial = partialSuccess(response.body)
            if partial.rejected > 0 {
                return .refused("rejected \(partial.rejected) record\(partial.rejected == 1 ? "" : "s")"
                                + (partial.message.map { ": \($0)" } ?? ""))
            }
            return .accepted(warning: partial.message)
        case 408, 429, 500..<600:
            return .retry("HTTP \(status)" + (message.map { ": \($0)" } ?? ""), retryAfterSeconds: response.retryAfterSeconds)
        case _ where configurationStatuses.contains(status):
            return .retry("HTTP \(status)" + (message.map { ": \($0)" } ?? "") + " (check the endpoint and its headers)",
                          retryAfterSeconds: response.retryAfterSeconds)
        case 400..<500:
            return .refused("HTTP \(status)" + (message.map { ": \($0)" } ?? ""))
        default:
            // 1xx or 3xx as a final answer: redirects are not followed; the endpoint should be corrected.
            return .retry("HTTP \(status) (redirects are not followed: give the final URL)", retryAfterSeconds: nil)
        }
    }

    /// The meaning of an exchange that failed: always worth another try.
    public static func of(_ error: TransportError) -> ExportOutcome {
        .retry(error.message, retryAfterSeconds: nil)
    }

    /// The most bytes of a server's message kept.
    static let maxMessageBytes = 512

    /// A server's message: google.rpc.Status's `message` (the OTLP error body; Bugsink's too), else a `detail`
    /// (Sentry's error body), else the body as text, one line, cut short; nil for an empty body.
    static func serverMessage(_ body: [UInt8]) -> String? {
        if let status = decoded(ServerStatus.self, body), let message = status.message ?? status.detail {
            return message.isEmpty ? nil : shortened(message)
        }
        var text = String(decoding: body, as: UTF8.self)
        while let first = text.unicodeScalars.first, first.properties.isWhitespace { text.unicodeScalars.removeFirst() }
        while let last = text.unicodeScalars.last, last.properties.isWhitespace { text.unicodeScalars.removeLast() }
        return text.isEmpty || text == "{}" ? nil : shortened(text)
    }

    /// An ExportLogsServiceResponse's partialSuccess: rejected records (int64 as a string or a number) and the message.
    static func partialSuccess(_ body: [UInt8]) -> (rejected: Int64, message: String?) {
        guard let partial = decoded(ExportResponse.self, body)?.partialSuccess else { return (0, nil) }
        let message = partial.errorMessage.flatMap { $0.isEmpty ? nil : shortened($0) }
        return (partial.rejectedLogRecords?.value ?? 0, message)
    }

    /// google.rpc.Status, as much of it as is read.
    private struct ServerStatus: Decodable {
        var message: String?
        var detail: String?
    }

    /// ExportLogsServiceResponse, as much of it as is read.
    private struct ExportResponse: Decodable {
        struct PartialSuccess: Decodable {
            var rejectedLogRecords: FlexibleInt64?
            var errorMessage: String?
        }
        var partialSuccess: PartialSuccess?
    }

    /// An int64 as OTLP/JSON writes it (a decimal string) or as some servers do (a number).
    private struct FlexibleInt64: Decodable {
        var value: Int64
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                value = number
            } else {
                value = Int64(try container.decode(String.self)) ?? 0
            }
        }
    }

    private static func decoded<T: Decodable>(_ type: T.Type, _ body: [UInt8]) -> T? {
        guard body.first == UInt8(ascii: "{") else { return nil }
        return try? JSONDecoder().decode(type, from: Data(body))
    }

    private static func shortened(_ text: String) -> String {
        var line = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : Character($0) })
        if line.utf8.count > maxMessageBytes {
            while line.utf8.count > maxMessageBytes { line.removeLast() }
            line += "…"
        }
        return line
    }
}

/// When to try again: exponential backoff from one second, doubling per consecutive failure up to a
/// maximum, with "equal jitter" (a random point in the upper half of the step) so that shippers restarted
/// together spread out; a server's Retry-After is a floor (capped at an hour).
public struct Backoff: Equatable, Sendable {
    /// The first delay.
    public var initialMilliseconds: Int64 = 1_000
    /// The longest delay (`--max-backoff`).
    public var maximumMilliseconds: Int64 = 300_000
    /// The longest Retry-After honoured.
    public static let maximumRetryAfterSeconds: Int64 = 3_600

    public init(maximumMilliseconds: Int64 = 300_000) {
        self.maximumMilliseconds = max(maximumMilliseconds, initialMilliseconds)
    }

    /// The delay after `failures` consecutive failures (1 for the first), with `unit` in [0, 1) the random
    /// draw for the jitter, and `retryAfterSeconds` from the server.
    public func delayMilliseconds(failures: Int, retryAfterSeconds: Int64?, unit: Double) -> Int64 {
        let exponent = min(max(failures - 1, 0), 30)
        let step = min(initialMilliseconds << Int64(exponent), maximumMilliseconds)
        let jittered = step / 2 + Int64(Double(step / 2) * min(max(unit, 0), 1))
        guard let retryAfter = retryAfterSeconds, retryAfter > 0 else { return jittered }
        return max(jittered, min(retryAfter, Self.maximumRetryAfterSeconds) * 1_000)
    }
}
