// ChildProcess.swift — another program run to completion with its output captured: `doctor` asks crashwatch
// itself (`run -- /bin/true`, `ship --check`) and systemd (`systemctl show`) what they would do. posix_spawn
// with stdin from /dev/null, stdout and stderr into pipes read to the end (each capped), a deadline after
// which the child is killed; the child is always reaped.
import CCrashwatch
import Glibc

/// How a child run to completion ended, and what it wrote.
public struct ChildResult: Equatable, Sendable {
    public let status: WaitStatus
    /// Its standard output and error, each cut at the cap `ChildProcess.run` was given.
    public let output: [UInt8]
    public let errorOutput: [UInt8]
    /// Whether the deadline passed and the child was killed.
    public let timedOut: Bool

    public init(status: WaitStatus, output: [UInt8], errorOutput: [UInt8], timedOut: Bool) {
        self.status = status
        self.output = output
        self.errorOutput = errorOutput
        self.timedOut = timedOut
    }
}

public enum ChildProcess {
    /// Runs `argv` (`argv[0]` an absolute path: no PATH search) with `environment` (`NAME=value`; nil: this
    /// process's own), waits at most `timeoutMilliseconds`, and returns how it ended and the first
    /// `outputCap` bytes of each of its outputs.
    public static func run(_ argv: [String], environment: [String]? = nil, timeoutMilliseconds: Int = 10_000,
                           outputCap: Int = 64 << 10) throws(SystemError) -> ChildResult {
        guard let path = argv.first, path.hasPrefix("/") else { throw SystemError("posix_spawn (argv[0] not absolute)", errno: EINVAL) }
        let out = try pipePair(), err = try pipePair()
        defer { for fd in [out.read, err.read] { close(fd) } }
        let pid: pid_t
        do {
            defer { close(out.write); close(err.write) }
            pid = try spawn(path, argv, environment ?? ProcessEnvironment.current.map { "\($0.key)=\($0.value)" }, stdout: out.write, stderr: err.write)
        }
        let deadline = Clock.monotonicNanoseconds() + Int64(timeoutMilliseconds) * 1_000_000
        var outputs: [[UInt8]] = [[], []]
        let timedOut = drain([out.read, err.read], into: &outputs, cap: outputCap, deadline: deadline)
        if timedOut { kill(pid, SIGKILL) }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && lastErrno() == EINTR {}
        return ChildResult(status: WaitStatus(raw: raw), output: outputs[0], errorOutput: outputs[1], timedOut: timedOut)
    }

    /// A close-on-exec pipe.
    private static func pipePair() throws(SystemError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard cw_pipe_cloexec(&fds) == 0 else { throw SystemError("pipe2", errno: lastErrno()) }
        return (fds[0], fds[1])
    }

    /// posix_spawn with stdin from /dev/null and stdout/stderr onto the given pipe ends.
    private static func spawn(_ path: String, _ argv: [String], _ environment: [String], stdout: Int32, stderr: Int32)
        throws(SystemError) -> pid_t
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        var cEnvironment = environment.map { strdup($0) } + [nil]
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, &cArguments, &cEnvironment)
        guard result == 0 else { throw SystemError("posix_spawn \(path)", errno: result) }
        return pid
    }

    /// Reads the pipes until both are at their end or the deadline passes (true then), keeping at most
    /// `cap` bytes of each.
    private static func drain(_ fds: [Int32], into outputs: inout [[UInt8]], cap: Int, deadline: Int64) -> Bool {
        var open = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while open.contains(where: { $0.fd >= 0 }) {
            let left = (deadline - Clock.monotonicNanoseconds()) / 1_000_000
            guard left > 0 else { return true }
            let ready = poll(&open, nfds_t(open.count), Int32(min(left, 1_000)))
            if ready < 0 && lastErrno() != EINTR { return false }
            for index in open.indices where open[index].fd >= 0 && open[index].revents != 0 {
                let count = read(open[index].fd, &buffer, buffer.count)
                if count < 0 && lastErrno() == EINTR { continue }
                guard count > 0 else { open[index].fd = -1; continue }
                outputs[index] += buffer[0..<min(count, max(cap - outputs[index].count, 0))]
            }
        }
        return false
    }
}
