// QuarantineActions.swift — what a person does with a quarantined file: find it by name or id prefix, read
// it, put it back into the spool once it reads as a report again (requeue), or delete it with its reason
// (drop). Names are checked like every name a caller gives (one report file name, never a path), and the
// quarantine is read without following links, as the spool is.
import CrashwatchModel
import CrashwatchSystem

/// What `requeueQuarantined` did.
public enum RequeueOutcome: Equatable, Sendable {
    /// The file is back in the spool under its name; its reason file is gone.
    case requeued(ReportFileName)
    /// The file still is not a report (the reason says why); it stays in the quarantine.
    case stillBad(reason: String)
}

extension Spool {
    /// The quarantined file `text` names: its exact file name, or a unique prefix of the id in its name.
    ///
    /// `.invalidName`/`.invalidID` for text that could name a path, `.noSuchReport` when none matches,
    /// `.ambiguous` when several do.
    public func findQuarantined(_ text: String) throws(SpoolError) -> QuarantinedFile {
        let files = try quarantined()
        if text.hasSuffix(ReportFileName.suffix) {
            let name = try validatedName(text)
            guard let file = files.first(where: { $0.name == name.text }) else { throw .noSuchReport(spool: path, id: name.idText) }
            return file
        }
        let prefix = try validatedIDPrefix(text)
        let matches = files.filter { ReportFileName(parsing: $0.name)?.idText.hasPrefix(prefix) ?? false }
        guard let first = matches.first else { throw .noSuchReport(spool: path, id: prefix) }
        guard matches.count == 1 else { throw .ambiguous(spool: path, prefix: prefix, count: matches.count) }
        return first
    }

    /// The bytes of quarantined file `name` (a regular file, never a link, at most `maxBytes`).
    public func readQuarantined(_ name: ReportFileName, maxBytes: Int = defaultMaxReadBytes) throws(SpoolError) -> [UInt8] {
        let quarantine = try openSubdirectory(.quarantine, create: false)
        return try readEntry(name.text, in: quarantine, maxBytes: maxBytes, shown: Self.quarantineDirectoryName + "/" + name.text)
    }

    /// Moves quarantined file `name` back into the spool when it decodes as a report whose id is the one in
    /// its name; else leaves it where it is and says why. The move never replaces a report of that name.
    public func requeueQuarantined(_ name: ReportFileName) throws(SpoolError) -> RequeueOutcome {
        let bytes: [UInt8]
        do { bytes = try readQuarantined(name) } catch {
            switch error {
            case .notARegularFile, .tooLarge: return .stillBad(reason: "\(error)")
            default: throw error
            }
        }
        do {
            let report = try CrashReport.decode(bytes)
            guard report.id.lowercased() == name.idText else {
                return .stillBad(reason: "its id \(report.id) is not the one in its name")
            }
        } catch {
            return .stillBad(reason: "not a valid report: \(error)")
        }
        let quarantine = try openSubdirectory(.quarantine, create: false)
        do { try quarantine.move(name.text, to: name.text, in: directory) } catch {
            throw .releaseReport(spool: path, name: name.text, error)
        }
        try? directory.synchronize()
        try? quarantine.removeFile(named: name.text + Self.reasonSuffix)
        try? quarantine.synchronize()
        return .requeued(name)
    }

    /// Deletes quarantined file `name` (a link is removed as the link) and its reason file.
    public func dropQuarantined(_ name: ReportFileName) throws(SpoolError) {
        let quarantine = try openSubdirectory(.quarantine, create: false)
        do { try quarantine.removeFile(named: name.text) } catch {
            throw .removeFile(spool: path, name: Self.quarantineDirectoryName + "/" + name.text, error)
        }
        try? quarantine.removeFile(named: name.text + Self.reasonSuffix)
        try? quarantine.synchronize()
    }
}
