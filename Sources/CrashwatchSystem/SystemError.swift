// SystemError.swift — the one error type for failed system calls, and the one EINTR loop.
import Glibc

/// A failed system call: which call, on which process, and the system's own words for errno.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call and, where useful, its request, e.g. `ptrace(PTRACE_SEIZE)` or `open /proc/1/status`.
    public let call: String
    /// The process or thread the call was about, when there was one.
    public let pid: Int32?
    /// The errno value, read immediately after the call.
    public let errno: Int32

    /// Records a failure; `errno` must be the value saved right after the call.
    public init(_ call: String, pid: Int32? = nil, errno: Int32) {
        self.call = call
        self.pid = pid
        self.errno = errno
    }

    /// Whether the process or thread the call was about no longer exists (ESRCH).
    public var isNoSuchProcess: Bool { errno == ESRCH }

    /// The system's message for the errno (`No such process`).
    public var reason: String { String(cString: strerror(errno)) }

    /// `ptrace(PTRACE_CONT) pid 1234: No such process`.
    public var description: String {
        "\(call)\(pid.map { " pid \($0)" } ?? ""): \(reason)"
    }
}

/// Reads `errno` for the calling thread; call it first, before anything else can change it.
@inline(__always) func lastErrno() -> Int32 { Glibc.errno }

/// Repeats `body` while it fails with EINTR; returns its last result. The only EINTR loop in crashwatch.
@inline(__always) func retryingOnEINTR<T: BinaryInteger>(_ body: () -> T) -> T {
    while true {
        let result = body()
        if result == -1 && lastErrno() == EINTR { continue }
        return result
    }
}
