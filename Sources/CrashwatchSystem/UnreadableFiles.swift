// UnreadableFiles.swift — the FUSE file systems a process sees (from its mountinfo), whose pages crashwatch
// must never read, and whether its argument and environment areas lie on one.
import CrashwatchModel
import Glibc

/// What of a process's memory crashwatch must never read: pages of files on FUSE file systems. Their server —
/// perhaps the crashed program's own helper, in a mount namespace of its own — can leave a read of them
/// (`/proc/PID/mem`, `/proc/PID/cmdline`, `/proc/PID/environ`) waiting for ever, in an uninterruptible
/// sleep no signal ends, and every process crashwatch traces would wait with its tracer thread.
public struct UnreadableFiles: Sendable, Equatable {
    /// The devices (`major << 32 | minor`) of the FUSE file systems the process sees.
    public let devices: Set<UInt64>
    /// Whether the mount table was read whole. When it was not (a process can make a namespace of 100,000
    /// mounts and put its FUSE mount last), a file on a device the part read does not list is not read either.
    public let complete: Bool
    /// Every device the part read lists (kept only when it is not `complete`).
    public let listed: Set<UInt64>

    public init(devices: Set<UInt64>) {
        self.devices = devices
        complete = true
        listed = []
    }

    /// The most of a mount table read (about 30,000 mounts).
    public static let mountTableLimit = 4 << 20

    /// The FUSE file systems in process `pid`'s mount namespace (`/proc/PID/mountinfo`: its field 3 is the
    /// device, the first after " - " the file system type: `fuse`, `fuse.NAME` or `fuseblk`).
    public init(pid: Int32) {
        let bytes = (try? ProcFS.readBytes("/proc/\(pid)/mountinfo", limit: Self.mountTableLimit + 1)) ?? []
        guard bytes.count > Self.mountTableLimit else {
            self.init(mountinfo: bytes[...])
            return
        }
        // Cut: only whole lines count.
        let whole = bytes[..<Self.mountTableLimit].lastIndex(of: UInt8(ascii: "\n")).map { bytes[...$0] } ?? []
        self.init(mountinfo: whole, complete: false)
    }

    /// The FUSE file systems of a `mountinfo` text (paths in it escape blanks as `\040`: " - " is the separator);
    /// `complete`: whether the text is the whole table.
    public init(mountinfo text: String, complete: Bool = true) {
        self.init(mountinfo: Array(text.utf8)[...], complete: complete)
    }

    /// The same from the table's bytes. A hostile table holds megabytes (lines of thousands of bytes, 30,000
    /// mounts), and it is parsed while the crashed process is held: each line is looked at only where its
    /// device and type are, the rest skipped with `memchr` (a line's paths escape blanks as `\040`, so the
    /// first " - " in it is the separator).
    public init(mountinfo bytes: ArraySlice<UInt8>, complete: Bool = true) {
        var devices = Set<UInt64>(), listed = Set<UInt64>()
        bytes.withUnsafeBufferPointer { table in
            guard let base = table.baseAddress else { return }
            var start = 0
            while start < table.count {
                let end = Self.offset(of: UInt8(ascii: "\n"), in: base, from: start, to: table.count) ?? table.count
                if let entry = Self.entry(base + start, count: end - start) {
                    if !complete { listed.insert(entry.device) }
                    if entry.fuse { devices.insert(entry.device) }
                }
                start = end + 1
            }
        }
        self.devices = devices
        self.complete = complete
        self.listed = listed
    }

    /// The offset of the first `byte` in `base[from..<to]`.
    private static func offset(of byte: UInt8, in base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let found = memchr(base + from, Int32(byte), to - from) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// One mountinfo line's device (field 3, `major:minor`) and whether its file system type (the field after
    /// the lone "-") is FUSE's: `fuse`, `fuse.NAME` or `fuseblk`. Nil for a line not of that shape.
    private static func entry(_ line: UnsafePointer<UInt8>, count: Int) -> (device: UInt64, fuse: Bool)? {
        let space = UInt8(ascii: " ")
        var index = 0
        /// The next field, blanks before it skipped: its bounds.
        func field() -> Range<Int>? {
            while index < count, line[index] == space { index += 1 }
            let first = index
            while index < count, line[index] != space { index += 1 }
            return first < index ? first..<index : nil
        }
        guard field() != nil, field() != nil, let numbers = field() else { return nil }
        let text = UnsafeBufferPointer(start: line, count: count)
        guard let colon = text[numbers].firstIndex(of: UInt8(ascii: ":")),
              let major = decimalNumber(text[numbers.lowerBound..<colon], maxDigits: 10),
              let minor = decimalNumber(text[(colon + 1)..<numbers.upperBound], maxDigits: 10) else { return nil }
        // The separator: a "-" between blanks, at least two fields on (the root and the mount point come first).
        var search = index
        while let dash = offset(of: UInt8(ascii: "-"), in: line, from: search, to: count) {
            search = dash + 1
            guard line[dash - 1] == space, dash + 1 < count, line[dash + 1] == space else { continue }
            index = dash + 1
            guard let type = field() else { return nil }
            let name = text[type]
            let fuse = name.elementsEqual("fuse".utf8) || name.elementsEqual("fuseblk".utf8) || name.starts(with: "fuse.".utf8)
            return (major << 32 | minor, fuse)
        }
        return nil
    }

    /// Whether a mapping on `device` — as `/proc/PID/maps` prints it, hex `major:minor` — is on one of them, or,
    /// the table not read whole, on a device it does not list (an anonymous mapping, 00:00, is on none).
    public func contains(mapsDevice device: some StringProtocol) -> Bool {
        guard !devices.isEmpty || !complete else { return false }
        let numbers = device.split(separator: ":")
        guard numbers.count == 2, let major = UInt64(numbers[0], radix: 16), let minor = UInt64(numbers[1], radix: 16) else {
            return !complete
        }
        let number = major << 32 | minor
        return devices.contains(number) || (!complete && number != 0 && !listed.contains(number))
    }

    /// Whether `/proc/PID/cmdline` and `environ` of process `pid` (read through thread `through`) may be read:
    /// no part of the argument and environment areas (`/proc/PID/stat` fields 48–51) is a page of such a file.
    public func argumentsReadable(pid: Int32, through: Int32) -> Bool {
        guard !devices.isEmpty || !complete else { return true }
        guard let bytes = try? ProcFS.readBytes("/proc/\(through)/stat"), let stat = ProcStat(bytes[...]),
              let argStart = stat.number(48), let argEnd = stat.number(49),
              let envStart = stat.number(50), let envEnd = stat.number(51) else { return false }
        let ranges = [argStart..<max(argStart, argEnd), envStart..<max(envStart, envEnd)]
        guard let maps = try? ProcFS.readText("/proc/\(through)/maps") else { return false }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 4, contains(mapsDevice: fields[3]) else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16) else { continue }
            if ranges.contains(where: { $0.overlaps(start..<end) }) { return false }
        }
        return true
    }
}
