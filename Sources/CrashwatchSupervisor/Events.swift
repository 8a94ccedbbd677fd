// Events.swift — what the supervisor tells its observer: crashes and abnormal exits of traced processes,
// and the processing jobs it runs for them.
import CrashwatchModel
import CrashwatchSystem

/// A crash signal a process handled: the "original fault" of a crash that a handler later re-raised.
public struct HandledFault: Equatable, Sendable {
    /// The thread that took the fault.
    public let tid: Int32
    /// The signal as the kernel delivered it.
    public let signal: SignalInfo
    /// When the supervisor saw it (CLOCK_REALTIME, nanoseconds since the epoch).
    public let timeNanoseconds: Int64
    /// The thread's registers at the fault (raw NT_PRSTATUS bytes); empty when they could not be read.
    /// The frames above the fault are still on the stack when the handler re-raises, so a capture
    /// can unwind the original fault from these.
    public let registers: [UInt8]

    public init(tid: Int32, signal: SignalInfo, timeNanoseconds: Int64, registers: [UInt8]) {
        self.tid = tid
        self.signal = signal
        self.timeNanoseconds = timeNanoseconds
        self.registers = registers
    }

    /// The stack pointer at the fault, from the raw registers (`rsp` is slot 19 of x86-64's
    /// `user_regs_struct`, `sp` slot 31 of aarch64's `user_pt_regs`; RegisterDecoders.swift owns the
    /// layouts and a test keeps the two in step).
    public var stackPointer: UInt64? {
        let offset = Self.stackPointerSlot * 8
        guard registers.count >= offset + 8 else { return nil }
        return registers[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    #if arch(x86_64)
    public static let stackPointerSlot = 19
    #else
    public static let stackPointerSlot = 31
    #endif
}

/// The handled crash signals of one thread whose handlers may still be running, oldest first: a new
/// fault ends every earlier one it sits at or above on the same stack (their handlers returned, their
/// signal frames are gone); one deeper down may be inside an earlier handler, and the list keeps both.
/// Processing decides exactly which are still active from the signal frames on the stacks.
public struct NestedFaults: Equatable, Sendable {
    public private(set) var faults: [HandledFault] = []

    public init() {}

    /// The most a thread keeps; the oldest goes first.
    public static let capacity = 32
    /// Stack pointers further apart than this are taken to be on different stacks (an alternate signal stack).
    public static let sameStackDistance: UInt64 = 8 << 20

    public mutating func record(_ fault: HandledFault) {
        if let sp = fault.stackPointer {
            faults.removeAll { old in
                guard let oldSP = old.stackPointer else { return true }
                let distance = oldSP > sp ? oldSP - sp : sp - oldSP
                return distance < Self.sameStackDistance && oldSP <= sp
            }
        }
        faults.append(fault)
        if faults.count > Self.capacity { faults.removeFirst(faults.count - Self.capacity) }
    }
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
    /// The supervisor's view of the original fault: the oldest handled fault still listed for the crashed
    /// thread, or — for a signal the process sent itself (`kill(getpid())`, redis) — for any of its threads.
    public let originalFault: HandledFault?
    /// Every handled fault of the process whose handler may still be running, oldest first.
    public let handledFaults: [HandledFault]
    /// When the supervisor saw the fatal signal (CLOCK_REALTIME, nanoseconds since the epoch).
    public let timeNanoseconds: Int64
    /// The thread that crashed: the one the fatal signal is delivered to, unless the process sent itself the
    /// signal (`kill(getpid())`, `raise` from a handler) after another thread's fault — then that one.
    public let crashedThreadID: Int32
    /// Its name (`comm`), when it could be read.
    public let crashedThreadName: String?
    /// Set for a hang snapshot: the process is not dying, `signal` is none, and every thread was stopped
    /// by crashwatch and is let go as it was.
    public var hang: DetectedHang? = nil
    /// Set for a snapshot (`crashwatch snapshot`, or a supervisor asked for one): the process is not dying,
    /// `signal` is none, and every thread was stopped by crashwatch and is let go as it was.
    public var isSnapshot = false
    /// Who asked a supervisor for the snapshot (its control socket's peer); nil for `crashwatch snapshot`'s own.
    public var snapshotRequester: PeerCredentials? = nil
    /// Set for a death seen only at the threads' PTRACE_EVENT_EXIT stops (SIGKILL, or a crash signal the
    /// kernel forced past its delivery stop, as a seccomp kill does): `signal` holds just the signal, its
    /// siginfo is not known, and the threads go on to exit when let go.
    public var seenAtExit = false
    /// What of the process's memory is never read (files on FUSE file systems), as found when it was detected.
    public var unreadableFiles: UnreadableFiles?

    /// Whether crashwatch stopped every thread from outside and lets them go on as they were (a hang, a
    /// snapshot): no thread crashed, and each thread's state is recorded.
    public var isLiveLook: Bool { hang != nil || isSnapshot }
}

/// A process whose watchdog pings stopped: it is captured as a hang and left running.
public struct DetectedHang: Equatable, Sendable {
    /// The last ping (CLOCK_REALTIME, nanoseconds since the epoch): when the hang began.
    public let lastPingNanoseconds: Int64
    /// How long the pings had stopped when the hang was seen, in nanoseconds.
    public let silenceNanoseconds: Int64
    /// The watchdog timeout (`WATCHDOG_USEC`), in nanoseconds, when known.
    public let watchdogTimeoutNanoseconds: Int64?
}

/// A traced process that was killed by SIGKILL: an abnormal exit, not a crash.
public struct AbnormalExit: Equatable, Sendable {
    public let pid: Int32
    public let executable: String
    public let signal: Signal
    public let timeNanoseconds: Int64
    /// Whether its threads are stopped at their exit, so their stacks can still be captured (else the
    /// process is already gone: the kernel gave no exit stop).
    public let threadsStopped: Bool
}

/// Receives the supervisor's findings on the tracer thread, while the process is still stopped.
///
/// Implementations must return promptly: the crashed process waits for them.
public protocol SupervisorObserver: AnyObject {
    /// The command runs, traced (it has exec'd): from now on the observer may start threads. Not before: in a
    /// process's first `pthread_create` glibc installs a handler for signal 33, and the command would no
    /// longer inherit it ignored.
    func supervisorStarted()
    /// A crash (or hang, or SIGKILL death seen at the exit stops) of `crash.pid` was detected and its threads
    /// are about to be stopped: the observer may start, on a thread of its own, what needs no stopped thread.
    func supervisorStopping(_ crash: DetectedCrash)
    /// A traced process is about to die of a crash signal; every thread in `stopped` stays stopped
    /// until this returns, so registers and memory can be read. Returns what to do once the process is
    /// released — start its processing, whose files, arguments and worker input need nothing of the process —
    /// if anything.
    func supervisorDetected(_ crash: DetectedCrash, stopped: StoppedProcess) -> AfterRelease?
    /// A traced process was killed by SIGKILL. Only quick reads of /proc belong here. Returns true to have its
    /// threads' stacks captured (possible when `exit.threadsStopped`): `supervisorDetected` then follows with a
    /// `seenAtExit` capture. Otherwise the process (a zombie, or stopped at its exit) is let go at once.
    func supervisorSawAbnormalExit(_ exit: AbnormalExit) -> Bool
    /// A line about supervision itself that an operator needs (the watchdog relay failed, …).
    func supervisorWarning(_ line: String)
    /// A line about supervision itself that an operator must see where the service's log is read, not only on
    /// stderr (a daemon that forked without `--pid-file` runs on unsupervised): stderr and the journal.
    func supervisorNotice(_ line: String)
    /// A job's worker ended, was killed at its deadline, or could not run.
    func supervisorFinished(_ job: ProcessingJob, outcome: WorkerOutcome)
}

/// What an observer does once the process it captured is released (`SupervisorObserver.supervisorDetected`): run
/// on the tracer thread right after the release, so that none of it is part of the hold; returns the processing
/// to queue, if any.
public struct AfterRelease {
    let start: () -> ProcessingJob?

    public init(_ start: @escaping () -> ProcessingJob?) { self.start = start }
}

/// Processing of one capture in a worker process, started by the supervisor after the release.
public final class ProcessingJob {
    /// Arguments for the worker (crashwatch's own executable); the supervisor appends `--hold-ns N`.
    public let arguments: [String]
    /// Passed as fds 3, 4, …; kept open until the job ends.
    public let descriptors: [OwnedDescriptor]
    /// The worker's standard error (its stdin and stdout are then /dev/null); nil: crashwatch's own.
    public let standardError: OwnedDescriptor?
    public let environment: [String]
    public let limits: WorkerLimits
    /// CLOCK_MONOTONIC nanoseconds: the worker is killed if it runs past this.
    public let deadlineNanoseconds: Int64
    /// The observer's own state for the job.
    public let context: AnyObject?
    /// Called once the job's last report is written, with its path, or with why there is none (from any
    /// thread): how a snapshot asked for through the control socket gets its answer.
    public var reportWritten: (@Sendable (Result<String, ReportProblem>) -> Void)?
    /// How long the crashed process was held, set at release.
    public internal(set) var holdNanoseconds: Int64 = 0
    var killedAtDeadline = false
    /// When the worker (started SCHED_BATCH at nice 19) is moved to the normal policy if it still runs:
    /// halfway from its start to the deadline, or before when it is found starved.
    var promoteAtNanoseconds = Int64.max
    /// When the worker is next looked at for starvation.
    var starvationCheckAtNanoseconds = Int64.max
    var promoted = false

    public init(arguments: [String], descriptors: [OwnedDescriptor], standardError: OwnedDescriptor? = nil, environment: [String],
                limits: WorkerLimits, deadlineNanoseconds: Int64, context: AnyObject?) {
        self.arguments = arguments
        self.descriptors = descriptors
        self.standardError = standardError
        self.environment = environment
        self.limits = limits
        self.deadlineNanoseconds = deadlineNanoseconds
        self.context = context
    }
}

/// Why a job's report could not be written (the line crashwatch printed about it).
public struct ReportProblem: Error, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }
}

