// LiveSeizure.swift — holding a running process crashwatch does not trace, for a snapshot (`crashwatch snapshot
// PID`): every thread seized (PTRACE_SEIZE, no options: nothing of the process's behaviour changes — no exit
// stops, forks not followed) and interrupted (PTRACE_INTERRUPT), threads born meanwhile included: the task list
// is read again until a round finds nobody new (once every known thread is stopped, none is left to start one).
// What can come instead of the interrupt's stop: a signal about to be delivered is delivered at once (PTRACE_CONT
// with it: the thread enters its handler, or takes the signal's default action, then stops at the interrupt
// still pending), because a signal held in a signal-delivery-stop is lost should the tracer die (checked here:
// kernel 6.18 drops it when it detaches a dead tracer's tracees); only past `maximumRedeliveries` for one thread
// (a storm aimed at it) is it held and passed on at PTRACE_DETACH. A job-control stop is kept (the thread stays
// stopped, as it was), a thread's exit dropped. The hold ends with PTRACE_DETACH of every thread
// (`SeizedProcess`, scoped: its deinit lets go on any path). Should crashwatch die meanwhile, even by SIGKILL,
// the kernel detaches every tracee as it exits (no PTRACE_O_EXITKILL): each goes on from its stop.
import CrashwatchModel
import CrashwatchSystem

/// Why a live process could not be held for a snapshot: each case a message a person reads.
public enum SeizeFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// No such process (or it ended before any thread was held).
    case gone(Int32)
    /// The kernel refused ptrace access (EPERM): the reason, with what would allow it.
    case refused(String)
    /// Another process traces it already (a process has one tracer): its pid.
    case alreadyTraced(tracer: Int32)
    /// No thread stopped in time (each in a sleep no signal ends): there is nothing to capture.
    case notStopped(Int32)
    /// A system call the hold depends on failed.
    case system(SystemError)

    /// The failure in words, for a message.
    public var description: String {
        switch self {
        case .gone(let pid): "no process \(pid)"
        case .refused(let why): why
        case .alreadyTraced(let tracer): "already traced by process \(tracer)"
        case .notStopped(let pid): "no thread of process \(pid) stopped in time (each in a sleep no signal ends)"
        case .system(let error): "\(error)"
        }
    }
}

extension DetectedCrash {
    /// A snapshot of process `pid` about to be taken (by `crashwatch snapshot`, or by a supervisor asked for one):
    /// no signal, nothing crashed, named as a crash of it would be (`Supervisor.identify`).
    public static func snapshot(of pid: Int32) -> DetectedCrash {
        let identity = Supervisor.identify(pid, status: try? ProcFS.threadStatus(pid))
        var crash = DetectedCrash(
            pid: pid, tid: pid, threadName: ProcFS.threadName(pid: pid, tid: pid), executable: identity.executable,
            signal: SignalInfo(signo: 0, code: 0), originalFault: nil, handledFaults: [], timeNanoseconds: Clock.realtimeNanoseconds(),
            crashedThreadID: pid, crashedThreadName: nil)
        crash.isSnapshot = true
        crash.unreadableFiles = identity.unreadable
        return crash
    }
}

/// A live process held stopped for a snapshot; letting it go detaches crashwatch from every thread.
public struct SeizedProcess: ~Copyable {
    /// The threads held, as a capture reads them (`StoppedProcess.leftOut`: those `--threads` left out).
    public let stopped: StoppedProcess
    /// When the first thread was seized (CLOCK_MONOTONIC nanoseconds): the hold counts from here.
    public let heldSince: Int64
    private var held: HeldProcess?

    init(_ stopped: StoppedProcess, heldSince: Int64) {
        self.stopped = stopped
        self.heldSince = heldSince
        self.held = HeldProcess(stopped, fatalSignal: nil, options: 0, detaches: true)
    }

    /// Detaches every held thread, each going on from its stop as it was: a signal it was stopped for delivered,
    /// a job-control stop kept. Returns the threads still traced — those that had not stopped (`stopped.unstopped`,
    /// in a sleep no signal ends): `LiveSeizure.detachLate` lets them go once they stop, and the kernel does
    /// when crashwatch exits.
    public consuming func release() throws(SystemError) -> [Int32] {
        if let held = held.take() { _ = try held.release() }
        return stopped.unstopped
    }
}

/// Seizes and stops running processes for snapshots.
public enum LiveSeizure {
    /// The points of a hold a test may pause at (`pause` of `seize`), to kill crashwatch there.
    public enum Stage: String, Sendable {
        /// Every thread seized, none interrupted yet: a signal sent now meets a thread at its delivery.
        case attached
        /// Every thread seized and interrupted, not yet seen stopped.
        case seized
        /// Every thread stopped.
        case stopped
    }

