// ProcessReads.swift — what a live capture reads of the crashed process and the machine that needs no stopped
// thread: the process record (ids, command line, environment allow-list, cgroup and unit), its credentials,
// the maps and auxv, and the host record; read on the helper thread while the tracer thread stops the threads.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem
import FoundationEssentials

/// The process's own record, its seccomp mode and the machine's ptrace scope: /proc reads that need no
/// stopped thread, made on the helper thread while the supervisor stops the threads (`LiveCapture.readAhead`).
struct ProcessFacts: Sendable {
    var process: ProcessRecord
    var ptraceScope: Int?
    var seccompMode: Int?
    /// Its credentials and dumpability: who its worker reads files as, and who may read its capture.
    var credentials: ProcessCredentials?
    var softErrors: [SoftError] = []

    /// `unreadable`: what of the process's memory is never read (`UnreadableFiles`).
    static func read(pid: Int32, through: Int32, options: CaptureOptions, unreadable: UnreadableFiles) -> ProcessFacts {
        let status = (try? ProcFS.threadStatus(pid)) ?? (try? ProcFS.threadStatus(through))
        let readable = unreadable.argumentsReadable(pid: pid, through: through)
        var facts = ProcessFacts(process: LiveCapture.processRecord(pid: pid, through: through, options: options, status: status,
                                                                    argumentsReadable: readable),
                                 ptraceScope: ProcFS.setting("/proc/sys/kernel/yama/ptrace_scope").flatMap { Int($0) },
                                 seccompMode: status?.seccompMode)
        facts.credentials = status.flatMap { ProcessCredentials.of(pid, status: $0) }
        if !readable {
            facts.softErrors.append(SoftError(stage: "process", message:
                "the command line and environment were not read: their area holds a page of a file on a FUSE file system, whose server could stall the read for ever"))
        }
        return facts
    }
}

/// What a capture reads from /proc before the threads are stopped, on the helper thread (`LiveCapture.readAhead`).
public struct CaptureReadAhead: Sendable {
    let pid: Int32
    /// What of the memory is never read: as detection found it (`known`), else read here.
    let unreadable: UnreadableFiles
    /// The process facts, read on `helper`.
    let facts: HelperComputation<ProcessFacts>

    init(pid: Int32, through: Int32, options: CaptureOptions, helper: HelperThread?, known: UnreadableFiles? = nil) {
        self.pid = pid
        let unreadable = known ?? UnreadableFiles(pid: through)
        self.unreadable = unreadable
        facts = HelperComputation(on: helper) { ProcessFacts.read(pid: pid, through: through, options: options, unreadable: unreadable) }
    }
}

/// The maps and auxv of a stopped process, parsed: read on the helper thread while the tracer thread reads
/// registers (the stacks are planned from them after).
struct MapsReading: Sendable {
    var text = ""
    var auxv: [UInt8] = []
    var table = ImageTable(mapsText: "")
    var softErrors: [SoftError] = []

    /// At most this many maps lines are read (a hostile process can map millions of pages).
    static let byteLimit = 64 << 20

    init() {}

    /// Starts reading through thread `through` on `helper` (at once without one).
    static func start(through: Int32, on helper: HelperThread?) -> HelperComputation<MapsReading> {
        HelperComputation(on: helper) { MapsReading(through: through) }
    }

    /// Reads through thread `through` (a zombie leader's maps read as empty).
    init(through: Int32) {
        do {
            let bytes = try ProcFS.readBytes("/proc/\(through)/maps", limit: Self.byteLimit)
            if bytes.count >= Self.byteLimit {
                softErrors.append(SoftError(stage: "images", message: "/proc/\(through)/maps is longer than \(Self.byteLimit) bytes; the rest was not read"))
            }
            text = String(decoding: bytes, as: UTF8.self)
        } catch {
            softErrors.append(SoftError(stage: "images", message: "\(error)"))
        }
        auxv = (try? ProcFS.readBytes("/proc/\(through)/auxv", limit: 4096)) ?? []
        table = ImageTable(mapsText: text)
    }
}

extension LiveCapture {
    /// The file name the process was started with: execve's, which the kernel leaves at the top of the stack and
    /// names in auxv (`AT_EXECFN`), when it is absolute (a relative one's directory may have changed since), no
    /// `/proc/…` or `/dev/fd/…` link, and NUL-terminated within 4 KiB. The process could have overwritten it: the
    /// resolved path goes beside it.
    static func executableAsStarted(through: Int32) -> String? {
        guard let auxv = try? ProcFS.readBytes("/proc/\(through)/auxv", limit: 4096) else { return nil }
        let reader = ByteReader(auxv)
        var offset = 0, address: UInt64?
        while let type = reader.u64(offset), let value = reader.u64(offset + 8), type != 0 {
            if type == 31 { address = value }  // AT_EXECFN
            offset += 16
        }
        guard let address, let bytes = ProcessMemory(through: through)?.read(address: address, count: 4096),
              let end = bytes.firstIndex(of: 0), end > 0, bytes[0] == UInt8(ascii: "/") else { return nil }
        let name = String(decoding: bytes[..<end], as: UTF8.self)
        // fexecve and exec of /proc/self/exe name a descriptor or a link, not how the program is known.
        return name.hasPrefix("/proc/") || name.hasPrefix("/dev/fd/") ? nil : name
    }

