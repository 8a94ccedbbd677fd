// Quarantine.swift — files a reader cannot use (unparsable JSON, unreadable, not a regular file) are moved
// out of the way into `.quarantine/`, each with `<name>.reason` beside it saying when and why, so they never
// stop a listing again and a person can look at them later.
import CrashwatchModel
import CrashwatchSystem

/// One file in the quarantine, with the reason recorded when it was put there.
public struct QuarantinedFile: Equatable, Sendable {
    /// The file's name (the report name it had in the spool).
    public let name: String
    /// What the entry is (normally a regular file; a quarantined link stays a link).
    public let kind: FileKind
    /// Its size in bytes (of the link itself, for a link).
    public let bytes: Int64
    /// When it was quarantined, RFC 3339 UTC with milliseconds; nil when the reason file is missing or unreadable.
    public let time: String?
    /// Why it was quarantined; nil when the reason file is missing or unreadable.
    public let reason: String?

    /// A listing entry.
    public init(name: String, kind: FileKind, bytes: Int64, time: String?, reason: String?) {
        self.name = name
        self.kind = kind
        self.bytes = bytes
        self.time = time
        self.reason = reason
    }
}

extension Spool {
    /// The subdirectory of the spool that holds quarantined files.
    public static let quarantineDirectoryName = ".quarantine"
    /// The suffix of the file beside each quarantined file that says when and why.
    public static let reasonSuffix = ".reason"
    /// The most bytes of a reason kept (longer ones are cut).
    static let maxReasonBytes = 4096

    /// Moves the unclaimed entry `name` (a report file name) into `.quarantine/` and records `reason` in
    /// `.quarantine/<name>.reason`.
    ///
    /// The move is one rename that never follows a link (a link under the name is moved as the link) and
    /// never replaces an entry already quarantined under that name. `.quarantine` is created on demand like
    /// `.claims`; a symbolic link or non-directory there is refused (`.unsafeSubdirectory`). The reason file is
    /// written atomically with mode 0640: one line, the RFC 3339 time, a space, and `reason` with control
    /// characters replaced by spaces. Errors: `.invalidName`, `.notARegularFile` for a directory,
    /// `.quarantineFile` (ENOENT when the file is gone, e.g. claimed meanwhile), `.writeQuarantineReason`
    /// (the file is quarantined, only its reason is missing).
    public func quarantine(name: String, reason: String, now: Int64 = Clock.realtimeNanoseconds())
        throws(SpoolError)
    {
        let report = try validatedName(name)
        if let status = try? directory.status(of: report.text), status.kind == .directory {
            throw .notARegularFile(spool: path, name: report.text, kind: .directory)
        }
        let quarantine = try openSubdirectory(.quarantine, create: true)
        do { try directory.move(report.text, to: report.text, in: quarantine) } catch {
            throw .quarantineFile(spool: path, name: report.text, error)
        }
        try? directory.synchronize()
        try writeReason(for: report.text, reason: reason, now: now, in: quarantine)
    }

    /// Moves a claimed report into `.quarantine/` under its report name, with `reason`; for a shipper that
    /// claimed a report and found it unusable (its failed-attempt record goes). `.claimLost` when the claim is gone.
    public func quarantine(_ claim: ClaimedReport, reason: String, now: Int64 = Clock.realtimeNanoseconds())
        throws(SpoolError)
    {
        let claims = try openClaimsForExistingClaim(claim.name)
        let quarantine = try openSubdirectory(.quarantine, create: true)
        try moveClaim(claim, from: claims, to: quarantine) { .quarantineFile(spool: path, name: claim.name.text, $0) }
        try? claims.synchronize()
        forgetAttempts(of: claim.name)
        try writeReason(for: claim.name.text, reason: reason, now: now, in: quarantine)
    }

    /// The quarantined files, in name (so time) order, each with its recorded time and reason.
    ///
    /// No `.quarantine` directory means an empty quarantine; a link or non-directory there is refused.
    /// Reason files, temporary files and other dot files are not listed themselves.
    public func quarantined() throws(SpoolError) -> [QuarantinedFile] {
        guard try subdirectoryExists(.quarantine) else { return [] }
        let quarantine = try openSubdirectory(.quarantine, create: false)
        let names: [String]
        do { names = try quarantine.entryNames() } catch {
            throw .openSubdirectory(spool: path, name: Self.quarantineDirectoryName, error)
        }
        var files: [QuarantinedFile] = []
        for name in names.sorted() where !name.hasPrefix(".") && !name.hasSuffix(Self.reasonSuffix) {
            guard let status = try? quarantine.status(of: name) else { continue }
            var time: String?
            var reason: String?
            let reasonFile = try? quarantine.readFile(named: name + Self.reasonSuffix, maxBytes: 64 << 10)
            if case .contents(let bytes)? = reasonFile {
                (time, reason) = Self.parseReasonLine(bytes)
            }
            files.append(QuarantinedFile(name: name, kind: status.kind, bytes: status.size, time: time, reason: reason))
        }
        return files
    }

    /// The reason file's line: RFC 3339 time, a space, the reason (control characters made spaces, at most
    /// 4096 bytes), and a newline.
    static func reasonLine(reason: String, now: Int64) -> String {
        "\(rfc3339(nanoseconds: now)) \(oneLine(reason, maxBytes: maxReasonBytes))\n"
    }

    /// Splits a reason file into its time and its reason; nil parts when the line does not have them.
    static func parseReasonLine(_ bytes: [UInt8]) -> (time: String?, reason: String?) {
        var line = String(decoding: bytes, as: UTF8.self)
        if let newline = line.firstIndex(of: "\n") { line = String(line[..<newline]) }
        guard let space = line.firstIndex(of: " ") else { return (line.isEmpty ? nil : line, nil) }
        return (String(line[..<space]), String(line[line.index(after: space)...]))
    }

    /// Writes `<name>.reason` in the quarantine atomically (temporary file, 0640, fsync, rename, fsync).
    private func writeReason(for name: String, reason: String, now: Int64, in quarantine: borrowing DirectoryHandle)
        throws(SpoolError)
    {
        let bytes = Array(Self.reasonLine(reason: reason, now: now).utf8)
        do { try writeSmallFile(bytes, named: name + Self.reasonSuffix, in: quarantine) } catch {
            throw .writeQuarantineReason(spool: path, name: name, error)
        }
    }
}

/// `text` on one line: control characters made spaces, cut to at most `maxBytes` bytes of UTF-8.
func oneLine(_ text: String, maxBytes: Int) -> String {
    var cleaned = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : Character($0) })
    while cleaned.utf8.count > maxBytes { cleaned.removeLast() }
    return cleaned
}

/// A time as RFC 3339 UTC with milliseconds, e.g. `2024-02-29T23:59:59.123Z` (clamped like report names).
func rfc3339(nanoseconds: Int64) -> String {
    RFC3339.format(nanosecondsSinceEpoch: min(max(nanoseconds, 0), ReportFileName.maxMilliseconds * 1_000_000))
}
