// Interactive.swift — another program run in the foreground with crashwatch's own standard input, output and
// error (a debugger): spawned, waited for, its exit status returned. SIGINT is ignored here while it runs
// (Ctrl-C is the debugger's) and restored after. Also inflating a kept core into a private file for it.
import CCrashwatch
import Glibc

/// Runs programs in the foreground and prepares their input files.
public enum Interactive {
    /// Runs `argv` (`argv[0]` found on PATH) with `environment` and waits for it; its wait status, or the
    /// posix_spawn error.
    public static func run(_ argv: [String], environment: [String: String]) throws(SystemError) -> WaitStatus {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var ignore = sigaction(), saved = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigaction(SIGINT, &ignore, &saved)
        defer { sigaction(SIGINT, &saved, nil) }
        var cArguments = argv.map { strdup($0) } + [nil]
        var cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, argv[0], nil, &attributes, &cArguments, &cEnvironment)
        guard result == 0 else { throw SystemError("posix_spawn \(argv[0])", errno: result) }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && lastErrno() == EINTR {}
        return WaitStatus(raw: raw)
    }

    /// Inflates gzip file `source` (opened without following a link: a regular file only) into a new file
    /// `destination`, created exclusively with mode 0600.
    public static func gunzip(_ source: OwnedDescriptor, to destination: String) throws(SystemError) {
        let out = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw SystemError("open \(destination)", errno: lastErrno()) }
        defer { close(out) }
        guard cw_gunzip_fd(source.fd, out) == 0 else { throw SystemError("gunzip into \(destination)", errno: lastErrno()) }
    }

    /// A new private directory (mode 0700) under `$TMPDIR` or /tmp.
    public static func privateTemporaryDirectory(environment: [String: String]) throws(SystemError) -> String {
        let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array("\(base)/crashwatch-debug.XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw SystemError("mkdtemp \(base)", errno: lastErrno()) }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes `file` and then the directory `directory`, ignoring errors.
    public static func removeTemporary(file: String, directory: String) {
        unlink(file)
        rmdir(directory)
    }
}
