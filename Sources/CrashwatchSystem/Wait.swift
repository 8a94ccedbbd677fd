// Wait.swift — waitpid(2) over every traced task, and the decoding of its status word.
import CCrashwatch
import Glibc

/// What `waitpid` reported for one task, decoded from the status word (a pure function of it).
public enum WaitStatus: Equatable, Sendable {
    /// The task exited normally with this exit code.
    case exited(code: Int32)
    /// The task was killed by a signal; `coreDumped` when the kernel wrote a core for it.
    case signaled(signal: Int32, coreDumped: Bool)
    /// The task is in a ptrace stop: `event` is 0 for a signal-delivery-stop, else a `PTRACE_EVENT_*`.
    case stopped(signal: Int32, event: Int32)
    /// A stopped child was continued (only with WCONTINUED, which crashwatch does not ask for).
    case continued

    /// Decodes a raw `waitpid` status word the way glibc's W* macros do.
    public init(raw status: Int32) {
        let low = status & 0x7f
        if low == 0 {
            self = .exited(code: (status >> 8) & 0xff)
        } else if status & 0xff == 0x7f {
            self = .stopped(signal: (status >> 8) & 0xff, event: (status >> 16) & 0xffff)
        } else if status == 0xffff {
            self = .continued
        } else {
            self = .signaled(signal: low, coreDumped: status & 0x80 != 0)
        }
    }

    /// The raw status word of a termination (what `init(raw:)` decodes); nil for stops.
    public var rawTermination: Int32? {
        switch self {
        case .exited(let code): (code & 0xff) << 8
        case .signaled(let signal, let core): (signal & 0x7f) | (core ? 0x80 : 0)
        case .stopped, .continued: nil
        }
    }

    /// Whether the task is gone (exited or killed), as opposed to stopped or continued.
    public var isTermination: Bool {
        switch self {
        case .exited, .signaled: true
        case .stopped, .continued: false
        }
    }
}

/// One task's change of state, as `waitpid(-1, …, __WALL)` reports it.
public struct WaitEvent: Equatable, Sendable {
    public let pid: Int32
    public let status: WaitStatus

    public init(pid: Int32, status: WaitStatus) {
        self.pid = pid
        self.status = status
    }
}

/// Waits for any child or tracee. Returns nil when `block` is false and nothing is ready, or there are no
/// children left at all (ECHILD).
public func waitForAnyTask(block: Bool) throws(SystemError) -> WaitEvent? {
    var status: Int32 = 0
    let flags = Int32(CW_WALL) | (block ? 0 : Int32(CW_WNOHANG))
    let pid = retryingOnEINTR { waitpid(-1, &status, flags) }
    if pid == -1 {
        let saved = lastErrno()
        if saved == ECHILD { return nil }
        throw SystemError("waitpid", errno: saved)
    }
    return pid == 0 ? nil : WaitEvent(pid: pid, status: WaitStatus(raw: status))
}

/// Waits for one tracee or child `tid` (`waitpid(tid, __WALL)`). Returns nil when `block` is false and it has
/// nothing to report, or it is not (or no longer) waitable (ECHILD).
public func waitForTask(_ tid: Int32, block: Bool) throws(SystemError) -> WaitEvent? {
    var status: Int32 = 0
    let flags = Int32(CW_WALL) | (block ? 0 : Int32(CW_WNOHANG))
    let pid = retryingOnEINTR { waitpid(tid, &status, flags) }
    if pid == -1 {
        let saved = lastErrno()
        if saved == ECHILD { return nil }
        throw SystemError("waitpid", pid: tid, errno: saved)
    }
    return pid == 0 ? nil : WaitEvent(pid: pid, status: WaitStatus(raw: status))
}
