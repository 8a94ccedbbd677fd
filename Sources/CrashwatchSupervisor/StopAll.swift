// StopAll.swift — stops every thread of a crashed process for its capture, tolerating threads that exit or
// appear meanwhile (PITFALLS.md: a new thread's first stop can come before its creator's clone event, a
// thread can be born and reaped before it; rescan /proc/TGID/task, drop a tid on ESRCH), and giving up on
// those that have not stopped by the deadline. Stops of other processes are set aside for the loop.
import CrashwatchModel
import CrashwatchSystem

/// The threads of one process while they are being stopped.
struct StopAllProgress {
    /// The process (thread-group id).
    let pid: Int32
    /// How each thread that has stopped is stopped.
    var states: [Int32: ThreadStop]
    /// Threads sent PTRACE_INTERRUPT whose stop has not been seen yet.
    var interrupted: Set<Int32> = []
    /// Threads found gone (exited, or a zombie leader).
    var gone: Set<Int32> = []
    /// Threads waiting in vfork() when the capture began: not interrupted, they would stop only once their
    /// vfork() ends, which may be never.
    let waitingInVfork: Set<Int32>
    /// Those of them still in the process.
    var vforking: Set<Int32> = []

    /// The threads in the process as far as the capture knows: stopped, interrupted and not stopped yet, or in vfork().
    var known: Set<Int32> { interrupted.union(states.keys).union(vforking) }

    /// Whether `tid` is new to the capture: neither stopped, interrupted nor gone.
    func isNew(_ tid: Int32) -> Bool {
        states[tid] == nil && !interrupted.contains(tid) && !gone.contains(tid)
    }
}

extension Supervisor {
    /// Stops every thread of `pid` (those in `initial` are stopped already: a crashed one at its fatal signal), tolerating
    /// threads that exit or appear meanwhile. Gives up on threads that have not stopped by `deadline`; the capture
    /// ends by `captureDeadline` (by default the same).
    func stopAllThreads(of pid: Int32, crashedTID: Int32, initial: [Int32: ThreadStop], deadline: Int64,
                        captureDeadline: Int64? = nil) throws(SystemError) -> StoppedProcess
    {
        try finishStopping(startStopping(pid, initial: initial), crashedTID: crashedTID, deadline: deadline,
                           captureDeadline: captureDeadline)
    }

    /// The first half of `stopAllThreads`: every thread of `pid` listed now and not in `initial` is interrupted,
    /// and the caller may do other work while they stop before `finishStopping`.
    func startStopping(_ pid: Int32, initial: [Int32: ThreadStop]) throws(SystemError) -> StopAllProgress {
        var progress = StopAllProgress(pid: pid, states: initial,
                                       waitingInVfork: Set(vforkParents.values).subtracting(initial.keys))
        try interruptNewThreads(&progress)
        return progress
    }

    /// The second half of `stopAllThreads`: waits for the interrupted threads, interrupts those that appeared.
    func finishStopping(_ started: StopAllProgress, crashedTID: Int32, deadline: Int64,
                        captureDeadline: Int64? = nil) throws(SystemError) -> StoppedProcess
    {
        var progress = started
        while true {
            try awaitInterrupted(&progress, deadline: deadline)
            // Threads created meanwhile start stopped (PTRACE_O_TRACECLONE) and were absorbed above or
            // are interrupted now; a rescan that finds nobody new ends the loop.
            if Clock.monotonicNanoseconds() >= deadline { break }
            let before = progress.interrupted.count
            try interruptNewThreads(&progress)
            if progress.interrupted.count == before { break }
        }
        let stoppedTIDs = progress.states.keys.sorted { lhs, rhs in
            lhs == crashedTID ? true : rhs == crashedTID ? false : lhs < rhs
        }
        return StoppedProcess(pid: progress.pid, crashedTID: crashedTID, threads: stoppedTIDs,
                              unstopped: progress.interrupted.sorted(), inVfork: progress.vforking.sorted(),
                              deadlineNanoseconds: captureDeadline ?? deadline, stops: progress.states)
    }

    /// Interrupts the process's threads not met before.
    private func interruptNewThreads(_ progress: inout StopAllProgress) throws(SystemError) {
        let pid = progress.pid
        for tid in ProcFS.threadIDs(of: pid) where progress.isNew(tid) {
            if progress.waitingInVfork.contains(tid) {
                progress.vforking.insert(tid)
                continue
            }
            // A leader that called pthread_exit stays a zombie while its threads run: it cannot stop.
            // (Only the leader lingers so; other threads vanish from the list when they exit.)
            if tid == pid, (try? ProcFS.threadStatus(tid))?.isDead == true {
                progress.gone.insert(tid)
                continue
            }
            do {
                try Ptrace.interrupt(tid)
                progress.interrupted.insert(tid)
            } catch where error.isNoSuchProcess {
                progress.gone.insert(tid)
            }
        }
    }

    /// Waits until every interrupted thread has reported, or `deadline`.
    private func awaitInterrupted(_ progress: inout StopAllProgress, deadline: Int64) throws(SystemError) {
        var idlePolls = 0
        while !progress.interrupted.isEmpty {
            if let event = try waitForAnyTask(block: false) {
                idlePolls = 0
                try absorb(event, into: &progress)
                continue
            }
            let remaining = deadline - Clock.monotonicNanoseconds()
            if remaining <= 0 { return }
            // The interrupted threads stop within microseconds of each other: poll before sleeping,
            // as the main loop does, rather than pay a wake-up per thread.
            if idlePolls < options.busyPolls {
                idlePolls += 1
                continue
            }
            idlePolls = 0
            // Forwarded signals wait until the capture is over; SIGCHLD just wakes us.
            deferredSignals += try inbox.drain().filter { $0.signal != .chld }
            if let event = try waitForAnyTask(block: false) {
                try absorb(event, into: &progress)
            } else {
                try inbox.waitUntilPending(timeoutMilliseconds: Int32(min(remaining / 1_000_000 + 1, 1000)))
            }
        }
    }

    /// Takes one report: a thread of the process stopped or went; another process's stop is set aside.
    private func absorb(_ event: WaitEvent, into progress: inout StopAllProgress) throws(SystemError) {
        let tid = event.pid
        let belongs = progress.interrupted.contains(tid) || progress.states[tid] != nil
            || ((try? ProcFS.threadStatus(tid))?.tgid == progress.pid)
        guard belongs else {
            deferredEvents.append(event)
            return
        }
        progress.interrupted.remove(tid)
        switch event.status {
        case .exited, .signaled:
            progress.states[tid] = nil
            progress.gone.insert(tid)
            handledFaults[tid] = nil
        case .continued:
            progress.interrupted.insert(tid)
        case .stopped(let signal, let ptraceEvent):
            progress.states[tid] = ThreadStop(signal: signal, event: ptraceEvent)
        }
    }
}
