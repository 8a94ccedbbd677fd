// ClaimSettling.swift — settling claims: acknowledge (the report is removed for good) or release (it goes back
// into the spool), by claim or by id, and the one move of a claimed file out of `.claims`.
import CrashwatchSystem

extension Spool {
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
        try moveClaim(claim, from: claims, to: directory) { .releaseReport(spool: path, name: claim.name.text, $0) }
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
    func openClaimsForExistingClaim(_ name: ReportFileName) throws(SpoolError) -> DirectoryHandle {
        guard try subdirectoryExists(.claims) else { throw .claimLost(spool: path, name: name.text) }
        return try openSubdirectory(.claims, create: false)
    }

    /// Moves a claimed file out of `claims` to its report name in `destination` (the spool or its quarantine):
    /// `.claimLost` when the claim is gone, `failure(error)` for any other error.
    func moveClaim(_ claim: ClaimedReport, from claims: borrowing DirectoryHandle, to destination: borrowing DirectoryHandle,
                   failure: (SystemError) -> SpoolError) throws(SpoolError) {
        do {
            try claims.move(claim.entryName, to: claim.name.text, in: destination)
        } catch let error where error.isNotFound {
            throw .claimLost(spool: path, name: claim.name.text)
        } catch {
            throw failure(error)
        }
    }
}
