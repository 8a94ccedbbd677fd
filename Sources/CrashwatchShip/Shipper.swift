// Shipper.swift — moves reports from the spool to its destinations (an OTLP endpoint, a Sentry server, or
// both) without losing one: claim a batch, send it, and only then settle each report: acknowledged (removed)
// once every destination accepted it, quarantined when one refused it for good, or given back with its failed
// attempt (and the destinations that did accept it) recorded when the failure may pass. A shipper that dies
// holding claims loses nothing: its claims go stale and the next shipper takes them. This file: the types and
// the drain loop; sending and settling are in ShipDelivery.swift.
import CrashwatchModel
import CrashwatchRender
import CrashwatchSpool
import CrashwatchSystem

/// Sends one request body and returns the answer, or the failure of the exchange.
public protocol ExportTransport: AnyObject {
    /// The endpoint, for messages.
    var endpoint: String { get }
    /// POSTs a request body (an OTLP/JSON ExportLogsServiceRequest, a Sentry envelope).
    func send(_ body: [UInt8]) throws(TransportError) -> HTTPResponse
}

/// The transport of `ship`: HTTP(S) through libcurl, one connection kept open.
public final class HTTPExporter: ExportTransport {
    public let target: ExportTarget
    private let client: HTTPClient
    private let headers: [(String, String)]

    public var endpoint: String { target.url }
    /// A descriptor whose readability abandons the request in flight (`ship --follow`'s signalfd).
    public var cancelDescriptor: Int32?

    public init(target: ExportTarget, userAgent: String) throws(TransportError) {
        self.target = target
        client = try HTTPClient(tls: target.tls, userAgent: userAgent)
        headers = [("Content-Type", target.contentType)] + (target.gzip ? [("Content-Encoding", "gzip")] : []) + target.headers
    }

    public func send(_ body: [UInt8]) throws(TransportError) -> HTTPResponse {
        var payload = body
        if target.gzip {
            do { payload = try Gzip.compress(body) } catch {
                throw TransportError(kind: .other, code: -1, message: "gzip the request: \(error)")
            }
        }
        return try client.post(target.url, headers: headers, body: payload, timeoutMs: target.timeoutMilliseconds,
                               cancelDescriptor: cancelDescriptor)
    }
}

/// How a shipper batches, attaches and waits.
public struct ShipOptions: Sendable {
    /// Reports per request at most (`--batch`).
    public var batch: Int = 10
    /// The largest report attached whole as the record body (`--max-body`; 0: never).
    public var maxBodyBytes: Int = OTLPLogs.defaultMaxBodyBytes
    /// Retry delays (`--max-backoff`).
    public var backoff = Backoff()
    /// How long after its capture a report that is not complete yet (its minimal form, while `crashwatch run`'s
    /// worker adds frames and symbols) waits for the full one that replaces it under the same name, so the
    /// crash is sent once, whole. Past it the report is sent as it is (its worker died or ran out of time).
    public var processingGraceNanoseconds: Int64 = 30_000_000_000
    /// The records' instrumentation scope.
    public var scope: OTLPLogs.Scope

    public init(scope: OTLPLogs.Scope) { self.scope = scope }
}

/// What happened to one report (or to the shipper), as it happens.
public enum ShipEvent: Equatable, Sendable {
    /// The endpoint accepted the report; it is gone from the spool.
    case shipped(ReportFileName)
    /// The report was set aside in the quarantine, with the reason.
    case quarantined(ReportFileName, reason: String)
    /// Delivery failed in a way that may pass: the report is back in the spool, due again in `retryInMs`.
    case kept(ReportFileName, attempts: Int, retryInMs: Int64, error: String)
    /// Something a person should know that did not stop shipping (a server's warning, a spool hiccup).
    case warning(String)
}

/// Totals of one pass over the spool.
public struct ShipTotals: Equatable, Sendable {
    public var shipped = 0
    public var quarantined = 0
    public var kept = 0
    /// Whether the pass stopped because the endpoint is failing (due reports were left for later).
    public var paused = false
    /// Whether a request in flight was abandoned for a stop (its reports went back untouched).
    public var cancelled = false

    public init() {}
}

/// Ships a spool's reports to one or more destinations; one thread uses it.
public final class Shipper {
    public let spool: Spool
    /// Where reports go, in order; a report is acknowledged once all of them accepted it.
    public let destinations: [ShipDestination]
    public let options: ShipOptions
    /// Told about every report's outcome as it happens.
    let observe: (ShipEvent) -> Void
    /// The wall clock, nanoseconds since the epoch (tests move it).
    let now: () -> Int64
    /// A random number in [0, 1) for the backoff's jitter.
    let random: () -> Double

