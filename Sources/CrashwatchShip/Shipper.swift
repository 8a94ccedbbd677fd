// Shipper.swift — moves reports from the spool to an OTLP endpoint without losing one: claim a batch, send
// it, and only then settle each report: acknowledged (removed) after the endpoint accepted it, quarantined
// when the endpoint refused it for good, or given back with its failed attempt recorded when the failure may
// pass. A shipper that dies holding claims loses nothing: its claims go stale and the next shipper takes them.
import CrashwatchModel
import CrashwatchRender
import CrashwatchSpool
import CrashwatchSystem

/// Sends one request body and returns the answer, or the failure of the exchange.
public protocol ExportTransport: AnyObject {
    /// The endpoint, for messages.
    var endpoint: String { get }
    /// POSTs an ExportLogsServiceRequest (OTLP/JSON).
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
        headers = [("Content-Type", "application/json")] + (target.gzip ? [("Content-Encoding", "gzip")] : []) + target.headers
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

/// Ships a spool's reports through a transport; one thread uses it.
public final class Shipper {
    public let spool: Spool
    public let transport: any ExportTransport
    public let options: ShipOptions
    /// Told about every report's outcome as it happens.
    private let observe: (ShipEvent) -> Void
    /// The wall clock, nanoseconds since the epoch (tests move it).
    private let now: () -> Int64
    /// A random number in [0, 1) for the backoff's jitter.
    private let random: () -> Double

    /// Failed exports in a row; the backoff grows with it.
    private(set) var consecutiveFailures = 0
    /// Until when the endpoint is left alone after a failure (wall clock, ns).
    public private(set) var pausedUntil: Int64 = 0

    public init(spool: Spool, transport: any ExportTransport, options: ShipOptions,
                now: @escaping () -> Int64 = { Clock.realtimeNanoseconds() },
                random: @escaping () -> Double = { Double.random(in: 0..<1) },
                observe: @escaping (ShipEvent) -> Void) {
        self.spool = spool
        self.transport = transport
        self.options = options
        self.now = now
        self.random = random
        self.observe = observe
    }

    /// Whether a report with `attempts` recorded is due at `time`. A next-attempt time further ahead than any
    /// backoff could set is not believed (a damaged or planted record must not hold a report back forever).
    func isDue(_ attempts: DeliveryAttempts?, at time: Int64) -> Bool {
        guard let attempts else { return true }
        let furthest = (options.backoff.maximumMilliseconds + Backoff.maximumRetryAfterSeconds * 1_000) * 1_000_000
        return attempts.nextAttempt <= time || attempts.nextAttempt > time + furthest
    }

    /// Sends every report that is due, batch by batch, until none is left, the endpoint fails (the rest wait
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
            var entries: [(claim: ClaimedReport, record: [UInt8])] = []
            for claim in claims {
                if let record = prepare(claim, attempts: attempts, totals: &totals) {
                    entries.append((claim, record))
                }
            }
            if !entries.isEmpty { send(entries, attempts: attempts, totals: &totals) }
            if totals.cancelled { break }
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
        return present.filter { attempts[$0] != nil }.count
    }

    // MARK: Steps

    /// Reads and encodes one claimed report; one that cannot be read as a report is quarantined (nil).
    private func prepare(_ claim: ClaimedReport, attempts: [ReportFileName: DeliveryAttempts], totals: inout ShipTotals)
        -> [UInt8]?
    {
        let bytes: [UInt8]
        do {
            bytes = try claim.bytes()
        } catch .claimLost {
            return nil
        } catch let error where error.systemError != nil {
            // An I/O error may pass: keep the report, as for a failed export.
            keep([claim], error: "cannot read the report: \(error)", retryAfterSeconds: nil, attempts: attempts, totals: &totals)
            return nil
        } catch {
            quarantine(claim, reason: "\(error)", totals: &totals)
            return nil
        }
        let report: CrashReport
        do { report = try CrashReport.decode(bytes) } catch {
            quarantine(claim, reason: "not a crashwatch report: \(error)", totals: &totals)
            return nil
        }
        return OTLPLogs.resourceLogs(for: report, reportText: bytes, maxBodyBytes: options.maxBodyBytes, scope: options.scope)
    }

