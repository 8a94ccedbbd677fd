// HelperThread.swift — a thread of crashwatch's own that runs the work it is handed, in order. For work
// that must start at once while a crashed process is held: a Dispatch queue gets a pool thread, and the
// pool lets idle threads go, so the next crash would pay for creating one (about 0.1 ms on the tracer
// thread, which is the one that asks for it).
import CCrashwatch
import Dispatch
import Glibc
import Synchronization

/// A long-lived thread (every signal blocked) running submitted work one piece at a time.
public final class HelperThread: Sendable {
    private struct Piece {
        let work: @Sendable () -> Void
        let task: HelperTask
    }

    private struct Queue {
        var pieces: [Piece] = []
        /// What the thread runs now.
        var running: HelperTask?
        /// A caller runs the queue itself (`runRemaining`): the thread leaves it alone.
        var takenOver = false
    }

    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)
    private let background: Bool

    /// Starts the thread; nil when the system would not create one (callers then do the work themselves).
    /// A `background` thread runs SCHED_BATCH at nice 19 (`cw_become_background`), for work that can wait
    /// and must not take a CPU from the tracer thread or a traced program — unless crashwatch runs under a
    /// seccomp filter, which may kill it for the `sched_setscheduler` (a unit's `SystemCallFilter=~@resources`).
    public static func start(background: Bool = false) -> HelperThread? {
        let helper = HelperThread(background: background && SelfProcess.hasNoSeccompFilter)
        let context = Unmanaged.passRetained(helper).toOpaque()
        guard cw_start_thread({ context in
            // The thread owns this reference for as long as it runs, which is as long as the process.
            Unmanaged<HelperThread>.fromOpaque(context!).takeRetainedValue().serve()
        }, context) == 0 else {
            Unmanaged<HelperThread>.fromOpaque(context).release()
            return nil
        }
        return helper
    }

    /// The thread a crash's capture hands what needs no tracer to (/proc reads, stacks copied, the caller's
    /// minimal report), so that it runs while the tracer thread — the only one ptrace answers — stops threads and
    /// reads registers. Started on first use, which must come once the supervised command runs (a thread started
    /// before then changes what the command inherits); nil when none could be started.
    public static let capture: HelperThread? = HelperThread.start()

    /// How long the tracer thread waits for one of `capture`'s /proc reads before doing it itself (it cannot block
    /// on /proc, but the hold never waits on a hunch).
    public static let captureWait: Int64 = 100_000_000

    private init(background: Bool) {
        self.background = background
    }

    private func serve() -> Never {
        if background { _ = cw_become_background() }
        while true {
            available.wait()
            let next = queue.withLock { queue -> Piece? in
                guard !queue.takenOver, !queue.pieces.isEmpty else { return nil }
                let next = queue.pieces.removeFirst()
                queue.running = next.task
                return next
            }
            guard let next else { continue }
            next.work()
            queue.withLock { $0.running = nil }
            next.task.done.signal()
        }
    }

    /// Runs `work` on the thread after what was submitted before it; returns what tells when it is done.
    @discardableResult
    public func submit(_ work: @escaping @Sendable () -> Void) -> HelperTask {
        let task = HelperTask()
        queue.withLock { $0.pieces.append(Piece(work: work, task: task)) }
        available.signal()
        return task
    }

    /// Takes back the work of `task` if the thread has not started it: the caller runs it instead. A helper
    /// asleep on an idle CPU can take milliseconds to wake on a virtual machine whose host is busy, longer than
    /// the work itself; a caller that would otherwise wait for it does the work at once.
    fileprivate func takeBack(_ task: HelperTask) -> (@Sendable () -> Void)? {
        queue.withLock { queue in
            guard let index = queue.pieces.firstIndex(where: { $0.task === task }) else { return nil }
            return queue.pieces.remove(at: index).work
        }
    }

    /// Withdraws the work of `task` if the thread has not started it: it will never run, and waiting for
    /// `task` returns at once. False when it has started (wait for it).
    public func withdraw(_ task: HelperTask) -> Bool {
        guard takeBack(task) != nil else { return false }
        task.done.signal()
        return true
    }

    /// Runs what is queued on the calling thread instead, in order, after the piece running now, until nothing
    /// is left (what that work submits included): for a caller about to exit, which would otherwise wait on a
    /// background thread's low priority — a nice-19 thread gets 1.4 % of a CPU that busy programs share.
    public func runRemaining() {
        if let running = queue.withLock({ queue -> HelperTask? in
            queue.takenOver = true
            return queue.running
        }) {
            running.wait()
        }
        while let next = queue.withLock({ $0.pieces.isEmpty ? nil : $0.pieces.removeFirst() }) {
            next.work()
            next.task.done.signal()
        }
        // Work submitted as the queue emptied may have found the thread looking away: wake it for each.
        let left = queue.withLock { queue -> Int in
            queue.takenOver = false
            return queue.pieces.count
        }
        for _ in 0..<left { available.signal() }
    }
}

