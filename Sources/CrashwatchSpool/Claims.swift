// Claims.swift — readers (shippers) claim reports before sending them: a claim is an atomic rename into
// `.claims/<report name>.<holder>`, acknowledged by removing it and released by renaming it back. The holder
// is the claiming process's pid and start time (ClaimHolder.swift), so a claim whose holder died is recognised
// and taken over. This file: the claim types, the listing, and the steps the operations share; taking claims is
// in ClaimTaking.swift, settling them (acknowledge, release) in ClaimSettling.swift.
import CrashwatchSystem

/// A report this process (or the holder it claimed for) has taken out of the spool; read it, send it, then
/// `acknowledge` or `release` it.
public struct ClaimedReport: Hashable, Sendable, CustomStringConvertible {
    /// The report's file name, as it was in the spool.
    public let name: ReportFileName
    /// The process holding the claim.
    public let holder: ClaimHolder
    /// The spool the claim belongs to.
    let spool: Spool

    /// A claim on `name` by `holder` in `spool`.
    init(name: ReportFileName, holder: ClaimHolder, spool: Spool) {
        self.name = name
        self.holder = holder
        self.spool = spool
    }

    /// The claim's file name inside `.claims`: `<report name>.<holder>`.
    public var entryName: String { "\(name.text).\(holder.text)" }

    /// The claimed file's full path, `<spool>/.claims/<report name>.<holder>`, for tools that want a path.
    public var path: String { spool.join("\(Spool.claimsDirectoryName)/\(entryName)") }

    /// The claimed report's bytes, read without following links and refusing more than `maxBytes`.
    public func bytes(maxBytes: Int = Spool.defaultMaxReadBytes) throws(SpoolError) -> [UInt8] {
        guard try spool.subdirectoryExists(.claims) else { throw .claimLost(spool: spool.path, name: name.text) }
        let claims = try spool.openSubdirectory(.claims, create: false)
        do {
            let shown = "\(Spool.claimsDirectoryName)/\(entryName)"
            return try spool.readEntry(entryName, in: claims, maxBytes: maxBytes, shown: shown)
        } catch .readReport(_, _, let error) where error.isNotFound {
            throw .claimLost(spool: spool.path, name: name.text)
        }
    }

    /// The claim's path.
    public var description: String { path }

    /// Two claims are equal when they name the same report, holder and spool object.
    public static func == (lhs: ClaimedReport, rhs: ClaimedReport) -> Bool {
        lhs.name == rhs.name && lhs.holder == rhs.holder && lhs.spool === rhs.spool
    }

    /// Hashes the report name and holder.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(holder)
    }
}

/// One claim as `Spool.claims()` lists it: the claim, its size, and whether its holder died.
public struct ClaimInfo: Equatable, Sendable {
    /// The claim (report name, holder, path, bytes).
    public let claim: ClaimedReport
    /// The claimed file's size in bytes.
    public let bytes: Int64
    /// Whether the holder is gone (its pid is free, a zombie, or reused by a later process): the next
    /// `claim` takes the report over.
    public let isStale: Bool

    /// A listing entry.
    public init(claim: ClaimedReport, bytes: Int64, isStale: Bool) {
        self.claim = claim
        self.bytes = bytes
        self.isStale = isStale
    }

    /// The claimed report's name.
    public var name: ReportFileName { claim.name }

    /// The claim's holder.
    public var holder: ClaimHolder { claim.holder }
}

/// A claim's file name in `.claims`, parsed: `<report name>.<holder>`.
struct ClaimEntry {
    /// The report's name.
    let name: ReportFileName
    /// Who holds it.
    let holder: ClaimHolder
    /// The entry's file name.
    let text: String

    /// Parses an entry of `.claims`; other names (temporary files, foreign files) are nil.
    init?(parsing text: String) {
        // The holder never contains a dot, so the report name ends at the last one.
        let bytes = Array(text.utf8)
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")),
              let name = ReportFileName(parsing: String(decoding: bytes[..<dot], as: UTF8.self)),
              let holder = ClaimHolder(parsing: String(decoding: bytes[(dot + 1)...], as: UTF8.self))
        else { return nil }
        self.name = name
        self.holder = holder
        self.text = text
    }
}

