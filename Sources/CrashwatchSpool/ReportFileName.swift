// ReportFileName.swift — the name of a report file in the spool,
// `<UTC time>-<pid>-<executable tag>-<report id>.json`: built and parsed with integer calendar arithmetic,
// so that listing, pruning and the flood guard need names only.
import CrashwatchModel
import CrashwatchSystem
import FoundationEssentials

/// A report file's name: capture time (UTC, milliseconds), the crashed process's pid, a tag naming its
/// executable, and the report id.
///
/// The text is `YYYYMMDDTHHMMSS.mmmZ-<pid>-<tag>-<uuid>.json`, e.g.
/// `20240229T235959.123Z-4242-nginx-0f8fad5b-d9cb-469f-a165-70867728950e.json`: fixed-width time first, so
/// names sort by time; no colons; nothing secret. The tag is the executable's file name reduced to
/// `[A-Za-z0-9_.+]` (every other byte, `-` included, becomes `_`), at most 32 characters, `unknown` when
/// empty; it lets the flood guard group reports by executable without reading them. Names written before
/// tags existed (`<time>-<pid>-<uuid>.json`) still parse, with `tag` nil.
///
/// Times are clamped to what nanoseconds in an `Int64` can hold (1970-01-01 … 2262-04-11T23:47:16.854Z)
/// and a negative pid is recorded as 0, so every value has a name that parses back to it and every parsed
/// name has a time in nanoseconds.
public struct ReportFileName: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Capture time in milliseconds since the Unix epoch (UTC).
    public let timeMilliseconds: Int64
    /// The pid of the process the report is about.
    public let pid: Int32
    /// The crashed executable's sanitised file name (see `tag(forExecutable:)`); nil in a legacy name without one.
    public let tag: String?
    /// The report id, the same on every attempt to write or ship that crash.
    public let id: UUID

    /// The suffix of every report file name.
    public static let suffix = ".json"
    /// The prefix of a report being written; it is renamed to the final name once complete.
    public static let temporaryPrefix = ".tmp-"
    /// The longest tag, in bytes (all ASCII).
    public static let maxTagLength = 32
    /// The tag of an executable whose file name is empty or unknown.
    public static let unknownTag = "unknown"

    /// The largest time a name can hold, 2262-04-11T23:47:16.854Z: the last millisecond of `Int64` nanoseconds.
    static let maxMilliseconds: Int64 = Int64.max / 1_000_000

    /// Names a report captured at `timeNanoseconds` (since the epoch, UTC) about process `pid`, whose
    /// executable is at path `executable` (the tag is derived from its last component).
    public init(timeNanoseconds: Int64, pid: Int32, executable: String, id: UUID) {
        self.init(timeNanoseconds: timeNanoseconds, pid: pid, validTag: Self.tag(forExecutable: executable), id: id)
    }

    /// The one place the stored properties are set; `validTag` is already sanitised (or nil for legacy).
    init(timeNanoseconds: Int64, pid: Int32, validTag: String?, id: UUID) {
        self.timeMilliseconds = min(max(timeNanoseconds / 1_000_000, 0), Self.maxMilliseconds)
        self.pid = max(pid, 0)
        self.tag = validTag
        self.id = id
    }

    /// The tag for an executable path: its last component (trailing slashes and a ` (deleted)` suffix
    /// dropped), every byte outside `[A-Za-z0-9_.+]` replaced by `_`, cut to 32 bytes; `unknown` when empty.
    ///
    /// Byte-wise replacement means a multi-byte UTF-8 character becomes several `_`: `café` → `caf__`.
    public static func tag(forExecutable executable: String) -> String {
        var path = Substring(executable)
        if path.hasSuffix(" (deleted)") { path = path.dropLast(" (deleted)".count) }
        while path.hasSuffix("/") { path.removeLast() }
        let base = path.split(separator: "/", omittingEmptySubsequences: true).last ?? ""
        let bytes = base.utf8.prefix(maxTagLength).map { isTagByte($0) ? $0 : UInt8(ascii: "_") }
        return bytes.isEmpty ? unknownTag : String(decoding: bytes, as: UTF8.self)
    }

    /// Parses a name this type produced, with or without a tag; anything else (other files, temporary
    /// files, claims, near misses) is nil.
    public init?(parsing text: some StringProtocol) {
        let bytes = Array(text.utf8)
        // 20 (time) + 1 + 1…10 (pid) + [1 + 1…32 (tag)] + 1 + 36 (uuid) + 5 (.json)
        guard bytes.count >= 64, bytes.count <= 73 + 1 + Self.maxTagLength else { return nil }
        guard let milliseconds = Self.parseTime(bytes[0..<20]), bytes[20] == UInt8(ascii: "-") else { return nil }
        let uuidEnd = bytes.count - Self.suffix.utf8.count
        let uuidStart = uuidEnd - 36
        guard bytes[uuidEnd...].elementsEqual(Self.suffix.utf8), bytes[uuidStart - 1] == UInt8(ascii: "-"),
              let id = Self.parseUUID(bytes[uuidStart..<uuidEnd])
        else { return nil }
        // Between the time and the id: `<pid>` or `<pid>-<tag>`; a tag never holds `-`.
        let middle = bytes[21..<(uuidStart - 1)]
        var tag: String?
        var pidBytes = middle
        if let dash = middle.firstIndex(of: UInt8(ascii: "-")) {
            let tagBytes = middle[(dash + 1)...]
            guard !tagBytes.isEmpty, tagBytes.count <= Self.maxTagLength, tagBytes.allSatisfy(Self.isTagByte) else {
                return nil
            }
            tag = String(decoding: tagBytes, as: UTF8.self)
            pidBytes = middle[..<dash]
        }
        guard let pid = Self.parsePID(pidBytes) else { return nil }
        self.timeMilliseconds = milliseconds
        self.pid = pid
        self.tag = tag
        self.id = id
    }

    /// Capture time in nanoseconds since the epoch (millisecond precision).
    public var timeNanoseconds: Int64 { timeMilliseconds * 1_000_000 }

    /// The report id as lowercase canonical text (RFC 9562).
    public var idText: String { id.uuidString.lowercased() }

    /// The full file name, e.g. `20240229T235959.123Z-4242-nginx-0f8fad5b-d9cb-469f-a165-70867728950e.json`
    /// (without the `-<tag>` part for a legacy name).
    public var text: String {
        if let tag { return "\(timestampText)-\(pid)-\(tag)-\(idText)\(Self.suffix)" }
        return "\(timestampText)-\(pid)-\(idText)\(Self.suffix)"
    }

    /// The name the report is written under before it is complete: `.tmp-<report id>`.
    public var temporaryName: String { Self.temporaryPrefix + idText }

    /// The same as `text`.
    public var description: String { text }

    /// The time part, `YYYYMMDDTHHMMSS.mmmZ`.
    public var timestampText: String {
        let time = UTCDateTime(nanosecondsSinceEpoch: timeNanoseconds)
        return pad(time.year, 4) + pad(time.month, 2) + pad(time.day, 2) + "T" + pad(time.hour, 2) + pad(time.minute, 2)
            + pad(time.second, 2) + "." + pad(time.nanosecond / 1_000_000, 3) + "Z"
    }

    /// Oldest first; names of the same millisecond order by pid, then by id, then by tag (legacy first).
    public static func < (lhs: ReportFileName, rhs: ReportFileName) -> Bool {
        if lhs.timeMilliseconds != rhs.timeMilliseconds { return lhs.timeMilliseconds < rhs.timeMilliseconds }
        if lhs.pid != rhs.pid { return lhs.pid < rhs.pid }
        if lhs.id != rhs.id { return lhs.idText < rhs.idText }
        return (lhs.tag ?? "") < (rhs.tag ?? "")
    }

    /// Whether `byte` may appear in a tag: ASCII letters, digits, `_`, `.` and `+`.
    static func isTagByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "+"):
            true
        default:
            false
        }
    }

    /// Whether `name` is a temporary file this type would create: `.tmp-` and a lowercase UUID.
    public static func isTemporaryName(_ name: some StringProtocol) -> Bool {
        let bytes = Array(name.utf8)
        let prefix = temporaryPrefix.utf8.count
        return bytes.count == prefix + 36 && bytes[..<prefix].elementsEqual(temporaryPrefix.utf8)
            && parseUUID(bytes[prefix...]) != nil
    }

    /// Parses `YYYYMMDDTHHMMSS.mmmZ` into milliseconds, accepting real calendar dates from 1970 to 2262 only.
    private static func parseTime(_ bytes: ArraySlice<UInt8>) -> Int64? {
        let b = Array(bytes)
        guard b.count == 20, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "."), b[19] == UInt8(ascii: "Z"),
              let year = digits(b[0..<4]), let month = digits(b[4..<6]), let day = digits(b[6..<8]),
              let hour = digits(b[9..<11]), let minute = digits(b[11..<13]), let second = digits(b[13..<15]),
              let millisecond = digits(b[16..<19]),
              year >= 1970, (1...12).contains(month), day >= 1, day <= UTCDateTime.daysInMonth(Int(month), year: Int(year)),
              hour < 24, minute < 60, second < 60,
              let nanoseconds = UTCDateTime(year: Int(year), month: Int(month), day: Int(day), hour: Int(hour), minute: Int(minute),
                                            second: Int(second), nanosecond: Int(millisecond) * 1_000_000).nanosecondsSinceEpoch
        else { return nil }
        let milliseconds = nanoseconds / 1_000_000
        return milliseconds <= maxMilliseconds ? milliseconds : nil
    }

    /// Parses a decimal pid without sign or leading zeros (only `0` itself starts with 0).
    private static func parsePID(_ bytes: ArraySlice<UInt8>) -> Int32? {
        guard let value = decimalNumber(bytes, maxDigits: 10, leadingZeros: false), value <= UInt64(Int32.max) else { return nil }
        return Int32(value)
    }

    /// Parses a canonical lowercase UUID (8-4-4-4-12 hex digits).
    private static func parseUUID(_ bytes: ArraySlice<UInt8>) -> UUID? {
        guard bytes.count == 36 else { return nil }
        for (offset, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(offset) {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                else { return nil }
            }
        }
        return UUID(uuidString: String(decoding: bytes, as: UTF8.self))
    }

    /// The value of a fixed-width run of ASCII decimal digits (`decimalNumber`); nil when any byte is not a digit.
    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int64? {
        decimalNumber(bytes, maxDigits: 4).map { Int64($0) }
    }
}
