// Pager.swift — long output through a pager, as systemd's tools do: `$SYSTEMD_PAGER`, else `$PAGER` (run by
// `/bin/sh -c`), else `less -FRSX` (quit when the text fits one screen, raw colour codes, no line wrapping, no
// screen clearing); an empty value or `cat` means none. The caller decides when (stdout a terminal, no
// `--no-pager`). The text goes through a pipe (less -F does not quit early on a socket); SIGPIPE and SIGINT
// are ignored while the pager runs (quitting it early is no error; Ctrl-C is the pager's) and restored after,
// and the pager is waited for, so the shell prompt comes after it.
import CCrashwatch
import Glibc

/// Shows text through a pager.
public enum Pager {
    /// The pager command line for `environment`: `["/bin/sh", "-c", VALUE]` for `$SYSTEMD_PAGER`/`$PAGER`,
    /// `["less", "-FRSX"]` by default (found on PATH), nil when the variable says none (empty, `cat`).
    public static func command(environment: [String: String]) -> [String]? {
        let value = environment["SYSTEMD_PAGER"] ?? environment["PAGER"]
        guard let value else { return ["less", "-FRSX"] }
        let trimmed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        if trimmed.isEmpty || trimmed == "cat" || trimmed == "/bin/cat" || trimmed == "/usr/bin/cat" { return nil }
        return ["/bin/sh", "-c", value]
    }

    /// Writes `text` to the pager `command` (stdout and stderr inherited) and waits for it. Returns false,
    /// having written nothing, when the pager cannot be started: the caller then prints the text itself.
    public static func show(_ text: String, command: [String], environment: [String: String]) -> Bool {
        var fds: [Int32] = [-1, -1]
        guard cw_pipe_cloexec(&fds) == 0 else { return false }
        var env = environment
        if env["LESSCHARSET"] == nil { env["LESSCHARSET"] = "utf-8" }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        var ignore = sigaction(), savedInterrupt = sigaction(), savedPipe = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigaction(SIGINT, &ignore, &savedInterrupt)
        sigaction(SIGPIPE, &ignore, &savedPipe)
        defer {
            sigaction(SIGINT, &savedInterrupt, nil)
            sigaction(SIGPIPE, &savedPipe, nil)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        var cArguments = command.map { strdup($0) } + [nil]
        var cEnvironment = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, command[0], &actions, &attributes, &cArguments, &cEnvironment)
        close(fds[0])
        guard result == 0 else {
            close(fds[1])
            return false
        }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
            if sent < 0 && lastErrno() == EINTR { continue }
            guard sent > 0 else { break }  // the pager quit: the rest is not wanted
            bytes = bytes.dropFirst(sent)
        }
        close(fds[1])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && lastErrno() == EINTR {}
        return true
    }
}