/// Remembers, within one spool operation, which holders are alive, so each is probed once.
struct HolderLiveness {
    /// The caller's own holder, alive by definition.
    let me: ClaimHolder
    /// Verdicts so far.
    private var known: [ClaimHolder: Bool] = [:]

    /// Liveness for an operation run by `me`.
    init(me: ClaimHolder) { self.me = me }

    /// Whether `holder` is alive (probing it the first time).
    mutating func isAlive(_ holder: ClaimHolder) -> Bool {
        if holder == me { return true }
        if let verdict = known[holder] { return verdict }
        let verdict = holder.isAlive
        known[holder] = verdict
        return verdict
    }
}

extension Spool {
    /// The subdirectory of the spool that holds claimed reports.
    public static let claimsDirectoryName = ".claims"

    /// The current claims, oldest report first, each with its size and whether its holder died.
    ///
    /// No `.claims` directory means no claims. Entries that are not claims or not regular files are skipped.
    public func claims() throws(SpoolError) -> [ClaimInfo] {
        guard try subdirectoryExists(.claims) else { return [] }
        let claims = try openSubdirectory(.claims, create: false)
        var liveness = HolderLiveness(me: (try? ClaimHolder.current()) ?? ClaimHolder(pid: 0, startTicks: 0))
        var result: [ClaimInfo] = []
        for entry in try claimEntries(in: claims) {
            guard let status = try? claims.status(of: entry.text), status.kind == .regular else { continue }
            let claim = ClaimedReport(name: entry.name, holder: entry.holder, spool: self)
            result.append(ClaimInfo(claim: claim, bytes: status.size, isStale: !liveness.isAlive(entry.holder)))
        }
        return result
    }

    // MARK: - Steps shared by the claim operations (taking, settling, quarantine)

    /// The caller's holder, or this process when none is given.
    func resolve(_ holder: ClaimHolder?) throws(SpoolError) -> ClaimHolder {
        if let holder { return holder }
        do { return try ClaimHolder.current() } catch {
            throw .holderIdentity(spool: path, pid: ProcessProbe.currentID, error)
        }
    }

    /// The claims of `.claims`, oldest report first (ties in holder order).
    func claimEntries(in claims: borrowing DirectoryHandle) throws(SpoolError) -> [ClaimEntry] {
        let names: [String]
        do { names = try claims.entryNames() } catch {
            throw .openSubdirectory(spool: path, name: Self.claimsDirectoryName, error)
        }
        return names.compactMap { ClaimEntry(parsing: $0) }.sorted {
            $0.name != $1.name ? $0.name < $1.name : $0.holder.text < $1.holder.text
        }
    }

    /// Where a report with an id starting with some prefix is: unclaimed in the spool, or claimed.
    enum Location {
        /// In the spool itself, claimable.
        case unclaimed(ReportFileName)
        /// In `.claims`, held by someone.
        case claimed(ClaimEntry)
    }

    /// Finds the one report whose id starts with `prefix` among unclaimed reports and claims.
    ///
    /// Throws `.noSuchReport` or `.ambiguous` (counting distinct ids). When one id is both claimed and in
    /// the spool (only a duplicate write could do that), the unclaimed one is found.
    func locate(_ prefix: String, claims: borrowing DirectoryHandle) throws(SpoolError) -> Location {
        var unclaimed: [UUIDText: ReportFileName] = [:]
        for name in try entryNames().compactMap({ ReportFileName(parsing: $0) }) where name.idText.hasPrefix(prefix) {
            unclaimed[name.idText] = name
        }
        var claimed: [UUIDText: ClaimEntry] = [:]
        for entry in try claimEntries(in: claims) where entry.name.idText.hasPrefix(prefix) {
            claimed[entry.name.idText] = claimed[entry.name.idText] ?? entry
        }
        let ids = Set(unclaimed.keys).union(claimed.keys)
        guard let id = ids.first else { throw .noSuchReport(spool: path, id: prefix) }
        guard ids.count == 1 else { throw .ambiguous(spool: path, prefix: prefix, count: ids.count) }
        if let name = unclaimed[id] { return .unclaimed(name) }
        return .claimed(claimed[id]!)
    }
}

/// A report id as canonical lowercase text (a dictionary key).
typealias UUIDText = String
