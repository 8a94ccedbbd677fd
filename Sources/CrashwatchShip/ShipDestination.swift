// ShipDestination.swift — one place a shipper delivers reports to: an OTLP/HTTP logs endpoint (many reports per
// request) or a Sentry-compatible server (one envelope per report). A destination knows how a report is
// encoded, how encoded reports make one request, and what the server's answer means; the shipper does the rest
// (claims, settling, backoff) the same way for both.
import CrashwatchModel
import CrashwatchRender
import CrashwatchSystem

/// A destination: its name in the spool's delivery records, its transport, and its protocol.
public final class ShipDestination {
    /// The destination's name in a report's delivery record (`otlp`, `sentry`): a report delivered to some
    /// destinations of a shipper and not yet to others is not sent to the first ones again.
    public let name: String
    /// How requests travel.
    public let transport: any ExportTransport
    /// Reports per request at most (a Sentry envelope carries one event).
    public let batchLimit: Int?
    /// One report as this destination's entry.
    let encode: (CrashReport, [UInt8]) -> [UInt8]
    /// A request from entries.
    let request: ([[UInt8]]) -> [UInt8]
    /// What an answer means, and a hold the server asks for even when it accepted.
    let interpreter: (HTTPResponse) -> (outcome: ExportOutcome, holdSeconds: Int64?)
    /// A request that carries no report, for `ship --check`.
    public let emptyRequest: [UInt8]

    init(name: String, transport: any ExportTransport, batchLimit: Int?, encode: @escaping (CrashReport, [UInt8]) -> [UInt8],
         request: @escaping ([[UInt8]]) -> [UInt8], emptyRequest: [UInt8],
         interpret: @escaping (HTTPResponse) -> (outcome: ExportOutcome, holdSeconds: Int64?)) {
        self.name = name
        self.transport = transport
        self.batchLimit = batchLimit
        self.encode = encode
        self.request = request
        self.emptyRequest = emptyRequest
        interpreter = interpret
    }

    /// What `response` means for the reports a request carried, and how long the server asks the shipper to
    /// hold back even when it accepted them (seconds).
    public func interpret(_ response: HTTPResponse) -> (outcome: ExportOutcome, holdSeconds: Int64?) { interpreter(response) }

    /// An OTLP/HTTP logs endpoint: one ResourceLogs per report (`OTLPLogs`), `options.batch` per request.
    public static func otlp(_ transport: any ExportTransport, scope: OTLPLogs.Scope,
                            maxBodyBytes: Int = OTLPLogs.defaultMaxBodyBytes) -> ShipDestination {
        ShipDestination(name: "otlp", transport: transport, batchLimit: nil,
                        encode: { report, text in OTLPLogs.resourceLogs(for: report, reportText: text, maxBodyBytes: maxBodyBytes, scope: scope) },
                        request: OTLPLogs.request, emptyRequest: OTLPLogs.request([]), interpret: { (ExportOutcome.of($0), nil) })
    }

    /// A Sentry-compatible server: each report as one event (`SentryEvent`) in its own envelope.
    public static func sentry(_ transport: any ExportTransport, dsn: SentryDSN, settings: SentryEvent.Settings) -> ShipDestination {
        ShipDestination(name: "sentry", transport: transport, batchLimit: 1,
                        encode: { report, _ in
                            SentryEnvelope.envelope(eventID: SentryEvent.eventID(of: report), dsn: dsn,
                                                    event: SentryEvent.event(for: report, settings: settings))
                        },
                        request: { $0.first ?? [] }, emptyRequest: SentryEnvelope.emptyEnvelope(dsn: dsn), interpret: SentryEnvelope.outcome)
    }
}

extension ExportTarget {
    /// The target for a Sentry DSN: its envelope URL, `X-Sentry-Auth` for `client` (`crashwatch/1.2`), the
    /// envelope media type.
    public static func sentry(_ dsn: SentryDSN, client: String, gzip: Bool, timeoutMilliseconds: Int, tls: TLSSettings) -> ExportTarget {
        ExportTarget(url: dsn.envelopeURL, headers: [("X-Sentry-Auth", dsn.authHeader(client: client))], gzip: gzip,
                     timeoutMilliseconds: timeoutMilliseconds, tls: tls, contentType: SentryEnvelope.contentType)
    }
}
