// Claims.swift — readers (shippers) claim reports before sending them: a claim is an atomic rename into
// `.claims/<report name>.<holder>`, acknowledged by removing it and released by renaming it back. The holder
// is the claiming process's pid and start time, so a claim whose holder died is recognised and taken over.
import CrashwatchSystem

/// The process holding a claim: its pid and its start time, so a dead holder is recognised even after the
/// kernel reuses its pid.
///
/// In a claim's file name the holder is `<pid>-<start ticks>`, e.g. `4242-1234567`. Start ticks are field 22
/// of `/proc/PID/stat` (clock ticks after boot). Liveness is judged through this machine's `/proc` and
/// `kill(pid, 0)`, so every reader of one spool must share a pid namespace.
public struct ClaimHolder: Hashable, Sendable, CustomStringConvertible {
    /// The holder's process id.
    public let pid: Int32
    /// When the holder started, in clock ticks after boot (`/proc/PID/stat` field 22).
    public let startTicks: UInt64

    /// A holder from its parts (for tests, or a holder read from elsewhere).
    public init(pid: Int32, startTicks: UInt64) {
        self.pid = pid
        self.startTicks = startTicks
    }

    /// The holder identity of running process `pid`, read from `/proc/PID/stat`; lets a script's helper
    /// claim on behalf of the long-lived script (`crashwatch claim --holder $$`).
    public init(process pid: Int32) throws(SystemError) {
        guard pid > 0 else { throw SystemError.invalidData("claim holder pid \(pid)", pid: pid) }
        let text = try ProcFS.readText("/proc/\(pid)/stat")
        guard let ticks = ProcessClock.startTicks(statText: text) else {
            throw SystemError.invalidData("parse /proc/\(pid)/stat", pid: pid)
        }
        self.init(pid: pid, startTicks: ticks)
    }

    /// The calling process as a holder (`getpid` and `/proc/self/stat`).
    public static func current() throws(SystemError) -> ClaimHolder {
        let pid = ProcessProbe.currentID
        let text = try ProcFS.readText("/proc/self/stat")
        guard let ticks = ProcessClock.startTicks(statText: text) else {
            throw SystemError.invalidData("parse /proc/self/stat", pid: pid)
        }
        return ClaimHolder(pid: pid, startTicks: ticks)
    }

    /// Parses `<pid>-<start ticks>` (decimal, no signs, no leading zeros); anything else is nil.
    public init?(parsing text: some StringProtocol) {
        let parts = String(text).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let pid = decimalNumber(parts[0], maxDigits: 19, leadingZeros: false), pid > 0,
              pid <= UInt64(Int32.max), let ticks = decimalNumber(parts[1], maxDigits: 19, leadingZeros: false)
        else { return nil }
        self.init(pid: Int32(pid), startTicks: ticks)
    }

    /// The holder as it appears in a claim's file name: `<pid>-<start ticks>`.
    public var text: String { "\(pid)-\(startTicks)" }

    /// The same as `text`.
    public var description: String { text }

    /// Whether the holder still runs: its pid exists, is not a zombie, and started at `startTicks`.
    ///
    /// When `/proc/PID/stat` cannot be read (e.g. `/proc` mounted with `hidepid`), a pid that `kill(pid, 0)`
    /// still finds counts as alive: a claim is only taken over when its holder is surely gone.
    public var isAlive: Bool {
        do {
            return Self.isAlive(statText: try ProcFS.readText("/proc/\(pid)/stat"), startTicks: startTicks)
        } catch {
            return ProcessProbe.exists(pid)
        }
    }

