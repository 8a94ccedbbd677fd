// ReportProcess.swift — the report's process and host records: the process that died (command line,
// identity, cgroup, environment), the application's own identity, and the machine.
import FoundationEssentials

/// The process that died.
public struct ProcessRecord: Codable, Sendable, Equatable {
    /// Its pid (in the supervisor's pid namespace).
    public var pid: Int32
    /// Its parent's pid.
    public var ppid: Int32
    /// The executable as the process was started (execve's file name, a symlink's name such as
    /// `/usr/bin/redis-server`), else — unknown, or relative — the resolved path.
    public var executable: String
    /// The file the executable is (`/proc/PID/exe`, ` (deleted)` removed; see `ImageRecord.deleted`): the path
    /// images and the in-app rule go by. Nil in reports written before it existed (then `executable` is it).
    public var executableResolved: String?
    /// The resolved executable path: `executableResolved`, else `executable`.
    public var resolvedExecutable: String { executableResolved ?? executable }
    /// The command line, argv[0] first; empty when redacted.
    public var commandLine: [String]
    /// Whether the command line was withheld by configuration.
    public var redacted: Bool
    /// How many empty arguments were removed from the end of the command line: programs that rewrite their
    /// title (setproctitle: redis, PostgreSQL, nginx) leave the rest of the original argument area empty.
    public var commandLineTrimmed: Int?
    /// Every argument's exact bytes in lowercase hexadecimal (each cut at 4096 bytes) when some argument is
    /// not valid UTF-8 (`commandLine` then shows such bytes as U+FFFD); otherwise, and when redacted, nil.
    public var commandLineHex: [String]?

    /// Each argument's exact bytes: from `commandLineHex` when it is there and well-formed (one entry per
    /// argument), else the UTF-8 of `commandLine`.
    public var commandLineBytes: [[UInt8]] {
        if let hex = commandLineHex, hex.count == commandLine.count {
            let decoded = hex.compactMap(Hex.bytes)
            if decoded.count == hex.count { return decoded }
        }
        return commandLine.map { Array($0.utf8) }
    }
    /// The working directory, when readable.
    public var cwd: String?
    /// The real user id.
    public var uid: UInt32
    /// The real group id.
    public var gid: UInt32
    /// When the process started, RFC 3339 UTC with milliseconds, when known.
    public var startTime: String?
    /// The kernel's short name for the process (`/proc/PID/comm`, at most 15 bytes).
    public var comm: String
    /// The cgroup v2 path (`/system.slice/foo.service`), when known.
    public var cgroup: String?
    /// The systemd unit the process runs in, when it runs in one.
    public var systemdUnit: String?
    /// The systemd invocation id (`INVOCATION_ID`) of that unit run, when present.
    public var systemdInvocationID: String?
    /// The application's name, version and release, from options or the environment.
    public var app: AppRecord?
    /// Environment variables whose names were allowed by configuration; empty by default.
    public var environment: [String: String]

    /// Creates a process record; optional facts default to unknown and the environment to empty.
    public init(pid: Int32, ppid: Int32, executable: String, commandLine: [String], redacted: Bool = false,
                cwd: String? = nil, uid: UInt32, gid: UInt32, startTime: String? = nil, comm: String,
                cgroup: String? = nil, systemdUnit: String? = nil, systemdInvocationID: String? = nil,
                app: AppRecord? = nil, environment: [String: String] = [:]) {
        self.pid = pid
        self.ppid = ppid
        self.executable = executable
        self.commandLine = commandLine
        self.redacted = redacted
        self.commandLineTrimmed = nil
        self.commandLineHex = nil
        self.cwd = cwd
        self.uid = uid
        self.gid = gid
        self.startTime = startTime
        self.comm = comm
        self.cgroup = cgroup
        self.systemdUnit = systemdUnit
        self.systemdInvocationID = systemdInvocationID
        self.app = app
        self.environment = environment
    }
}

/// The application's own identity, as given by options or environment (not guessed).
public struct AppRecord: Codable, Sendable, Equatable {
    /// The application name (`service.name`-like).
    public var name: String?
    /// The application version (`service.version`).
    public var version: String?
    /// The release or build label, e.g. a git revision or a deployment name.
    public var release: String?

    /// Creates an app record; any field may be unknown.
    public init(name: String? = nil, version: String? = nil, release: String? = nil) {
        self.name = name
        self.version = version
        self.release = release
    }
}

/// The machine the process ran on.
public struct HostRecord: Codable, Sendable, Equatable {
    /// The host name (`uname -n`).
    public var hostname: String
    /// The kernel release (`uname -r`), e.g. `6.1.0-18-amd64`.
    public var kernelRelease: String
    /// The kernel version string (`uname -v`).
    public var kernelVersion: String
    /// The OS name from os-release(5): `NAME` (`Debian GNU/Linux`), else `ID`, else `Linux` — OpenTelemetry's `os.name`.
    public var osName: String
    /// The OS version from os-release(5): `VERSION_ID` (`12`), nil when absent (rolling releases) — `os.version`.
    public var osVersion: String?
    /// The architecture of the crashed process: `x86_64` or `aarch64`.
    public var architecture: String
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`), when readable.
    public var bootID: String?

    /// Creates a host record.
    public init(hostname: String, kernelRelease: String, kernelVersion: String, osName: String, osVersion: String?,
                architecture: String, bootID: String?) {
        self.hostname = hostname
        self.kernelRelease = kernelRelease
        self.kernelVersion = kernelVersion
        self.osName = osName
        self.osVersion = osVersion
        self.architecture = architecture
        self.bootID = bootID
    }
}