    /// Exports `entries` in one request and settles each by the answer. A refusal of several records is
    /// narrowed down by sending them one by one (OTLP does not say which records a partial success rejected).
    private func send(_ entries: [(claim: ClaimedReport, record: [UInt8])], attempts: [ReportFileName: DeliveryAttempts],
                      totals: inout ShipTotals) {
        let outcome: ExportOutcome
        do { outcome = ExportOutcome.of(try transport.send(OTLPLogs.request(entries.map(\.record)))) } catch {
            if error.kind == .cancelled {
                // Abandoned for a stop: nothing was decided about these reports; they go back as they were.
                for entry in entries { giveBack(entry.claim) }
                totals.cancelled = true
                return
            }
            outcome = ExportOutcome.of(error)
        }
        switch outcome {
        case .accepted(let warning):
            consecutiveFailures = 0
            if let warning { observe(.warning("\(transport.endpoint) accepted with a warning: \(warning)")) }
            for entry in entries {
                do {
                    try spool.acknowledge(entry.claim)
                    totals.shipped += 1
                    observe(.shipped(entry.claim.name))
                } catch {
                    observe(.warning("\(entry.claim.name.text) was delivered but could not be removed from the spool: \(error)"))
                }
            }
        case .refused where entries.count > 1:
            consecutiveFailures = 0
            for (index, entry) in entries.enumerated() {
                if pausedUntil > now() || totals.cancelled {
                    // The endpoint began failing meanwhile: the rest go back untried, attempts unchanged.
                    for rest in entries[index...] { giveBack(rest.claim) }
                    totals.paused = true
                    return
                }
                send([entry], attempts: attempts, totals: &totals)
            }
        case .refused(let reason):
            consecutiveFailures = 0
            quarantine(entries[0].claim, reason: "refused by \(transport.endpoint): \(reason)", totals: &totals)
        case .retry(let error, let retryAfter):
            keep(entries.map(\.claim), error: error, retryAfterSeconds: retryAfter, attempts: attempts, totals: &totals)
        }
    }

    /// Records a failed attempt for each claim, gives them back, and pauses the endpoint for the backoff.
    private func keep(_ claims: [ClaimedReport], error: String, retryAfterSeconds: Int64?,
                      attempts: [ReportFileName: DeliveryAttempts], totals: inout ShipTotals) {
        consecutiveFailures += 1
        let most = claims.map { attempts[$0.name]?.count ?? 0 }.max() ?? 0
        let delay = options.backoff.delayMilliseconds(failures: max(consecutiveFailures, most + 1),
                                                      retryAfterSeconds: retryAfterSeconds, unit: random())
        let time = now()
        pausedUntil = time + delay * 1_000_000
        totals.paused = true
        for claim in claims {
            var count = (attempts[claim.name]?.count ?? 0) + 1
            do {
                count = try spool.recordFailedAttempt(claim, error: error, nextAttempt: pausedUntil, now: time).count
            } catch {
                observe(.warning("\(error)"))
            }
            giveBack(claim)
            totals.kept += 1
            observe(.kept(claim.name, attempts: count, retryInMs: delay, error: error))
        }
    }

    /// Returns a claim to the spool; a failure is told (the claim then goes stale when this shipper ends).
    private func giveBack(_ claim: ClaimedReport) {
        do { try spool.release(claim) } catch .claimLost {
        } catch {
            observe(.warning("\(error)"))
        }
    }

    /// Quarantines a claimed report with `reason`.
    private func quarantine(_ claim: ClaimedReport, reason: String, totals: inout ShipTotals) {
        do {
            try spool.quarantine(claim, reason: reason)
        } catch .writeQuarantineReason(_, _, let error) {
            observe(.warning("\(claim.name.text) was quarantined, but its reason could not be written: \(error.reason)"))
        } catch .claimLost {
            return
        } catch {
            observe(.warning("\(error)"))
            giveBack(claim)
            return
        }
        totals.quarantined += 1
        observe(.quarantined(claim.name, reason: reason))
    }
}