    /// The process record of a live (or stopped, or exiting) process, read from /proc through thread `through`.
    public static func processRecord(pid: Int32, through: Int32, options: CaptureOptions) -> ProcessRecord {
        processRecord(pid: pid, through: through, options: options,
                      status: (try? ProcFS.threadStatus(pid)) ?? (try? ProcFS.threadStatus(through)))
    }

    /// The process record, with the process's status read already (`/proc/PID/status`, else the thread's).
    /// `argumentsReadable` false: the command line and environment are not read (a page of a FUSE file is in
    /// their area: `UnreadableFiles`); the record has neither.
    static func processRecord(pid: Int32, through: Int32, options: CaptureOptions, status: ProcStatus?,
                              argumentsReadable: Bool? = nil) -> ProcessRecord {
        let readable = argumentsReadable ?? UnreadableFiles(pid: pid).argumentsReadable(pid: pid, through: through)
        let exeLink = ProcFS.readLink("/proc/\(through)/exe") ?? ""
        let resolved = capped(InAppRule.deletedSuffixRemoved(exeLink).path)
        // As started (a symlink's name, `redis-server`), when execve's absolute file name is still readable.
        let executable = executableAsStarted(through: through).map(capped) ?? resolved
        var arguments = (readable ? ProcFS.commandLineBytes(through) : []).prefix(CaptureReader.maximumArguments)
        // A program that rewrote its title leaves the rest of its argument area as empty arguments.
        var trimmed = 0
        while arguments.count > 1, arguments.last?.isEmpty == true {
            arguments.removeLast()
            trimmed += 1
        }
        var commandLine = arguments.map { capped(String(decoding: $0, as: UTF8.self)) }
        // Bytes that are not UTF-8 read as U+FFFD in `commandLine`; the exact bytes go beside it.
        let exact = options.redactArguments || arguments.allSatisfy { String(validating: $0, as: UTF8.self) != nil }
            ? nil : arguments.map { Hex.string(Array($0.prefix(maximumNameBytes))) }
        if options.redactArguments { commandLine = CommandLineRedaction.redacted(commandLine) }
        let environment = readable ? ProcFS.environment(through) : []
        func variable(_ name: String) -> String? { environment.last(where: { $0.name == name }).map { capped($0.value) } }
        var allowed: [String: String] = [:]
        for name in options.environmentAllowList { if let value = variable(name) { allowed[name] = value } }
        let app = AppRecord(
            name: options.app.name ?? variable("CRASHWATCH_APP_NAME"),
            version: options.app.version ?? variable("CRASHWATCH_APP_VERSION"),
            release: options.app.release ?? variable("CRASHWATCH_APP_RELEASE"))
        let cgroup = CgroupInfo.of(through)
        var record = ProcessRecord(
            pid: pid, ppid: status?.ppid ?? 0, executable: executable, commandLine: Array(commandLine),
            redacted: options.redactArguments, cwd: ProcFS.readLink("/proc/\(through)/cwd").map(capped),
            uid: status?.uids.first ?? 0, gid: status?.gids.first ?? 0,
            startTime: ProcessClock.startTimeNanoseconds(pid: pid).map { RFC3339.format(nanosecondsSinceEpoch: $0) },
            comm: status?.name ?? "", cgroup: cgroup?.path.map(capped), systemdUnit: cgroup?.unit.map(capped),
            systemdInvocationID: variable("INVOCATION_ID"),
            app: app.name == nil && app.version == nil && app.release == nil ? nil : app,
            environment: allowed)
        record.executableResolved = resolved
        record.commandLineTrimmed = trimmed
        record.commandLineHex = exact
        return record
    }
}

/// `--redact-args`: everything the kernel shows after the program's name goes, whatever its shape.
public enum CommandLineRedaction {
    /// argv[0] and `<redacted>` for each later argument; a program that rewrote its title into one
    /// string (setproctitle: `redis-server *:6379 --requirepass x`, or a name given with `exec -a`) keeps
    /// only its first word.
    public static func redacted(_ commandLine: [String]) -> [String] {
        guard let first = commandLine.first else { return [] }
        if commandLine.count > 1 {
            return [first] + Array(repeating: "<redacted>", count: commandLine.count - 1)
        }
        guard let blank = first.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return commandLine }
        return [String(first[..<blank]) + " <redacted>"]
    }
}

/// This machine, as a report records it.
public enum CaptureHost {
    public static func record() -> HostRecord {
        let uname = UnameInfo.current()
        return HostRecord(
            hostname: uname.nodename, kernelRelease: uname.release, kernelVersion: uname.version,
            osName: sameForThisBoot.os.name, osVersion: sameForThisBoot.os.version, architecture: Architecture.host.rawValue,
            bootID: sameForThisBoot.bootID)
    }

    /// Reads what cannot change until the next boot (os-release, boot id, boot time) now, so that no
    /// capture pays for it while a process is held. Call once before the first crash can happen.
    public static func prepare() {
        _ = sameForThisBoot
        _ = ProcessClock.bootTimeSeconds
    }

    /// What cannot change while crashwatch runs, read once rather than while a process is held.
    private static let sameForThisBoot = (os: OSRelease.current(), bootID: ProcFS.setting("/proc/sys/kernel/random/boot_id"))
}