/// How a processing job ended.
public enum WorkerOutcome: Sendable, Equatable {
    /// The worker exited with this status (0: its output is complete).
    case exited(Int32)
    /// The worker died of this signal.
    case killed(Signal)
    /// The supervisor killed it at the capture deadline.
    case deadlinePassed
    /// It could not be started.
    case notStarted(String)
    /// Too many crashes were being processed at once; this one was not.
    case skipped
}

/// How a thread stopped by a capture is stopped, which decides how it is let go.
public enum ThreadStop: Equatable, Sendable {
    /// A signal is about to be delivered to it; it is delivered on release.
    case signalDelivery(Int32)
    /// Stopped by the capture's interrupt or at a ptrace event; resumed on release.
    case event
    /// In a job-control group-stop; it stays stopped on release.
    case groupStop
}

/// A crashed process with its threads held stopped for inspection.
public struct StoppedProcess: Equatable, Sendable {
    /// The process (thread-group id).
    public let pid: Int32
    /// The thread the fatal signal is pending for.
    public let crashedTID: Int32
    /// Every stopped thread, the crashed one first, then by tid.
    public let threads: [Int32]
    /// Threads that did not stop before the deadline: they cannot be inspected.
    public let unstopped: [Int32]
    /// Threads waiting in vfork() for a child to exec or exit, not stopped: they cannot stop before that.
    public let inVfork: [Int32]
    /// The capture's deadline (CLOCK_MONOTONIC nanoseconds): past it, write what exists.
    public let deadlineNanoseconds: Int64
    /// How each stopped thread is stopped.
    public let stops: [Int32: ThreadStop]
    /// Stopped threads whose registers and stack are not captured (`crashwatch snapshot --threads`): listed
    /// with their names and states only.
    public var leftOut: [Int32] = []
}
