// HTTP.swift — HTTP(S) POST for `crashwatch ship`, on libcurl (loaded on first use by the C shim, so the
// supervisor never loads it), and gzip on zlib. No HTTP or TLS of crashwatch's own.
import CCrashwatch
import Glibc

/// TLS settings of a client: whom to trust and who we are.
public struct TLSSettings: Equatable, Sendable {
    /// A PEM file of CA certificates to trust instead of the system's; nil: the system's CA bundle.
    public var caFile: String?
    /// A PEM client certificate for mutual TLS.
    public var clientCertificate: String?
    /// The client certificate's PEM key (nil: in the certificate file).
    public var clientKey: String?

    public init(caFile: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil) {
        self.caFile = caFile
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
    }
}

/// A response that arrived, whatever its status.
public struct HTTPResponse: Equatable, Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response body, cut at the client's limit.
    public var body: [UInt8]
    /// Whether the body was longer than the client's limit: `body` is then its first part only, and the
    /// transfer ended there (what followed was never read).
    public var bodyTruncated: Bool
    /// The server's Retry-After, in seconds from now, when it sent one.
    public var retryAfterSeconds: Int64?
    /// The `X-Sentry-Rate-Limits` header's value (a Sentry server's rate limits), when it sent one.
    public var rateLimits: String?

    public init(status: Int, body: [UInt8], bodyTruncated: Bool = false, retryAfterSeconds: Int64? = nil,
                rateLimits: String? = nil) {
        self.status = status
        self.body = body
        self.bodyTruncated = bodyTruncated
        self.retryAfterSeconds = retryAfterSeconds
        self.rateLimits = rateLimits
    }
}

/// An exchange that failed before a response arrived: libcurl's code and message, sorted into what went wrong.
public struct TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure it was, for verdicts and hints.
    public enum Kind: Equatable, Sendable {
        /// The host name did not resolve.
        case resolve
        /// Nothing accepted the connection (refused, unreachable).
        case connect
        /// The request took longer than the timeout.
        case timeout
        /// TLS failed: the handshake, or the server's certificate was not trusted.
        case tls
        /// Our own certificate, key or CA file could not be used.
        case localCertificate
        /// The connection broke while sending or receiving.
        case connection
        /// The caller abandoned the request (its cancel descriptor became readable).
        case cancelled
        /// Anything else libcurl reported.
        case other
    }

    /// The kind of failure.
    public let kind: Kind
    /// libcurl's CURLcode.
    public let code: Int32
    /// libcurl's message.
    public let message: String

    public init(kind: Kind, code: Int32, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    /// Sorts a CURLcode (values from curl.h) and its message into a kind. A TLS alert during the exchange
    /// (a server that wants a client certificate refuses after the handshake, in TLS 1.3) arrives as a
    /// send or receive error whose message names TLS.
    static func kind(of code: Int32, message: String) -> Kind {
        if code == 42 { return .cancelled }  // ABORTED_BY_CALLBACK: only the cancel check aborts
        if code == 55 || code == 56, message.contains("SSL") || message.contains("alert") { return .tls }
        return switch code {
        case 5, 6: .resolve                        // COULDNT_RESOLVE_PROXY, COULDNT_RESOLVE_HOST
        case 7: .connect                           // COULDNT_CONNECT
        case 28: .timeout                          // OPERATION_TIMEDOUT
        case 35, 51, 60, 83, 90, 91: .tls          // SSL_CONNECT_ERROR, PEER_FAILED_VERIFICATION, …, SSL_ISSUER_ERROR, PINNEDPUBKEYNOTMATCH, INVALIDCERTSTATUS
        case 53, 54, 58, 59, 64, 66, 77, 80, 82: .localCertificate // SSL_ENGINE_*, SSL_CERTPROBLEM, SSL_CIPHER, USE_SSL_FAILED, SSL_CACERT_BADFILE, SSL_SHUTDOWN_FAILED, SSL_CRL_BADFILE
        case 52, 55, 56, 92: .connection           // GOT_NOTHING, SEND_ERROR, RECV_ERROR, HTTP2_STREAM
        default: .other
        }
    }

    /// `libcurl error 7: Failed to connect to 127.0.0.1 port 9 …`.
    public var description: String { message }
}

