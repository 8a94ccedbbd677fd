// Workers.swift — the processing worker as a process: started confined (limits, its own process group, no new
// privileges, not dumpable), held back until its input is complete, moved out of the background when
// starved, made to yield its CPU, killed at its deadline. Its identity: WorkerIdentity.swift.
import CCrashwatch
import Glibc
import Synchronization

/// Holds a worker back until its input is complete, so the input can be finished while the worker starts:
/// a close-on-exec pipe whose read end the worker gets as one of its descriptors (`workerEnd`) and reads
/// to EOF (`WorkerGate.wait(fd:)`) before it reads its input. `open` ends the wait: EOF when the worker may
/// go on, a byte first when it must not.
public final class WorkerGate: Sendable {
    /// The end passed to the worker.
    public let workerEnd: OwnedDescriptor
    /// Ours, until `open` closes it (-1 then).
    private let ourEnd: Mutex<Int32>

    public init() throws(SystemError) {
        var fds: [Int32] = [-1, -1]
        guard cw_pipe_cloexec(&fds) == 0 else { throw SystemError("pipe", errno: lastErrno()) }
        workerEnd = OwnedDescriptor(adopting: fds[0])
        ourEnd = Mutex(fds[1])
    }

    deinit { open(proceed: false) }

    /// Lets the worker go on (`proceed`), or tells it to end without reading its input; later calls do
    /// nothing. Should this process die first, the worker goes on too, and finds its input unfinished.
    public func open(proceed: Bool) {
        ourEnd.withLock { fd in
            guard fd >= 0 else { return }
            if !proceed {
                var no: UInt8 = 0
                _ = retryingOnEINTR { write(fd, &no, 1) }
            }
            // EOF for the worker once every copy is closed: the only other ones, inherited by children
            // forked meanwhile, are closed at their exec.
            Glibc.close(fd)
            fd = -1
        }
    }

    /// In the worker: waits until the gate on `fd` opens; whether the input may be read (false: it will
    /// never be finished, or the descriptor is not a gate).
    public static func wait(fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return retryingOnEINTR { read(fd, &byte, 1) } == 0
    }
}

/// How a worker process is confined.
public struct WorkerLimits: Sendable {
    /// RLIMIT_AS in bytes.
    public var addressSpaceBytes: UInt64
    /// RLIMIT_CPU in seconds.
    public var cpuSeconds: UInt64
    /// RLIMIT_FSIZE in bytes: the most it can write to any file.
    public var fileSizeBytes: UInt64
    /// RLIMIT_FSIZE's hard limit: what the worker's debug-cache writer may raise it to.
    public var fileSizeHardBytes: UInt64 = 0
    /// Start in the background (SCHED_BATCH at nice 19, yielding its CPU every 0.25 ms; the supervisor promotes
    /// it when starved): for a worker beside traced programs, whose stops must not wait on it. Not for one a
    /// person or the kernel waits on (analyze-core, core-handler), nor under a seccomp filter (the scheduling
    /// calls could be refused by a kill).
    public var background = false

    public init(addressSpaceBytes: UInt64, cpuSeconds: UInt64, fileSizeBytes: UInt64) {
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.fileSizeBytes = fileSizeBytes
    }
}

/// Starts crashwatch's own executable again as a confined worker with `arguments`, passing `descriptors`
/// as fds 3, 4, …; `environment` replaces the environment. With `standardError`, that file is the worker's
/// stderr and /dev/null its stdin and stdout; without, it keeps crashwatch's. It starts with crashwatch's
/// credentials and takes its own identity itself (`WorkerIdentity.assume`). Returns its pid.
public func spawnWorker(arguments: [String], environment: [String], descriptors: [Int32], standardError: Int32? = nil,
                        limits: WorkerLimits) throws(SystemError) -> Int32
{
    var pid: pid_t = 0
    var raw = cw_worker_limits(
        address_space_bytes: limits.addressSpaceBytes, cpu_seconds: limits.cpuSeconds,
        file_size_bytes: limits.fileSizeBytes, file_size_hard_bytes: limits.fileSizeHardBytes,
        background: limits.background ? 1 : 0)
    let result = withCStringArray(["crashwatch"] + arguments) { argv in
        withCStringArray(environment) { envp in
            descriptors.withUnsafeBufferPointer { fds in
                cw_spawn_worker("/proc/self/exe", argv, envp, fds.baseAddress, fds.count, standardError ?? -1, &raw, &pid)
            }
        }
    }
    guard result == 0 else { throw SystemError("fork worker", errno: lastErrno()) }
    return pid
}

/// Moves a worker out of the background (SCHED_BATCH at nice 19, yielding every 0.25 ms) to SCHED_OTHER at
/// nice 0, so that a busy machine cannot starve it — every thread of it: its main thread may be waiting for
/// its other one (symbols loading while it unwinds). False when not allowed (an unprivileged crashwatch
/// without RLIMIT_NICE) or the worker is gone.
public func promoteWorker(_ pid: Int32) -> Bool {
    guard cw_worker_promote(pid) == 0 else { return false }
    for tid in ProcFS.threadIDs(of: pid) where tid != pid { _ = cw_worker_promote(tid) }
    return true
}

/// How long the thread of worker `pid` that waited longest on a run queue has waited, in nanoseconds
/// (`ProcFS.runQueueWaitNanoseconds` of each); nil when none can be read (the worker is gone).
public func workerRunQueueWaitNanoseconds(_ pid: Int32) -> Int64? {
    ProcFS.threadIDs(of: pid).compactMap { ProcFS.runQueueWaitNanoseconds($0) }.max()
}

/// For the processing worker: gives up the CPU every `microseconds` (SIGALRM from ITIMER_REAL, a handler
/// calling sched_yield, SA_RESTART), so that a task the scheduler queued on its CPU — a traced program
/// whose stop was just answered, the tracer thread — waits at most about that long, whatever the kernel's
/// preemption does: on this PREEMPT_NONE kernel a task woken onto the busy worker's CPU was measured
/// waiting for the next tick (3.5–4 ms at HZ=250) while the other CPU idled. (A CPU-time timer would not
/// do: those fire at ticks too.) Not under a seccomp filter, which might kill the worker for `setitimer`.
/// Whether the timer is set.
@discardableResult
public func yieldCPU(everyMicroseconds microseconds: UInt32) -> Bool {
    guard SelfProcess.hasNoSeccompFilter else { return false }
    return cw_yield_every(microseconds) == 0
}

/// Sends SIGKILL to `pid` (a worker past its deadline); a process already gone is fine.
public func killProcess(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}

