// Attempts.swift — a shipper that could not deliver a report gives it back to the spool and records the
// failed attempt beside it, in `.attempts/<report name>`: how many attempts failed, when the last one was,
// when the next one is due, and why the last one failed; and, for a shipper with several destinations, which
// of them already accepted the report (it is not sent to those again). Every shipper on the spool reads it (so
// none retries early), `crashwatch list` shows it, and it goes when the report is delivered, quarantined or
// pruned.
import CrashwatchModel
import CrashwatchSystem

/// Failed delivery attempts of one report, and the destinations that already accepted it.
public struct DeliveryAttempts: Equatable, Sendable {
    /// How many attempts failed (0 only when the record holds deliveries alone).
    public var count: Int
    /// When the last attempt failed, nanoseconds since the epoch.
    public var lastAttempt: Int64
    /// When the report is due again, nanoseconds since the epoch.
    public var nextAttempt: Int64
    /// Why the last attempt failed, one line.
    public var lastError: String
    /// The destinations (`otlp`, `sentry`) that accepted the report already, in the order they did.
    public var delivered: [String]

    public init(count: Int, lastAttempt: Int64, nextAttempt: Int64, lastError: String, delivered: [String] = []) {
        self.count = count
        self.lastAttempt = lastAttempt
        self.nextAttempt = nextAttempt
        self.lastError = lastError
        self.delivered = delivered
    }

    /// The most bytes of an error kept.
    static let maxErrorBytes = 1024
    /// The most destinations a record names (a damaged file cannot make a long list).
    static let maxDestinations = 8

    /// The file's text: `<count> <last ns> <next ns> <error>`, then one `delivered <destination>` line each.
    var line: String {
        "\(count) \(lastAttempt) \(nextAttempt) \(oneLine(lastError, maxBytes: Self.maxErrorBytes))\n"
            + delivered.prefix(Self.maxDestinations).map { "delivered \(oneLine($0, maxBytes: 64))\n" }.joined()
    }

    /// Parses the file's text; nil for anything else (a damaged file counts as no attempts).
    init?(parsing bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasSuffix("\n") else { return nil }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, lines.count <= 1 + Self.maxDestinations else { return nil }
        let parts = first.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let count = Int(parts[0]), count >= 0, let last = Int64(parts[1]),
              let next = Int64(parts[2])
        else { return nil }
        var delivered: [String] = []
        for line in lines.dropFirst() {
            guard line.hasPrefix("delivered "), line.count > 10 else { return nil }
            delivered.append(String(line.dropFirst(10)))
        }
        guard count > 0 || !delivered.isEmpty else { return nil }
        self.init(count: count, lastAttempt: last, nextAttempt: next, lastError: String(parts[3]), delivered: delivered)
    }
}

extension Spool {
    /// The subdirectory of the spool that records failed delivery attempts.
    public static let attemptsDirectoryName = ".attempts"

    /// Records one more failed attempt of a report this process holds the claim on (call it before
    /// releasing the claim, so no other shipper sees the report without its record), with the destinations
    /// that accepted it meanwhile (`delivered`, added to those recorded). Returns the new record.
    @discardableResult
    public func recordFailedAttempt(_ claim: ClaimedReport, error: String, nextAttempt: Int64,
                                    now: Int64 = Clock.realtimeNanoseconds(), delivered: [String] = []) throws(SpoolError)
        -> DeliveryAttempts
    {
        let previous = attempts(of: claim.name)
        var destinations = previous?.delivered ?? []
        for name in delivered where !destinations.contains(name) { destinations.append(name) }
        let record = DeliveryAttempts(count: (previous?.count ?? 0) + 1, lastAttempt: now, nextAttempt: nextAttempt,
                                      lastError: error, delivered: destinations)
        try writeAttempts(record, of: claim)
        return record
    }

