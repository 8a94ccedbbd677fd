// CgroupMemory.swift — whether the kernel's OOM killer struck in a process's memory cgroup: the count
// of OOM kills the cgroup keeps (v2 `memory.events`, v1 `memory.oom_control`), read before and after a
// SIGKILL death.
import Glibc

/// A memory cgroup's OOM-kill count.
public struct OOMKillCount: Equatable, Sendable {
    /// The cgroup's path in its hierarchy (`/system.slice/app.service`).
    public let cgroup: String
    /// How many processes the OOM killer killed in it (and, for v2, below it).
    public let kills: UInt64
}

public enum CgroupMemory {
    /// The OOM-kill count of the memory cgroup `pid` is in; nil when it cannot be read (no memory
    /// controller, the process gone). The v1 memory controller wins where both exist (hybrid hosts
    /// mount controllers on v1).
    public static func oomKills(of pid: Int32, root: String = "/sys/fs/cgroup") -> OOMKillCount? {
        guard let text = try? ProcFS.readText("/proc/\(pid)/cgroup") else { return nil }
        var v1: String?
        var v2: String?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0" && parts[1].isEmpty { v2 = String(parts[2]) }
            if parts[1].split(separator: ",").contains("memory") { v1 = String(parts[2]) }
        }
        for (path, mount, file) in [(v1, "/memory", "memory.oom_control"), (v2, "", "memory.events"), (v2, "/unified", "memory.events")] {
            guard let path, path.hasPrefix("/"), !path.split(separator: "/").contains(".."), path.utf8.count < 4096 else { continue }
            let location = root + mount + (path == "/" ? "" : path) + "/" + file
            guard let contents = try? ProcFS.readText(location) else { continue }
            if let kills = count(named: "oom_kill", in: contents) { return OOMKillCount(cgroup: path, kills: kills) }
        }
        return nil
    }

    /// The value of a `name N` line.
    static func count(named name: String, in text: String) -> UInt64? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == name { return UInt64(fields[1]) }
        }
        return nil
    }
}