    /// The most threads one hold takes: a process that keeps starting threads faster than they are stopped
    /// cannot keep the loop going past it (nor past the deadline).
    public static let maximumThreads = 1 << 16
    /// How many signals one thread is let take during one hold before the next is held until the release.
    public static let maximumRedeliveries = 16

    /// Seizes every thread of `pid` and stops it, threads started meanwhile included, waiting up to `stopNanoseconds`
    /// from the first round of interrupts (a thread not stopped by then is in a sleep no signal ends, and is listed
    /// as not stopped); `captureDeadline` is what
    /// the capture may use. `only`: the threads whose registers and stacks are captured (all are stopped alike);
    /// nil for all. `pause` is called at each stage (a test hook; it returns at once otherwise).
    /// Refusals come before any thread is held: no process, another tracer, the kernel's ptrace access check.
    public static func seize(_ pid: Int32, stopNanoseconds: Int64, captureDeadline: Int64, only: Set<Int32>? = nil,
                             pause: (Stage) -> Void = { _ in }) throws(SeizeFailure) -> SeizedProcess {
        let heldSince = Clock.monotonicNanoseconds()
        var progress = StopAllProgress(pid: pid, states: [:], waitingInVfork: [])
        var seized: Set<Int32> = []
        var redelivered: [Int32: Int] = [:]
        guard !ProcFS.threadIDs(of: pid).isEmpty else { throw .gone(pid) }
        do throws(SystemError) {
            try seizeNewThreads(&progress, seized: &seized) { pause(.attached) }
            pause(.seized)
            let stopDeadline = Clock.monotonicNanoseconds() + stopNanoseconds
            while true {
                try awaitStops(&progress, redelivered: &redelivered, deadline: stopDeadline)
                if Clock.monotonicNanoseconds() >= stopDeadline || seized.count >= maximumThreads { break }
                let before = seized.count
                try seizeNewThreads(&progress, seized: &seized)
                if seized.count == before { break }
            }
        } catch {
            // Whatever was seized goes on: a stopped thread detached now, the others when crashwatch exits.
            let partial = StoppedProcess(pid: pid, crashedTID: pid, threads: [], unstopped: [], inVfork: [],
                                         deadlineNanoseconds: captureDeadline, stops: progress.states)
            _ = try? SeizedProcess(partial, heldSince: heldSince).release()
            throw error.isPermissionDenied ? .refused(refusalReason(pid)) : error.isNoSuchProcess ? .gone(pid) : .system(error)
        }
        guard !progress.states.isEmpty else { throw seized.isEmpty ? .gone(pid) : .notStopped(pid) }
        pause(.stopped)
        let all = progress.states.keys.sorted()
        let captured = only.map { wanted in all.filter { wanted.contains($0) } } ?? all
        var stopped = StoppedProcess(pid: pid, crashedTID: captured.contains(pid) ? pid : captured.first ?? pid, threads: captured,
                                     unstopped: progress.interrupted.sorted(), inVfork: [],
                                     deadlineNanoseconds: captureDeadline, stops: progress.states)
        stopped.leftOut = all.filter { !captured.contains($0) }
        return SeizedProcess(stopped, heldSince: heldSince)
    }

    /// Lets go of threads still traced after a release (`SeizedProcess.release`) as each stops, until `deadline`;
    /// returns those that did not stop by then (the kernel detaches them when crashwatch exits).
    public static func detachLate(_ tids: [Int32], deadline: Int64) -> [Int32] {
        var left = Set(tids)
        while !left.isEmpty {
            for tid in left {
                if let event = try? waitForTask(tid, block: false) {
                    if case .stopped(let signal, let ptraceEvent) = event.status {
                        try? Ptrace.detach(tid, signal: ptraceEvent == 0 ? signal : 0)
                    }
                    left.remove(tid)
                } else if (try? ProcFS.threadStatus(tid))?.tracerPID != SelfProcess.pid {
                    left.remove(tid)  // gone, or no longer crashwatch's
                }
            }
            if left.isEmpty || Clock.monotonicNanoseconds() >= deadline { break }
            Clock.sleep(nanoseconds: 1_000_000)
        }
        return left.sorted()
    }

