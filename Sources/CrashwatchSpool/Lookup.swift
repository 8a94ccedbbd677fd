// Lookup.swift — what readers ask of the spool by name or id: read one report safely (no links, no FIFOs,
// a size limit), find a report by a prefix of its id, the newest report, and validation of the names and ids
// callers pass in, so that no path built from them can leave the spool.
import CrashwatchSystem

extension Spool {
    /// The most bytes a reader reads from one report unless it asks otherwise: 64 MiB.
    public static let defaultMaxReadBytes = 64 << 20

    /// The bytes of unclaimed report `name`, read without following a symbolic link.
    ///
    /// Refuses a link, directory, FIFO, socket or device under the name (`.notARegularFile`, never opening
    /// a FIFO or device) and a file larger than `maxBytes` (`.tooLarge`); a missing file is `.readReport`
    /// with ENOENT (`systemError?.isNotFound`). A claimed report is read with `ClaimedReport.bytes()`.
    public func read(_ name: ReportFileName, maxBytes: Int = defaultMaxReadBytes) throws(SpoolError) -> [UInt8] {
        try readEntry(name.text, in: directory, maxBytes: maxBytes)
    }

    /// The unclaimed report whose id is `idPrefix` or starts with it (case-insensitive).
    ///
    /// Throws `.invalidID` for text that cannot be part of an id, `.noSuchReport` when no report matches and
    /// `.ambiguous` (with the number of matching reports) when several do. Claimed reports are not searched:
    /// see `claims()`.
    public func find(idPrefix: String) throws(SpoolError) -> ReportFileName {
        let prefix = try validatedIDPrefix(idPrefix)
        let matches = try reports().filter { $0.name.idText.hasPrefix(prefix) }
        guard let first = matches.first else { throw .noSuchReport(spool: path, id: prefix) }
        let count = Set(matches.map(\.name.id)).count
        guard count == 1 else { throw .ambiguous(spool: path, prefix: prefix, count: count) }
        return first.name
    }

    /// The newest unclaimed report's name, or nil when the spool holds none.
    public func latest() throws(SpoolError) -> ReportFileName? {
        try reports().last?.name
    }

    /// Parses a report file name given by a caller; anything else (paths, `..`, claims, foreign files) is
    /// refused with `.invalidName`.
    public func validatedName(_ text: String) throws(SpoolError) -> ReportFileName {
        guard let name = ReportFileName(parsing: text) else { throw .invalidName(spool: path, name: text) }
        return name
    }

    /// An id or id prefix from a caller, lowercased; refused (`.invalidID`) unless it is 1…36 characters of
    /// hexadecimal digits and `-`, so that it can never name a path.
    func validatedIDPrefix(_ text: String) throws(SpoolError) -> String {
        let lowered = text.lowercased()
        guard !lowered.isEmpty, lowered.utf8.count <= 36,
              lowered.utf8.allSatisfy({ byte in
                  (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                      || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || byte == UInt8(ascii: "-")
              })
        else { throw .invalidID(spool: path, id: text) }
        return lowered
    }
}