    /// Records that destinations `delivered` accepted a claimed report, without a failed attempt (the shipper
    /// stopped before its other destinations were tried). Call it before releasing the claim.
    public func recordDelivered(_ claim: ClaimedReport, to delivered: [String]) throws(SpoolError) {
        var record = attempts(of: claim.name) ?? DeliveryAttempts(count: 0, lastAttempt: 0, nextAttempt: 0, lastError: "")
        let before = record.delivered.count
        for name in delivered where !record.delivered.contains(name) { record.delivered.append(name) }
        if record.delivered.count != before { try writeAttempts(record, of: claim) }
    }

    /// Writes a claimed report's record.
    private func writeAttempts(_ record: DeliveryAttempts, of claim: ClaimedReport) throws(SpoolError) {
        let directory = try openSubdirectory(.attempts, create: true)
        do {
            try writeSmallFile(Array(record.line.utf8), named: claim.name.text, in: directory)
        } catch {
            throw .writeAttempts(spool: path, name: claim.name.text, error)
        }
    }

    /// The failed attempts recorded for report `name`; nil when there are none (or the record is damaged).
    public func attempts(of name: ReportFileName) -> DeliveryAttempts? {
        guard (try? subdirectoryExists(.attempts)) == true,
              let directory = try? openSubdirectory(.attempts, create: false),
              case .contents(let bytes)? = try? directory.readFile(named: name.text, maxBytes: 4096)
        else { return nil }
        return DeliveryAttempts(parsing: bytes)
    }

    /// Every report's recorded attempts, by report name (damaged records left out).
    public func allAttempts() -> [ReportFileName: DeliveryAttempts] {
        guard (try? subdirectoryExists(.attempts)) == true,
              let directory = try? openSubdirectory(.attempts, create: false),
              let names = try? directory.entryNames()
        else { return [:] }
        var result: [ReportFileName: DeliveryAttempts] = [:]
        for text in names {
            guard let name = ReportFileName(parsing: text),
                  case .contents(let bytes)? = try? directory.readFile(named: text, maxBytes: 4096),
                  let record = DeliveryAttempts(parsing: bytes)
            else { continue }
            result[name] = record
        }
        return result
    }

    /// Forgets report `name`'s attempts (after it was delivered or quarantined). Nothing recorded is fine.
    public func forgetAttempts(of name: ReportFileName) {
        guard (try? subdirectoryExists(.attempts)) == true,
              let directory = try? openSubdirectory(.attempts, create: false)
        else { return }
        try? directory.removeFile(named: name.text)
    }

    /// Removes attempt records whose report is gone from the spool and its claims (delivered by a shipper
    /// that died before forgetting, or pruned); returns how many.
    @discardableResult
    public func removeOrphanedAttempts() -> Int {
        guard (try? subdirectoryExists(.attempts)) == true,
              let directory = try? openSubdirectory(.attempts, create: false),
              let names = try? directory.entryNames()
        else { return 0 }
        var present = Set((try? entryNames()) ?? [])
        for claim in (try? claims()) ?? [] { present.insert(claim.name.text) }
        var removed = 0
        for name in names where !name.hasPrefix(".") && !present.contains(name) {
            if (try? directory.removeFile(named: name)) != nil { removed += 1 }
        }
        return removed
    }

    /// Writes a small file of the spool's bookkeeping (`name` in `directory`) atomically: a temporary file
    /// named for this process, 0640, fsync, rename over the old one, fsync of the directory.
    func writeSmallFile(_ bytes: [UInt8], named name: String, in directory: borrowing DirectoryHandle) throws(SystemError) {
        let temporary = ".\(name).tmp-\(ProcessProbe.currentID)"
        // A leftover of a writer that died here would block O_EXCL: it is ours to replace.
        try? directory.removeFile(named: temporary)
        do {
            try directory.writeAtomically(bytes, named: name, temporaryName: temporary, permissions: Self.reportPermissions)
        } catch {
            throw error.error
        }
    }
}
