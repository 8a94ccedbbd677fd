// Events.swift — what the supervisor tells its observer: crashes and abnormal exits of traced processes.
import CrashwatchModel

/// A crash signal a process handled: the "original fault" of a crash that a handler later re-raised.
public struct HandledFault: Equatable, Sendable {
    /// The thread that took the fault.
    public let tid: Int32
    /// The signal as the kernel delivered it.
    public let signal: SignalInfo
    /// When the supervisor saw it (CLOCK_REALTIME, nanoseconds since the epoch).
    public let timeNanoseconds: Int64
}

/// A process about to die of a crash signal, stopped at the fatal signal's delivery.
public struct DetectedCrash: Equatable, Sendable {
    /// The crashed process (thread-group id).
    public let pid: Int32
    /// The thread the fatal signal is being delivered to.
    public let tid: Int32
    /// The crashed thread's name (`comm`), when it could be read.
    public let threadName: String?
    /// argv[0] of the crashed process, falling back to its `comm`.
    public let executable: String
    /// The fatal signal.
    public let signal: SignalInfo
    /// The earlier fault this thread's handler caught, for a handler that re-raised or aborted.
    public let originalFault: HandledFault?
    /// When the supervisor saw the fatal signal (CLOCK_REALTIME, nanoseconds since the epoch).
    public let timeNanoseconds: Int64
    /// Whether this is the supervisor's main child (false for a followed fork).
    public let isMainProcess: Bool
}

/// A traced process that was killed by SIGKILL: an abnormal exit, not a crash.
public struct AbnormalExit: Equatable, Sendable {
    public let pid: Int32
    public let executable: String
    public let signal: Signal
    public let timeNanoseconds: Int64
}

/// Receives the supervisor's findings on the tracer thread, while the process is still stopped.
///
/// Implementations must return promptly: the crashed process waits for them.
public protocol SupervisorObserver: AnyObject {
    /// A traced process is about to die of a crash signal; it is stopped until this returns.
    func supervisorDetected(_ crash: DetectedCrash)
    /// A traced process was killed by SIGKILL.
    func supervisorSawAbnormalExit(_ exit: AbnormalExit)
}
