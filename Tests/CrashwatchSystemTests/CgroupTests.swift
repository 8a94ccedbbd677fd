// CgroupTests.swift — /proc/PID/cgroup parsing (unified, name=systemd and v1 memory paths, the unit) and
// the OOM-kill count read from a cgroup tree laid out like /sys/fs/cgroup.
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct CgroupTests {
    @Test("a hybrid host's lines give the unified path, the memory controller's path and the unit")
    func hybrid() {
        let info = CgroupInfo(parsing: """
            9:name=systemd:/system.slice/app.service
            4:memory:/system.slice/app.service
            3:cpu,cpuacct:/system.slice
            0::/system.slice/app.service

            """)
        #expect(info.path == "/system.slice/app.service")
        #expect(info.unifiedPath == "/system.slice/app.service")
        #expect(info.memoryPath == "/system.slice/app.service")
        #expect(info.unit == "app.service")
    }

    @Test("a pure v1 host without a unified line falls back to name=systemd and has no unified path")
    func legacy() {
        let info = CgroupInfo(parsing: "5:memory,pids:/user.slice/x.scope\n1:name=systemd:/user.slice/y.scope\n")
        #expect(info.path == "/user.slice/y.scope" && info.unit == "y.scope")
        #expect(info.unifiedPath == nil && info.memoryPath == "/user.slice/x.scope")
    }

    @Test("the OOM-kill count comes from the v1 memory controller first, else v2 memory.events")
    func oomKillCount() throws {
        let info = try #require(CgroupInfo.of(getpid()))
        let temporary = try TemporaryDirectory("cw-cgroup")
        defer { temporary.remove() }
        let root = temporary.path
        func place(_ directory: String, _ file: String, _ text: String) throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try text.write(toFile: "\(directory)/\(file)", atomically: true, encoding: .utf8)
        }
        #expect(CgroupMemory.oomKills(of: getpid(), root: root) == nil)
        if let unified = info.unifiedPath {
            try place(root + (unified == "/" ? "" : unified), "memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n")
            #expect(CgroupMemory.oomKills(of: getpid(), root: root)?.kills == 2)
        }
        if let memory = info.memoryPath {
            try place(root + "/memory" + (memory == "/" ? "" : memory), "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n")
            let count = try #require(CgroupMemory.oomKills(of: getpid(), root: root))
            #expect(count.kills == 7 && count.cgroup == memory && count.info == info)
        }
    }
}