    /// Whether `/proc/PID/stat` text shows the process that started at `startTicks`, still running (not a
    /// zombie, state `Z`, nor dead, `X`); unparsable text counts as alive.
    static func isAlive(statText: String, startTicks: UInt64) -> Bool {
        guard let stat = ProcStat(text: statText), let ticks = stat.number(22) else { return true }
        guard ticks == startTicks else { return false }
        let state = stat.state
        return state != UInt8(ascii: "Z") && state != UInt8(ascii: "X") && state != UInt8(ascii: "x")
    }
}

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

    /// Claims the oldest reports no live reader holds, at most `limit`, for `holder` (default: this process).
    ///
    /// First it takes over stale claims, whose holder died (oldest first), then it takes unclaimed reports
    /// (oldest first). Each is one atomic rename into `.claims/<report name>.<holder>` (created on demand
    /// with the spool's own permission bits), so no two readers ever get the same report, in this process
    /// or another. Entries that are not regular files are skipped; a stale claim this user may not rename
    /// (a sticky spool shared by several users) is left to its owner. When a step fails, the reports this
    /// call already took are released and the error is thrown. An empty spool gives an empty array.
    /// Reports for which `isEligible` says false (a shipper's: not due yet) are neither taken nor taken over.
    public func claim(limit: Int = 1, holder: ClaimHolder? = nil,
                      where isEligible: (ReportFileName) -> Bool = { _ in true }) throws(SpoolError) -> [ClaimedReport]
    {
        guard limit > 0 else { return [] }
        let me = try resolve(holder)
        let claims = try openSubdirectory(.claims, create: true)
        var taken: [ClaimedReport] = []
        do throws(SpoolError) {
            var liveness = HolderLiveness(me: me)
            for entry in try claimEntries(in: claims) {
                if taken.count >= limit { break }
                guard isEligible(entry.name), !liveness.isAlive(entry.holder) else { continue }
                if let claim = try takeOver(entry, for: me, in: claims) { taken.append(claim) }
            }
            if taken.count < limit {
                let unclaimed = try entryNames().compactMap { ReportFileName(parsing: $0) }.filter(isEligible).sorted()
                var budget = Self.foreignReadBudget
                for name in unclaimed {
                    if taken.count >= limit { break }
                    // Another user's report is taken only when its name, owner and content agree.
                    guard let status = try? directory.status(of: name.text), status.kind == .regular,
                          isTrustworthy(name, status: status, budget: &budget)
                    else { continue }
                    if let claim = try take(name, for: me, into: claims) { taken.append(claim) }
                }
            }
        } catch {
            for claim in taken { try? release(claim) }
            throw error
        }
        return taken
    }

    /// Claims the one report whose id is `id` or starts with it, for `holder` (default: this process).
    ///
    /// An unclaimed report is taken; a claim `holder` already has is returned as it is; a stale claim is
    /// taken over; a claim of another live process is refused (`.claimedByAnother`), a pending report too
    /// (`.reportPending`: its writer is replacing it). Errors: `.invalidID`,
    /// `.noSuchReport`, `.ambiguous`, `.notARegularFile` (a link or other entry under a report's name).
    public func claim(id: String, holder: ClaimHolder? = nil) throws(SpoolError) -> ClaimedReport {
        let prefix = try validatedIDPrefix(id)
        let me = try resolve(holder)
        let claims = try openSubdirectory(.claims, create: true)
        // A rename can lose a race with another reader; look again (a few times) before giving up.
        for _ in 0..<3 {
            switch try locate(prefix, claims: claims) {
            case .unclaimed(let name):
                if let status = try? directory.status(of: name.text) {
                    if status.kind != .regular { throw .notARegularFile(spool: path, name: name.text, kind: status.kind) }
                    var budget = Self.foreignReadBudget
                    if !isTrustworthy(name, status: status, budget: &budget) {
                        throw .disagreeingReport(spool: path, name: name.text, owner: status.ownerID)
                    }
                }
                if isPending(name) { throw .reportPending(spool: path, name: name.text) }
                if let claim = try take(name, for: me, into: claims) { return claim }
            case .claimed(let entry):
                if entry.holder == me { return ClaimedReport(name: entry.name, holder: me, spool: self) }
                if entry.holder.isAlive {
                    throw .claimedByAnother(spool: path, name: entry.name.text, pid: entry.holder.pid)
                }
                if let claim = try takeOver(entry, for: me, in: claims, skipForbidden: false) { return claim }
            }
        }
        throw .noSuchReport(spool: path, id: prefix)
    }

    /// Removes a claimed report for good, after the receiver confirmed it, and flushes `.claims`; its
    /// failed-attempt record (if any) goes too.
    ///
    /// Throws `.claimLost` when the claim is no longer there (acknowledged or released already, or taken
    /// over because its holder was judged dead).
    public func acknowledge(_ claim: ClaimedReport) throws(SpoolError) {
        let claims = try openClaimsForExistingClaim(claim.name)
        do { try claims.removeFile(named: claim.entryName) } catch let error where error.isNotFound {
            throw .claimLost(spool: path, name: claim.name.text)
        } catch {
            throw .acknowledgeReport(spool: path, name: claim.name.text, error)
        }
        try? claims.synchronize()
        forgetAttempts(of: claim.name)
    }

    /// Puts a claimed report back into the spool under its original name, claimable again.
    ///
    /// Throws `.claimLost` when the claim is no longer there, `.releaseReport` (EEXIST) when a file with the
    /// report's name appeared in the spool meanwhile (the claim then stays).
    public func release(_ claim: ClaimedReport) throws(SpoolError) {
        let claims = try openClaimsForExistingClaim(claim.name)
        do {
            try claims.move(claim.entryName, to: claim.name.text, in: directory)
        } catch let error where error.isNotFound {
            throw .claimLost(spool: path, name: claim.name.text)
        } catch {
            throw .releaseReport(spool: path, name: claim.name.text, error)
        }
        try? directory.synchronize()
    }

    /// Acknowledges (removes) the claimed report whose id is `id` or starts with it; returns its name.
    ///
    /// Allowed when the claim belongs to `holder` (default: this process) or its holder died; a claim of
    /// another live process is refused (`.claimedByAnother`). An unclaimed report gives `.notClaimed` (claim
    /// it first); errors also `.invalidID`, `.noSuchReport`, `.ambiguous`.
    @discardableResult
    public func acknowledge(id: String, holder: ClaimHolder? = nil) throws(SpoolError) -> ReportFileName {
        let claim = try claimForSettling(id: id, holder: holder)
        try acknowledge(claim)
        return claim.name
    }

    /// Releases (returns to the spool) the claimed report whose id is `id` or starts with it; returns its name.
    ///
    /// The same rules as `acknowledge(id:holder:)`: the claim must be `holder`'s or its holder dead.
    @discardableResult
    public func release(id: String, holder: ClaimHolder? = nil) throws(SpoolError) -> ReportFileName {
        let claim = try claimForSettling(id: id, holder: holder)
        try release(claim)
        return claim.name
    }

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

    // MARK: - Steps shared by the operations above

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

    /// Moves unclaimed report `name` into `.claims` for `me`; nil when another reader took it first or it is
    /// pending (`Spool.writePending`).
    private func take(_ name: ReportFileName, for me: ClaimHolder, into claims: borrowing DirectoryHandle)
        throws(SpoolError) -> ClaimedReport?
    {
        // A pending report is about to be replaced by its writer: claimed now, its replacement would arrive as a
        // second report with the same id. (Locked on its inode, so a replacement in place already is claimable.)
        if isPending(name) { return nil }
        let claim = ClaimedReport(name: name, holder: me, spool: self)
        do { try directory.move(name.text, to: claim.entryName, in: claims) } catch let error where error.isNotFound {
            return nil
        } catch {
            throw .claimReport(spool: path, name: name.text, error)
        }
        // Checked before the move too, but in a sticky spool the entry's owner may have swapped in a link
        // since: a link or other non-file in `.claims` would be followed by a reader that opens the claim's
        // path, so it is removed (not followed) and nothing is claimed.
        guard (try? claims.status(of: claim.entryName))?.kind == .regular else {
            try? claims.removeFile(named: claim.entryName)
            return nil
        }
        return claim
    }

    /// Renames a stale claim to `me`'s; nil when another reader took it over first, or when this user may
    /// not rename it and `skipForbidden` says to leave it.
    private func takeOver(_ entry: ClaimEntry, for me: ClaimHolder, in claims: borrowing DirectoryHandle,
                          skipForbidden: Bool = true) throws(SpoolError) -> ClaimedReport?
    {
        guard let status = try? claims.status(of: entry.text), status.kind == .regular else { return nil }
        let claim = ClaimedReport(name: entry.name, holder: me, spool: self)
        do { try claims.move(entry.text, to: claim.entryName, in: claims) } catch let error where error.isNotFound {
            return nil
        } catch let error where skipForbidden && error.isPermissionDenied {
            return nil
        } catch {
            throw .claimReport(spool: path, name: entry.name.text, error)
        }
        return claim
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

    /// The claim that `acknowledge(id:)` or `release(id:)` may settle: `holder`'s own, or a dead holder's.
    private func claimForSettling(id: String, holder: ClaimHolder?) throws(SpoolError) -> ClaimedReport {
        let prefix = try validatedIDPrefix(id)
        guard try subdirectoryExists(.claims) else {
            let name = try find(idPrefix: prefix)
            throw .notClaimed(spool: path, name: name.text)
        }
        let me = try resolve(holder)
        let claims = try openSubdirectory(.claims, create: false)
        switch try locate(prefix, claims: claims) {
        case .unclaimed(let name):
            throw .notClaimed(spool: path, name: name.text)
        case .claimed(let entry):
            if entry.holder != me && entry.holder.isAlive {
                throw .claimedByAnother(spool: path, name: entry.name.text, pid: entry.holder.pid)
            }
            return ClaimedReport(name: entry.name, holder: entry.holder, spool: self)
        }
    }

    /// Opens `.claims` for an operation on an existing claim: a missing directory means the claim is gone.
    private func openClaimsForExistingClaim(_ name: ReportFileName) throws(SpoolError) -> DirectoryHandle {
        guard try subdirectoryExists(.claims) else { throw .claimLost(spool: path, name: name.text) }
        return try openSubdirectory(.claims, create: false)
    }
}

/// A report id as canonical lowercase text (a dictionary key).
typealias UUIDText = String
