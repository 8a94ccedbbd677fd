// HostInfo.swift — facts about the machine and a process that a crash report records, read from
// uname(2), /proc and /etc/os-release. Parsers take text so they are testable without a machine.
import CrashwatchModel
import Glibc

/// What uname(2) says about this machine.
public struct UnameInfo: Equatable, Sendable {
    public let nodename: String
    public let release: String
    public let version: String
    public let machine: String

    /// Calls uname(2).
    public static func current() -> UnameInfo {
        var name = utsname()
        uname(&name)
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        }
        return UnameInfo(nodename: text(name.nodename), release: text(name.release), version: text(name.version),
                         machine: text(name.machine))
    }
}

/// The fields of os-release(5) a report uses.
public struct OSRelease: Equatable, Sendable {
    /// `NAME` (e.g. `Debian GNU/Linux`), else `ID`, else `Linux`.
    public var name: String = "Linux"
    /// `VERSION_ID` (e.g. `12`), else `VERSION`, else nil.
    public var version: String?
    /// `PRETTY_NAME`, when present.
    public var prettyName: String?

    /// Parses `KEY=value` lines with optional single or double quotes; comments and junk are skipped.
    public init(parsing text: String) {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let trimmed = line.drop(while: { $0 == " " })
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            var value = trimmed[trimmed.index(after: equals)...]
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            values[String(trimmed[..<equals])] = value.replacingOccurrences(of: "\\\"", with: "\"")
        }
        name = values["NAME"] ?? values["ID"] ?? "Linux"
        version = values["VERSION_ID"] ?? values["VERSION"]
        prettyName = values["PRETTY_NAME"]
    }

    /// Reads `/etc/os-release`, falling back to `/usr/lib/os-release`.
    public static func current() -> OSRelease {
        let text = (try? ProcFS.readText("/etc/os-release")) ?? (try? ProcFS.readText("/usr/lib/os-release")) ?? ""
        return OSRelease(parsing: text)
    }
}

/// Where a process sits in the cgroup tree, and the systemd unit that owns it.
public struct CgroupInfo: Equatable, Sendable {
    /// The unified (v2) cgroup path, or the name=systemd / first v1 path.
    public let path: String?
    /// The systemd unit: the last `*.service` or `*.scope` component of the path.
    public let unit: String?
    /// The unified (v2) path alone, when the process has one.
    public let unifiedPath: String?
    /// The path in the v1 hierarchy that carries the memory controller, when there is one.
    public let memoryPath: String?

    /// Parses `/proc/PID/cgroup` (`0::/system.slice/app.service`, `4:memory:/system.slice/app.service` lines).
    public init(parsing text: String) {
        var unified: String?
        var systemd: String?
        var memory: String?
        var first: String?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let path = String(parts[2])
            if first == nil { first = path }
            if parts[0] == "0" && parts[1].isEmpty { unified = path }
            if parts[1] == "name=systemd" { systemd = path }
            if parts[1].split(separator: ",").contains("memory") { memory = path }
        }
        path = unified ?? systemd ?? first
        unifiedPath = unified
        memoryPath = memory
        unit = path.flatMap { path in
            path.split(separator: "/").last(where: { $0.hasSuffix(".service") || $0.hasSuffix(".scope") }).map(String.init)
        }
    }

    /// The cgroup of process `pid`; nil when /proc cannot say.
    public static func of(_ pid: Int32) -> CgroupInfo? {
        (try? ProcFS.readText("/proc/\(pid)/cgroup")).map(CgroupInfo.init(parsing:))
    }
}

/// A process's start time from `/proc/PID/stat` and the boot time.
public enum ProcessClock {
    /// Field 22 of `/proc/PID/stat` (start time in clock ticks after boot), parsed past the `(comm)` field,
    /// which may itself contain spaces and parentheses.
    public static func startTicks(statText: String) -> UInt64? {
        ProcStat(text: statText)?.number(22)
    }

    /// `btime` from `/proc/stat`: boot time in seconds since the epoch.
    public static func bootTime(statText: String) -> Int64? {
        for line in statText.split(separator: "\n") where line.hasPrefix("btime ") {
            return decimalNumber(line.dropFirst(6).trimmingCharacters(in: " ")).flatMap { Int64(exactly: $0) }
        }
        return nil
    }

    /// When this machine booted, in seconds since the epoch (`btime` of /proc/stat, a file the kernel
    /// builds from every CPU's counters: read once, not for each crash); nil when unreadable.
    public static let bootTimeSeconds: Int64? = (try? ProcFS.readText("/proc/stat")).flatMap(bootTime(statText:))

    /// When process `pid` started, in nanoseconds since the epoch; nil when unreadable.
    public static func startTimeNanoseconds(pid: Int32) -> Int64? {
        guard let stat = try? ProcFS.readText("/proc/\(pid)/stat"), let ticks = startTicks(statText: stat),
              let boot = bootTimeSeconds
        else { return nil }
        let hertz = UInt64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return boot * 1_000_000_000 + Int64(ticks / hertz) * 1_000_000_000 + Int64((ticks % hertz) * 1_000_000_000 / hertz)
    }
}

extension ProcFS {
    /// The target of a symbolic link such as `/proc/PID/cwd` or `/proc/PID/exe`; nil when unreadable.
    public static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink(path, &buffer, 4096)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A process's environment as name/value pairs, in order; empty when unreadable.
    public static func environment(_ pid: Int32) -> [(name: String, value: String)] {
        guard let bytes = try? readBytes("/proc/\(pid)/environ") else { return [] }
        return splitNulTerminated(bytes).compactMap { entry in
            guard let equals = entry.firstIndex(of: "=") else { return nil }
            return (String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
        }
    }

    /// A single-line kernel setting such as `/proc/sys/kernel/yama/ptrace_scope`, trimmed; nil when absent.
    public static func setting(_ path: String) -> String? {
        (try? readText(path)).map { String($0[...].trimmingCharacters(in: " \n")) }
    }
}

extension Substring {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        String(self).split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
