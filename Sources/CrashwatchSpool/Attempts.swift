// Attempts.swift — a shipper that could not deliver a report gives it back to the spool and records the
// failed attempt beside it, in `.attempts/<report name>`: how many attempts failed, when the last one was,
// when the next one is due, and why the last one failed. Every shipper on the spool reads it (so none retries
// early), `crashwatch list` shows it, and it goes when the report is delivered, quarantined or pruned.
import CrashwatchModel
import CrashwatchSystem

/// Failed delivery attempts of one report.
public struct DeliveryAttempts: Equatable, Sendable {
    /// How many attempts failed (at least 1).
    public var count: Int
    /// When the last attempt failed, nanoseconds since the epoch.
    public var lastAttempt: Int64
    /// When the report is due again, nanoseconds since the epoch.
    public var nextAttempt: Int64
    /// Why the last attempt failed, one line.
    public var lastError: String

    public init(count: Int, lastAttempt: Int64, nextAttempt: Int64, lastError: String) {
        self.count = count
        self.lastAttempt = lastAttempt
        self.nextAttempt = nextAttempt
        self.lastError = lastError
    }

    /// The most bytes of an error kept.
    static let maxErrorBytes = 1024

    /// The file's one line: `<count> <last ns> <next ns> <error>`.
    var line: String { "\(count) \(lastAttempt) \(nextAttempt) \(oneLine(lastError, maxBytes: Self.maxErrorBytes))\n" }

    /// Parses the file's line; nil for anything else (a damaged file counts as no attempts).
    init?(parsing bytes: [UInt8]) {
        var text = String(decoding: bytes, as: UTF8.self)
        guard text.hasSuffix("\n") else { return nil }
        text.removeLast()
        let parts = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let count = Int(parts[0]), count > 0, let last = Int64(parts[1]),
              let next = Int64(parts[2])
        else { return nil }
        self.init(count: count, lastAttempt: last, nextAttempt: next, lastError: String(parts[3]))
    }
}

extension Spool {
    /// The subdirectory of the spool that records failed delivery attempts.
    public static let attemptsDirectoryName = ".attempts"

    /// Records one more failed attempt of a report this process holds the claim on (call it before
    /// releasing the claim, so no other shipper sees the report without its record). Returns the new record.
    @discardableResult
    public func recordFailedAttempt(_ claim: ClaimedReport, error: String, nextAttempt: Int64,
                                    now: Int64 = Clock.realtimeNanoseconds()) throws(SpoolError) -> DeliveryAttempts
    {
        let previous = attempts(of: claim.name)?.count ?? 0
        let record = DeliveryAttempts(count: previous + 1, lastAttempt: now, nextAttempt: nextAttempt, lastError: error)
        let directory = try openSubdirectory(.attempts, create: true)
        do {
            try writeSmallFile(Array(record.line.utf8), named: claim.name.text, in: directory)
        } catch {
            throw .writeAttempts(spool: path, name: claim.name.text, error)
        }
        return record
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
