// WorkerIdentity.swift — who a processing worker is (README "Security model"). The worker holds a copy of
// the crashed process's memory and writes the report's frames: the user the program ran as must not be able
// to read it, signal it, trace it or rewrite what it writes — whatever the process was (setuid, file
// capabilities, non-dumpable) — and the worker must not read a file that user could not.
//
// The kernel checks signals and ptrace against a process's real and saved user ids, and file access
// against its effective (filesystem) ids. So under a root crashwatch the worker's real and saved ids are a
// dedicated user's (`crashwatch-worker`, else `nobody`) and its effective ids, groups included, the crashed
// user's: it opens what that user could open, and that user cannot reach it. A crash of a root process is
// processed as the dedicated user alone. The worker execs with crashwatch's own credentials (an execve
// after the switch would set the saved uid to the effective one and make it dumpable again) and switches
// as its first act, before it reads a byte of its input: root-owned until then, not dumpable after.
import CCrashwatch
import CrashwatchModel
import Glibc

/// The identity a processing worker takes.
public struct WorkerIdentity: Sendable, Equatable {
    /// Real and saved ids: the dedicated user the worker is to the kernel's signal and ptrace checks.
    public var ownerUID: UInt32
    public var ownerGID: UInt32
    /// Effective (and filesystem) ids and supplementary groups: whose files it may open.
    public var uid: UInt32
    public var gid: UInt32
    public var groups: [UInt32]

    /// The most supplementary groups passed on (the kernel's NGROUPS_MAX).
    public static let maximumGroups = 65_536

    public init(ownerUID: UInt32, ownerGID: UInt32, uid: UInt32, gid: UInt32, groups: [UInt32]) {
        self.ownerUID = ownerUID
        self.ownerGID = ownerGID
        self.uid = uid
        self.gid = gid
        self.groups = Array(groups.prefix(Self.maximumGroups))
    }

    /// The name of the dedicated user workers run as, when it exists (the Debian package creates it).
    public static let dedicatedUserName = "crashwatch-worker"

    /// The dedicated user's ids: `crashwatch-worker`, else `nobody`, else 65534 (the kernel's overflow ids).
    public static func dedicatedUser() -> (uid: UInt32, gid: UInt32, name: String) {
        for name in [dedicatedUserName, "nobody"] {
            if let user = userIDs(named: name), user.uid != 0 { return (user.uid, user.gid, name) }
        }
        return (65_534, 65_534, "65534")
    }

    /// The identity of the worker processing a crash of a process with these credentials, when crashwatch
    /// runs as root; nil otherwise (an unprivileged crashwatch's worker is its own user, who is the crashed
    /// program's). Without credentials (a core file's own notes are not believed), or for a root process,
    /// the dedicated user alone. `dedicated` is asked for only under root (a user database lookup).
    public static func forCrash(of credentials: ProcessCredentials?, dedicated: () -> (uid: UInt32, gid: UInt32)) -> WorkerIdentity? {
        guard geteuid() == 0 else { return nil }
        let dedicated = dedicated()
        guard let credentials, credentials.realUID != 0 else {
            return WorkerIdentity(ownerUID: dedicated.uid, ownerGID: dedicated.gid, uid: dedicated.uid, gid: dedicated.gid, groups: [])
        }
        // The user who ran it: a setuid program's real ids, never the privileges it gained.
        return WorkerIdentity(ownerUID: dedicated.uid, ownerGID: dedicated.gid, uid: credentials.realUID,
                              gid: credentials.realGID, groups: credentials.groups)
    }

    /// The command-line form passed to the worker: `OWNERUID:OWNERGID:UID:GID:G1,G2,…`.
    public var argument: String {
        "\(ownerUID):\(ownerGID):\(uid):\(gid):" + groups.map(String.init).joined(separator: ",")
    }

    /// Parses `argument`; nil when malformed.
    public init?(argument: String) {
        let fields = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 5, let ownerUID = Self.id(fields[0]), let ownerGID = Self.id(fields[1]),
              let uid = Self.id(fields[2]), let gid = Self.id(fields[3]) else { return nil }
        var groups: [UInt32] = []
        if !fields[4].isEmpty {
            for text in fields[4].split(separator: ",", omittingEmptySubsequences: false) {
                guard let group = Self.id(text), groups.count < Self.maximumGroups else { return nil }
                groups.append(group)
            }
        }
        self.init(ownerUID: ownerUID, ownerGID: ownerGID, uid: uid, gid: gid, groups: groups)
    }

