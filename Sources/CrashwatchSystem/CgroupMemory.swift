// CgroupMemory.swift — whether the kernel's OOM killer struck in a process's memory cgroup: the count
// of OOM kills the cgroup keeps (v2 `memory.events`, v1 `memory.oom_control`), read before and after a
// SIGKILL death.
import CrashwatchModel
import Glibc

/// A memory cgroup's OOM-kill count.
public struct OOMKillCount: Equatable, Sendable {
    /// The memory cgroup's path in its hierarchy (`/system.slice/app.service`).
    public let cgroup: String
    /// How many processes the OOM killer killed in it (and, for v2, below it).
    public let kills: UInt64
    /// The process's cgroups, as read for the count.
    public let info: CgroupInfo
}

public enum CgroupMemory {
    /// The OOM-kill count of the memory cgroup `pid` is in; nil when it cannot be read (no memory
    /// controller, the process gone). The v1 memory controller wins where both exist (hybrid hosts
    /// mount controllers on v1).
    public static func oomKills(of pid: Int32, root: String = "/sys/fs/cgroup") -> OOMKillCount? {
        guard let info = CgroupInfo.of(pid) else { return nil }
        let places = [(info.memoryPath, "/memory", "memory.oom_control"), (info.unifiedPath, "", "memory.events"),
                      (info.unifiedPath, "/unified", "memory.events")]
        for (path, mount, file) in places {
            guard let path, path.hasPrefix("/"), !path.split(separator: "/").contains(".."), path.utf8.count < 4096 else { continue }
            let location = root + mount + (path == "/" ? "" : path) + "/" + file
            guard let contents = try? ProcFS.readText(location) else { continue }
            if let kills = count(named: "oom_kill", in: contents) { return OOMKillCount(cgroup: path, kills: kills, info: info) }
        }
        return nil
    }

    /// The value of a `name N` line.
    static func count(named name: String, in text: String) -> UInt64? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == name { return decimalNumber(fields[1]) }
        }
        return nil
    }
}
