// ClaimTaking.swift — taking claims: the oldest eligible reports, or one by id, each by one atomic rename into
// `.claims`, stale claims (their holder died) taken over first.
import CrashwatchSystem

extension Spool {
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
}