    /// Seizes the threads of the process not met before, then (after `between`) interrupts them. A refusal (EPERM)
    /// throws when nothing is held yet and the thread has not ended (the kernel's access check said no); others are
    /// threads that ended meanwhile.
    private static func seizeNewThreads(_ progress: inout StopAllProgress, seized: inout Set<Int32>,
                                        between: () -> Void = {}) throws(SystemError) {
        let pid = progress.pid
        var fresh: [Int32] = []
        // The leader first: thread ids wrap around past pid_max, and a thread listed before it may be ending (its
        // refusal, EPERM, would read as the kernel's access check with nothing held yet).
        let tids = ProcFS.threadIDs(of: pid)
        for tid in tids.filter({ $0 == pid }) + tids.filter({ $0 != pid }) where !seized.contains(tid) && progress.isNew(tid) {
            if seized.count >= maximumThreads { break }  // those seized are still interrupted below
            // A leader that called pthread_exit stays a zombie while its threads run: it cannot be seized.
            if tid == pid, (try? ProcFS.threadStatus(tid))?.isDead == true {
                progress.gone.insert(tid)
                continue
            }
            do {
                try Ptrace.seize(tid)
            } catch where error.isNoSuchProcess || (error.isPermissionDenied && (!seized.isEmpty || Self.hasEnded(tid, of: pid))) {
                progress.gone.insert(tid)
                continue
            }
            seized.insert(tid)
            fresh.append(tid)
        }
        between()
        for tid in fresh {
            do {
                try Ptrace.interrupt(tid)
                progress.interrupted.insert(tid)
            } catch where error.isNoSuchProcess {
                progress.gone.insert(tid)
            }
        }
    }

    /// Whether thread `tid` (not the leader) has ended, or is ending: the kernel refuses to trace a task with an
    /// exit state (EPERM, as for a refused access check).
    private static func hasEnded(_ tid: Int32, of pid: Int32) -> Bool {
        guard tid != pid else { return false }
        guard let status = try? ProcFS.threadStatus(tid) else { return true }
        return status.isDead
    }

    /// Waits until every interrupted thread has reported a stop (or its end), or `deadline`: polling first (the
    /// stops come within microseconds of each other), then sleeping in short steps.
    private static func awaitStops(_ progress: inout StopAllProgress, redelivered: inout [Int32: Int], deadline: Int64)
        throws(SystemError) {
        var idlePolls = 0
        while !progress.interrupted.isEmpty {
            if let event = try waitForAnyTask(block: false) {
                idlePolls = 0
                absorb(event, into: &progress, redelivered: &redelivered)
                continue
            }
            if Clock.monotonicNanoseconds() >= deadline { return }
            idlePolls += 1
            if idlePolls > 200 { Clock.sleep(nanoseconds: 50_000) }
        }
    }

    /// Records one report of a seized thread: how it stopped, or that it ended. A signal-delivery-stop is not kept
    /// (up to `maximumRedeliveries` a thread): the signal is delivered now and the thread's interrupt stop awaited.
    private static func absorb(_ event: WaitEvent, into progress: inout StopAllProgress, redelivered: inout [Int32: Int]) {
        let tid = event.pid
        progress.interrupted.remove(tid)
        switch event.status {
        case .exited, .signaled:
            progress.states[tid] = nil
            progress.gone.insert(tid)
        case .continued:
            progress.interrupted.insert(tid)
        case .stopped(let signal, let ptraceEvent):
            let stop = ThreadStop(signal: signal, event: ptraceEvent)
            if case .signalDelivery(let number) = stop, redelivered[tid, default: 0] < maximumRedeliveries {
                redelivered[tid, default: 0] += 1
                do {
                    // The interrupt is still pending: the thread stops again once the signal is delivered.
                    try Ptrace.cont(tid, signal: number)
                    progress.interrupted.insert(tid)
                    return
                } catch {
                    // Gone meanwhile: its end is reported next; kept as it stopped until then.
                }
            }
            progress.states[tid] = stop
        }
    }

    /// Why the kernel refused to let crashwatch trace `pid` (EPERM), and what would allow it.
    static func refusalReason(_ pid: Int32) -> String {
        let scope = ProcFS.setting("/proc/sys/kernel/yama/ptrace_scope").flatMap { Int($0) }
        let status = try? ProcFS.threadStatus(pid)
        if let tracer = status?.tracerPID, tracer != 0 { return "process \(pid) is already traced by process \(tracer)" }
        let root = SelfProcess.isRoot
        switch scope {
        case 3?: return "kernel.yama.ptrace_scope is 3: no process may be traced until reboot"
        case 2?: return "kernel.yama.ptrace_scope is 2: only root (CAP_SYS_PTRACE) may attach to a running process"
        case 1? where !root:
            return "kernel.yama.ptrace_scope is 1: a process may only trace its own descendants; run crashwatch as root (or with CAP_SYS_PTRACE), or set kernel.yama.ptrace_scope=0"
        default:
            if !root, let uids = status?.uids, let real = uids.first, real != effectiveUserID {
                return "process \(pid) belongs to another user (uid \(real)); only root (or CAP_SYS_PTRACE) may attach to it"
            }
            return "the kernel refused to let crashwatch trace process \(pid) (EPERM): it runs as another user, changed credentials or is not dumpable (only root, or CAP_SYS_PTRACE, may attach to it), or a security module forbids ptrace"
        }
    }
}
