// Spawn.swift — starting the traced child: PATH lookup (pure), and the C shim's fork+stop+seize+exec.
import CCrashwatch
import Glibc

/// Where a command name may live, in the order `execvp` tries them.
public enum ExecutableSearch {
    /// glibc's search path when PATH is unset.
    public static let defaultPath = "/bin:/usr/bin"

    /// The paths to try for `command`: the name itself when it contains a slash, otherwise each PATH
    /// entry joined with it (an empty entry means the current directory, as in a shell).
    public static func candidates(for command: String, path: String?) -> [String] {
        candidates(for: Array(command.utf8), path: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The same for a command given as bytes (which need not be UTF-8): the bytes are kept as they are.
    public static func candidates(for command: [UInt8], path: String?) -> [[UInt8]] {
        if command.contains(UInt8(ascii: "/")) { return [command] }
        let entries = (path ?? defaultPath).split(separator: ":", omittingEmptySubsequences: false)
        return entries.map { entry in
            entry.isEmpty ? command : Array(entry.utf8) + (entry.hasSuffix("/") ? [] : [UInt8(ascii: "/")]) + command
        }
    }
}

/// A child that was spawned stopped, seized, and let go towards its exec.
public struct SpawnedChild: ~Copyable {
    /// The child's pid: also its thread-group id and the first tracee.
    public let pid: Int32
    private let errorFD: Int32

    fileprivate init(pid: Int32, errorFD: Int32) {
        self.pid = pid
        self.errorFD = errorFD
    }

    /// After the child's first exec event (EOF: nil) or its exit (the errno every exec attempt ended with).
    /// Closes the pipe; call it once.
    public consuming func execFailure() -> ExecFailure? {
        var value: Int32 = 0
        let count = withUnsafeMutableBytes(of: &value) { buffer in retryingOnEINTR { read(errorFD, buffer.baseAddress, buffer.count) } }
        close(errorFD)
        discard self
        return count == MemoryLayout<Int32>.size ? ExecFailure(errno: value) : nil
    }

    deinit { close(errorFD) }
}

/// Forks, stops the child before exec, seizes it with `ptraceOptions`, and lets it exec the first
/// acceptable candidate with `argv` and `environment` (nil: the inherited one), restoring `childMask`
/// first. `LISTEN_PID` and `WATCHDOG_PID` that name this process are changed to name the child (systemd
/// addresses socket activation and the watchdog to the main process, crashwatch; they are the program's).
/// `argv`, `candidates` and the environment are bytes, passed to the kernel exactly: they need not be UTF-8.
public func spawnTraced(argv: [[UInt8]], candidates: [[UInt8]], environment: [[UInt8]]? = nil, childMask: sigset_t,
                        ptraceOptions: UInt) throws(SystemError) -> SpawnedChild
{
    var mask = childMask
    var pid: pid_t = 0
    var errorFD: Int32 = -1
    let result = withCStringArray(bytes: candidates) { paths in
        withCStringArray(bytes: argv) { args in
            guard let environment else {
                return cw_spawn_traced(paths, candidates.count, args, nil, &mask, ptraceOptions, &pid, &errorFD)
            }
            return withCStringArray(bytes: environment) { envp in
                cw_spawn_traced(paths, candidates.count, args, envp, &mask, ptraceOptions, &pid, &errorFD)
            }
        }
    }
    guard result == 0 else { throw SystemError("spawn \(String(decoding: argv.first ?? [], as: UTF8.self))", errno: lastErrno()) }
    return SpawnedChild(pid: pid, errorFD: errorFD)
}

extension SelfProcess {
    /// Replaces crashwatch with the command, unsupervised: the first candidate the kernel accepts (as
    /// `spawnTraced`'s child would exec it), with crashwatch's environment and `mask` restored. Returns
    /// only when every candidate failed.
    public static func execUnsupervised(argv: [[UInt8]], candidates: [[UInt8]], mask: sigset_t) -> ExecFailure {
        var restored = mask
        let error = withCStringArray(bytes: candidates) { paths in
            withCStringArray(bytes: argv) { args in cw_exec_command(paths, candidates.count, args, &restored) }
        }
        return ExecFailure(errno: error)
    }
}

/// Calls `body` with a NULL-terminated C array of NUL-terminated copies of `strings` (bytes, kept as they are).
func withCStringArray<R>(bytes strings: [[UInt8]], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { bytes in
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
        pointer[bytes.count] = 0
        return pointer
    }
    pointers.append(nil)
    defer { for pointer in pointers { pointer?.deallocate() } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// This process's own argv as the kernel gave it: bytes, not UTF-8-repaired strings.
public func rawArguments() -> [[UInt8]] {
    (0..<Int(CommandLine.argc)).map { index in
        guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
    }
}

/// Calls `body` with a NULL-terminated C array of copies of `strings`, freed afterwards.
func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// The PATH of the supervisor's environment, which the child inherits.
public func environmentPath() -> String? {
    getenv("PATH").map { String(cString: $0) }
}

/// Why every attempt to exec the command failed.
public struct ExecFailure: Equatable, Sendable {
    /// The errno of the decisive attempt.
    public let errno: Int32

    /// Whether no candidate file existed (a shell's "command not found", status 127).
    public var isNotFound: Bool { errno == ENOENT || errno == ENOTDIR }

    /// The system's words for the errno.
    public var reason: String { String(cString: strerror(errno)) }
}

/// `run --pid-file`: splitting crashwatch into the foreground process a `Type=forking` unit starts (it
/// ends when the program's first process does, as it did) and the supervisor that stays.
public enum SupervisorSplit {
    /// Forks. The calling (foreground) process never returns from this: it waits for `report` and exits
    /// like the status it is sent. The child returns the descriptor to report on.
    public static func split() throws(SystemError) -> Int32 {
        let fd = cw_split_supervisor()
        guard fd >= 0 else { throw SystemError("fork", errno: lastErrno()) }
        return fd
    }

    /// Tells the foreground process how the program's first process ended (it exits so); closes `fd`.
    public static func report(_ status: WaitStatus, on fd: Int32) {
        _ = cw_report_status(fd, status.rawTermination ?? (70 << 8))
    }
}