/// Work submitted to a `HelperThread`: wait for it to end.
public final class HelperTask: Sendable {
    fileprivate let done = DispatchSemaphore(value: 0)

    /// Waits until the work has run.
    public func wait() {
        done.wait()
        done.signal()
    }

    /// Waits until the work has run or the monotonic clock reaches `deadline` (nanoseconds); whether it ran.
    /// Once true, later calls return true at once.
    public func wait(until deadline: Int64) -> Bool {
        let remaining = max(deadline - Clock.monotonicNanoseconds(), 0)
        guard done.wait(timeout: .now() + .nanoseconds(Int(clamping: remaining))) == .success else { return false }
        done.signal()
        return true
    }
}

/// A value computed on a `HelperThread` — or at once on the calling thread when there is none. The value
/// is written before the helper's task ends and read only after waiting for it succeeded.
public final class HelperComputation<Value: Sendable>: @unchecked Sendable {
    private let compute: @Sendable () -> Value
    private var result: Value?
    private var task: HelperTask?
    private let helper: HelperThread?

    /// Starts computing on `helper`, or computes now when it is nil.
    public init(on helper: HelperThread?, _ compute: @escaping @Sendable () -> Value) {
        self.compute = compute
        self.helper = helper
        guard let helper else {
            result = compute()
            return
        }
        task = helper.submit { [self] in result = compute() }
    }

    /// The value, once computed; nil if that has not happened by `deadline` (monotonic nanoseconds). Computed on
    /// the calling thread when the helper has not started it yet (`HelperThread.takeBack`).
    public func wait(until deadline: Int64) -> Value? {
        guard let task else { return result }
        if let work = helper?.takeBack(task) {
            work()
            task.done.signal()
        }
        return task.wait(until: deadline) ? result : nil
    }

    /// The value, however long it takes — for work that is bounded and cannot stall. Computed on the calling
    /// thread when the helper has not started it yet.
    public func value() -> Value {
        if let task {
            if let work = helper?.takeBack(task) {
                work()
                task.done.signal()
            }
            task.wait()
        }
        guard let result else { preconditionFailure("a helper's computation ended without its value") }
        return result
    }

    /// The value, waited for until `deadline`, else computed again on the calling thread (for reads that
    /// may be repeated: the late helper's result is then never looked at); and whether the helper gave it.
    public func value(until deadline: Int64) -> (Value, fromHelper: Bool) {
        if let value = wait(until: deadline) { return (value, task != nil) }
        return (compute(), false)
    }
}

/// Work that can wait — a crash's final report, a worker's input — run in order on a background
/// `HelperThread` (SCHED_BATCH, nice 19) once `start()` has run; on a Dispatch queue before that, or when no
/// thread could be started.
public final class BackgroundWork: Sendable {
    private let thread = Mutex<HelperThread?>(nil)
    private let fallback = DispatchQueue(label: "crashwatch.background")

    public init() {}

    /// Starts the background thread (once). Call it once the supervised command runs: a thread started
    /// before then changes what the command inherits.
    public func start() {
        thread.withLock { if $0 == nil { $0 = HelperThread.start(background: true) } }
    }

    /// Runs `work` after everything submitted before it.
    public func async(_ work: @escaping @Sendable () -> Void) {
        if let helper = thread.withLock({ $0 }) { helper.submit(work) } else { fallback.async(execute: work) }
    }

    /// Waits until everything submitted so far has run; what has not started yet runs on the calling thread
    /// (`HelperThread.runRemaining`), at its priority, not the background's.
    public func drain() {
        fallback.sync {}
        thread.withLock { $0 }?.runRemaining()
    }
}