/// An HTTP client for one endpoint's settings; keeps its connection between requests. Not thread-safe: one
/// thread uses it.
public final class HTTPClient {
    private let client: OpaquePointer
    /// The TLS settings every request uses.
    public let tls: TLSSettings
    /// The User-Agent header.
    public let userAgent: String
    /// The most response-body bytes read: a longer body ends the transfer there (`HTTPResponse.bodyTruncated`).
    public let maxResponseBytes: Int

    /// Loads libcurl when this is the first client; throws a message naming what is missing when it cannot.
    public init(tls: TLSSettings, userAgent: String, maxResponseBytes: Int = 64 * 1024) throws(TransportError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let client = cw_http_client_new(&error, error.count) else {
            throw TransportError(kind: .other, code: -1, message: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.client = client
        self.tls = tls
        self.userAgent = userAgent
        self.maxResponseBytes = maxResponseBytes
    }

    deinit { cw_http_client_free(client) }

    /// POSTs `body` to `url` with `headers` (name, value); a response of any status returns, a failed
    /// exchange throws. The request is abandoned (`.cancelled`) within about a second of `cancelDescriptor`
    /// becoming readable.
    public func post(_ url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int,
                     cancelDescriptor: Int32? = nil) throws(TransportError) -> HTTPResponse
    {
        let lines = headers.map { "\($0.0): \($0.1)" }
        var response = cw_http_response()
        let result: Int32 = withCStringArray(lines) { headerPointers in
            withOptionalCString(tls.caFile) { caFile in
                withOptionalCString(tls.clientCertificate) { certificate in
                    withOptionalCString(tls.clientKey) { key in
                        body.withUnsafeBytes { bytes in
                            url.withCString { urlPointer in
                                userAgent.withCString { agent in
                                    var request = cw_http_request()
                                    request.url = urlPointer
                                    request.headers = headerPointers
                                    request.header_count = lines.count
                                    request.body = bytes.baseAddress
                                    request.body_length = bytes.count
                                    request.timeout_ms = timeoutMs
                                    request.user_agent = agent
                                    request.ca_file = caFile
                                    request.client_certificate = certificate
                                    request.client_key = key
                                    request.max_response_bytes = maxResponseBytes
                                    request.cancel_fd = cancelDescriptor ?? -1
                                    return cw_http_post(client, &request, &response)
                                }
                            }
                        }
                    }
                }
            }
        }
        defer { cw_http_response_free(&response) }
        guard result == 0 else {
            let message = withUnsafeBytes(of: response.error) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw TransportError(kind: TransportError.kind(of: response.curl_code, message: message),
                                 code: response.curl_code, message: message)
        }
        let bodyBytes = response.body.map { Array(UnsafeBufferPointer(start: $0, count: response.body_length)) } ?? []
        let rateLimits = withUnsafeBytes(of: response.rate_limits) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return HTTPResponse(status: response.status, body: bodyBytes, bodyTruncated: response.body_truncated != 0,
                            retryAfterSeconds: response.retry_after_seconds >= 0 ? response.retry_after_seconds : nil,
                            rateLimits: rateLimits.isEmpty ? nil : rateLimits)
    }
}

/// gzip (RFC 1952) compression of a request body.
public enum Gzip {
    /// `bytes` as one gzip member.
    public static func compress(_ bytes: [UInt8]) throws(SystemError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        let result = bytes.withUnsafeBytes { cw_gzip($0.baseAddress, $0.count, &out, &length) }
        guard result == 0, let out else { throw SystemError("gzip", errno: lastErrno()) }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }
}

/// Calls `body` with a C string for `string`, or nil.
private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