    /// A user or group id in `argument` (`decimalNumber`, at most `UInt32.max`).
    private static func id(_ text: Substring) -> UInt32? {
        decimalNumber(text).flatMap { UInt32(exactly: $0) }
    }

    /// In the worker, before anything else: takes this identity for good (see the file's comment). Refuses
    /// root as either id: a worker never processes as root.
    public func assume() throws(SystemError) {
        guard ownerUID != 0, uid != 0 else { throw SystemError("take the worker's identity (uid 0 refused)", errno: EPERM) }
        let result = groups.withUnsafeBufferPointer { pointer in
            cw_assume_worker_identity(ownerUID, ownerGID, uid, gid, pointer.baseAddress, pointer.count)
        }
        guard result == 0 else { throw SystemError("take the worker's identity \(argument)", errno: result) }
    }

    /// A user's uid and primary gid from the user database.
    public static func userIDs(named name: String) -> (uid: UInt32, gid: UInt32)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return (entry.pw_uid, entry.pw_gid)
    }
}

/// What the kernel says of a process's credentials: its ids, groups, capabilities and whether it is dumpable.
public struct ProcessCredentials: Codable, Sendable, Equatable {
    /// Real, effective, saved and filesystem user ids.
    public var uids: [UInt32]
    /// Real, effective, saved and filesystem group ids.
    public var gids: [UInt32]
    /// Supplementary groups.
    public var groups: [UInt32]
    /// Permitted capabilities (`CapPrm`).
    public var permittedCapabilities: UInt64
    /// Whether the kernel lets its own user read its memory (false: fs.suid_dumpable's protection applies:
    /// it changed credentials, ran a setuid or unreadable program, or set PR_SET_DUMPABLE 0); nil unknown.
    public var dumpable: Bool?

    public var realUID: UInt32 { uids.first ?? 0 }
    public var realGID: UInt32 { gids.first ?? 0 }

    /// Whether the process is more than its user: ids that differ (setuid, setgid), capabilities a non-root
    /// user does not have, or not dumpable. Its capture is kept from that user as the kernel keeps its core.
    public var isPrivileged: Bool {
        Set(uids).count > 1 || Set(gids).count > 1 || dumpable == false || (realUID != 0 && permittedCapabilities != 0)
    }

    public init(uids: [UInt32], gids: [UInt32], groups: [UInt32], permittedCapabilities: UInt64, dumpable: Bool?) {
        self.uids = uids
        self.gids = gids
        self.groups = Array(groups.prefix(WorkerIdentity.maximumGroups))
        self.permittedCapabilities = permittedCapabilities
        self.dumpable = dumpable
    }

    /// A live process's credentials: its status, and whether it is dumpable — the kernel gives the per-process
    /// files of a process that is not dumpable to root (`task_dump_owner`), whatever its effective uid.
    public static func of(_ pid: Int32, status: ProcStatus) -> ProcessCredentials? {
        guard status.uids.count == 4, status.gids.count == 4 else { return nil }
        var dumpable: Bool?
        var info = stat()
        let effective = status.uids[1]
        if effective != 0, stat("/proc/\(pid)/status", &info) == 0 { dumpable = info.st_uid != 0 }
        return ProcessCredentials(uids: status.uids, gids: status.gids, groups: status.groups,
                                  permittedCapabilities: status.permittedCapabilities, dumpable: dumpable)
    }
}

/// The calling process's effective user id.
public var effectiveUserID: UInt32 { geteuid() }

/// The calling process's effective group id.
public var effectiveGroupID: UInt32 { getegid() }

/// The id of the group named `name` in the system's group database, or nil when there is none.
public func groupID(named name: String) -> UInt32? {
    var group = Glibc.group()
    var result: UnsafeMutablePointer<Glibc.group>?
    var buffer = [CChar](repeating: 0, count: 16_384)
    let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
    guard status == 0, result != nil else { return nil }
    return group.gr_gid
}