    /// Failed exports in a row; the backoff grows with it.
    var consecutiveFailures = 0
    /// The backoff's last delay, for the `kept` events of the failure that set it.
    var lastDelayMilliseconds: Int64 = 0
    /// Until when the destinations are left alone after a failure or a server's rate limit (wall clock, ns).
    public internal(set) var pausedUntil: Int64 = 0

    /// A shipper to one OTLP endpoint.
    public convenience init(spool: Spool, transport: any ExportTransport, options: ShipOptions,
                            now: @escaping () -> Int64 = { Clock.realtimeNanoseconds() },
                            random: @escaping () -> Double = { Double.random(in: 0..<1) },
                            observe: @escaping (ShipEvent) -> Void) {
        self.init(spool: spool, destinations: [.otlp(transport, scope: options.scope, maxBodyBytes: options.maxBodyBytes)],
                  options: options, now: now, random: random, observe: observe)
    }

    /// A shipper to `destinations` (at least one).
    public init(spool: Spool, destinations: [ShipDestination], options: ShipOptions,
                now: @escaping () -> Int64 = { Clock.realtimeNanoseconds() },
                random: @escaping () -> Double = { Double.random(in: 0..<1) },
                observe: @escaping (ShipEvent) -> Void) {
        precondition(!destinations.isEmpty, "a shipper needs a destination")
        self.spool = spool
        self.destinations = destinations
        self.options = options
        self.now = now
        self.random = random
        self.observe = observe
    }

    /// The first destination's transport (the only one of an OTLP-only shipper).
    public var transport: any ExportTransport { destinations[0].transport }

    /// Whether a report with `attempts` recorded is due at `time`. A next-attempt time further ahead than any
    /// backoff could set is not believed (a damaged or planted record must not hold a report back forever).
    func isDue(_ attempts: DeliveryAttempts?, at time: Int64) -> Bool {
        guard let attempts else { return true }
        let furthest = (options.backoff.maximumMilliseconds + Backoff.maximumRetryAfterSeconds * 1_000) * 1_000_000
        return attempts.nextAttempt <= time || attempts.nextAttempt > time + furthest
    }

    /// Sends every report that is due, batch by batch, until none is left, a destination fails (the rest wait
    /// for the backoff), or `shouldStop` says so (checked between batches: a request in flight is finished
    /// and settled first). Throws only when the spool itself cannot be used.
    public func drain(shouldStop: () -> Bool = { false }) throws(SpoolError) -> ShipTotals {
        var totals = ShipTotals()
        while !shouldStop() {
            let time = now()
            if pausedUntil > time {
                totals.paused = true
                break
            }
            let attempts = spool.allAttempts()
            let claims = try spool.claim(limit: max(options.batch, 1), where: { name in
                self.isDue(attempts[name], at: time) && !self.isBeingProcessed(name, at: time)
            })
            if claims.isEmpty { break }
            var items: [Item] = []
            for claim in claims {
                if let item = prepare(claim, attempts: attempts, totals: &totals) { items.append(item) }
            }
            if !items.isEmpty { ship(&items, totals: &totals) }
            if totals.cancelled || totals.paused { break }
        }
        return totals
    }

    /// Whether report `name` is young and not complete yet: its writer may still replace it with the full
    /// report (see `ShipOptions.processingGraceNanoseconds`). Only reports captured within the grace are
    /// read (a name dated in the future is not believed young).
    func isBeingProcessed(_ name: ReportFileName, at time: Int64) -> Bool {
        let age = time - name.timeNanoseconds
        guard age >= 0, age < options.processingGraceNanoseconds,
              let bytes = try? spool.read(name), let report = try? CrashReport.decode(bytes),
              let state = report.diagnostics.processing
        else { return false }
        return state != .complete
    }

    /// When the shipper should look again although nothing changed: the end of a pause, or the next time a
    /// report waiting after a failed attempt (in the spool, or claimed by a shipper that died) or a report
    /// still being processed becomes due; nil when nothing waits.
    public func nextWake() -> Int64? {
        let time = now()
        var wake: Int64? = pausedUntil > time ? pausedUntil : nil
        let attempts = spool.allAttempts()
        guard var present = try? spool.reportNames() else { return wake }
        present += ((try? spool.claims()) ?? []).filter(\.isStale).map(\.name)
        for name in present {
            var due: Int64?
            if let record = attempts[name], !isDue(record, at: time) { due = record.nextAttempt }
            if isBeingProcessed(name, at: time) { due = max(due ?? 0, name.timeNanoseconds + options.processingGraceNanoseconds) }
            if let due { wake = min(wake ?? due, due) }
        }
        return wake
    }

    /// How many reports in the spool wait for a retry (they have a failed attempt recorded).
    public func waitingForRetry() -> Int {
        let attempts = spool.allAttempts()
        guard !attempts.isEmpty, let present = try? spool.reportNames() else { return 0 }
        return present.filter { (attempts[$0]?.count ?? 0) > 0 }.count
    }
}
