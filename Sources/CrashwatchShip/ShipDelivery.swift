// ShipDelivery.swift — one batch of claimed reports through every destination, then each report settled once:
// acknowledged when every destination has accepted it (now or on an earlier attempt), quarantined when one
// refused it for good, kept (attempt and deliveries recorded) when a failure may pass, given back untouched when
// it was not tried (a stop, or a destination that began failing).
import CrashwatchModel
import CrashwatchSpool

extension Shipper {
    /// A claimed report on its way: what it is, where it was delivered, and what stops it.
    struct Item {
        let claim: ClaimedReport
        let report: CrashReport
        let text: [UInt8]
        /// Destinations that accepted it, on an earlier attempt or in this pass.
        var delivered: [String]
        /// Destinations that accepted it in this pass.
        var deliveredNow: [String] = []
        /// Why it cannot be acknowledged in this pass, once one destination said so.
        var verdict: Verdict?
    }

    /// What stops a report from being acknowledged now.
    enum Verdict {
        /// A destination refused it for good.
        case refused(String)
        /// A failure that may pass; the report is kept with this error.
        case retry(String)
        /// Not tried: the shipper stopped, or a destination began failing first.
        case untried
    }

    /// Reads and decodes one claimed report; one that cannot be read as a report is quarantined (nil).
    func prepare(_ claim: ClaimedReport, attempts: [ReportFileName: DeliveryAttempts], totals: inout ShipTotals) -> Item? {
        let bytes: [UInt8]
        do {
            bytes = try claim.bytes()
        } catch .claimLost {
            return nil
        } catch let error where error.systemError != nil {
            // An I/O error may pass: keep the report, as for a failed export.
            pause(retryAfterSeconds: nil, attempts: [claim.name])
            keep(claim, error: "cannot read the report: \(error)", delivered: [], attempts: attempts, totals: &totals)
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
        return Item(claim: claim, report: report, text: bytes, delivered: attempts[claim.name]?.delivered ?? [])
    }

    /// Sends `items` to each destination that has not accepted them yet, then settles each.
    func ship(_ items: inout [Item], totals: inout ShipTotals) {
        let attempts = spool.allAttempts()
        for destination in destinations {
            let waiting = items.indices.filter { items[$0].verdict == nil && !items[$0].delivered.contains(destination.name) }
            let limit = max(1, min(destination.batchLimit ?? options.batch, options.batch))
            var start = 0
            while start < waiting.count {
                let chunk = Array(waiting[start..<min(start + limit, waiting.count)])
                start += limit
                if totals.cancelled || pausedUntil > now() {
                    for index in chunk { items[index].verdict = .untried }
                    continue
                }
                deliver(chunk, of: &items, to: destination, totals: &totals)
            }
        }
        for item in items { settle(item, attempts: attempts, totals: &totals) }
    }

    /// Sends the items at `indices` to `destination` in one request and records the answer in each. A refusal of
    /// several is narrowed down by sending them one by one (OTLP does not say which records it rejected).
    private func deliver(_ indices: [Int], of items: inout [Item], to destination: ShipDestination, totals: inout ShipTotals) {
        let entries = indices.map { destination.encode(items[$0].report, items[$0].text) }
        let outcome: ExportOutcome
        var hold: Int64?
        do {
            (outcome, hold) = destination.interpret(try destination.transport.send(destination.request(entries)))
        } catch {
            if error.kind == .cancelled {
                // Abandoned for a stop: nothing was decided about these reports; they go back as they were.
                for index in indices { items[index].verdict = .untried }
                totals.cancelled = true
                return
            }
            outcome = ExportOutcome.of(error)
        }
        let prefix = destinations.count > 1 ? "\(destination.name): " : ""
        switch outcome {
        case .accepted(let warning):
            consecutiveFailures = 0
            if let warning { observe(.warning("\(destination.transport.endpoint) accepted with a warning: \(warning)")) }
            for index in indices {
                items[index].delivered.append(destination.name)
                items[index].deliveredNow.append(destination.name)
            }
            if let hold, hold > 0 {
                // Accepted, but the server asks for a pause (Sentry's X-Sentry-Rate-Limits on a 2xx).
                pausedUntil = max(pausedUntil, now() + min(hold, Backoff.maximumRetryAfterSeconds) * 1_000_000_000)
                observe(.warning("\(destination.transport.endpoint) asks for no more events for \(hold)s (rate limit)"))
            }
        case .refused where indices.count > 1:
            consecutiveFailures = 0
            for index in indices {
                if pausedUntil > now() || totals.cancelled {
                    // The destination began failing meanwhile: the rest go back untried, attempts unchanged.
                    items[index].verdict = .untried
                    continue
                }
                deliver([index], of: &items, to: destination, totals: &totals)
            }
        case .refused(let reason):
            consecutiveFailures = 0
            items[indices[0]].verdict = .refused("\(prefix)refused by \(destination.transport.endpoint): \(reason)")
        case .retry(let error, let retryAfter):
            pause(retryAfterSeconds: retryAfter, attempts: indices.map { items[$0].claim.name })
            for index in indices { items[index].verdict = .retry(prefix + error) }
        }
    }

    /// Starts the backoff after a failure: every destination is left alone until it ends.
    private func pause(retryAfterSeconds: Int64?, attempts names: [ReportFileName] = []) {
        consecutiveFailures += 1
        let recorded = spool.allAttempts()
        let most = names.map { recorded[$0]?.count ?? 0 }.max() ?? 0
        let delay = options.backoff.delayMilliseconds(failures: max(consecutiveFailures, most + 1),
                                                      retryAfterSeconds: retryAfterSeconds, unit: random())
        lastDelayMilliseconds = delay
        pausedUntil = max(pausedUntil, now() + delay * 1_000_000)
    }

    /// Settles one item by its verdict (none: every destination accepted it).
    private func settle(_ item: Item, attempts: [ReportFileName: DeliveryAttempts], totals: inout ShipTotals) {
        switch item.verdict {
        case nil where destinations.allSatisfy({ item.delivered.contains($0.name) }):
            do {
                try spool.acknowledge(item.claim)
                totals.shipped += 1
                observe(.shipped(item.claim.name))
            } catch {
                observe(.warning("\(item.claim.name.text) was delivered but could not be removed from the spool: \(error)"))
            }
        case .refused(let reason):
            quarantine(item.claim, reason: reason, totals: &totals)
        case .retry(let error):
            keep(item.claim, error: error, delivered: item.deliveredNow, attempts: attempts, totals: &totals)
        case nil, .untried:
            if !item.deliveredNow.isEmpty {
                do { try spool.recordDelivered(item.claim, to: item.deliveredNow) } catch { observe(.warning("\(error)")) }
            }
            if !totals.cancelled { totals.paused = true }
            giveBack(item.claim)
        }
    }

    /// Records a failed attempt (and the destinations that accepted the report in this pass), gives the claim
    /// back, due again when the pause ends.
    private func keep(_ claim: ClaimedReport, error: String, delivered: [String], attempts: [ReportFileName: DeliveryAttempts],
                      totals: inout ShipTotals) {
        let time = now()
        var count = (attempts[claim.name]?.count ?? 0) + 1
        do {
            count = try spool.recordFailedAttempt(claim, error: error, nextAttempt: pausedUntil, now: time, delivered: delivered).count
        } catch {
            observe(.warning("\(error)"))
        }
        giveBack(claim)
        totals.kept += 1
        totals.paused = true
        observe(.kept(claim.name, attempts: count, retryInMs: lastDelayMilliseconds, error: error))
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
