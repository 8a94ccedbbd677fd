// Attach.swift — `crashwatch attach PID`: supervising a process that is already running. Every thread is
// seized with the options `run` uses (threads created meanwhile by a seized thread arrive through
// TRACECLONE; a rescan of /proc/PID/task catches those created by one not seized yet), then the event loop
// runs as for `run`. TERM, INT and HUP sent to crashwatch detach: every traced task is interrupted, and each
// is let go from the stop it reports with the signal it was stopped to take (a group-stopped task stays
// stopped), so nothing is lost or reordered and the process runs on.
import CrashwatchModel
import CrashwatchSystem

/// The signals that make an attached supervisor detach.
public let detachSignals: [Signal] = [.term, .int, .hup]

/// Why `attach` could not start supervising.
public enum AttachError: Error, Equatable, Sendable {
    /// No such process, or a thread rather than a process.
    case noSuchProcess(Int32)
    /// The process is traced already (a process has one tracer): by this pid, with this name.
    case alreadyTraced(pid: Int32, tracer: Int32, tracerName: String?)
    /// The kernel refused (permissions, Yama): the reason in one line.
    case notPermitted(Int32, String)
    /// Threads kept appearing faster than they could be seized.
    case threadsKeptAppearing(Int32)
    /// crashwatch itself, or its own process group's leader.
    case refused(Int32, String)
    /// A system call the supervisor depends on failed.
    case system(SystemError)
}

/// How an attached supervision ended.
public enum AttachEnd: Equatable, Sendable {
    /// The process ended so (from its exit notification: crashwatch is its tracer, not its parent).
    case ended(WaitStatus)
    /// crashwatch detached (TERM, INT or HUP) and left it running.
    case detached
}

extension Supervisor {
    /// The most rounds of seizing threads found in /proc/PID/task: a round finds only threads created by
    /// threads not seized in the round before, so a real program converges in two or three.
    static let maximumSeizeRounds = 100
    /// The most processes a detach looks at (the followed ones and their descendants).
    static let maximumProcesses = 65_536

    /// Seizes every thread of `pid` and supervises it as `run` supervises its child, until it ends or a
    /// detach signal comes.
    public func attach(to pid: Int32) throws(AttachError) -> AttachEnd {
        precondition(options.attach, "attach needs SupervisorOptions.attach")
        let preflight = PtracePreflight.check()
        if let blocked = preflight.blocker { throw .notPermitted(pid, blocked) }
        if let warning = preflight.warning { observer?.supervisorWarning("crashwatch: \(warning)") }
        guard pid > 0, let status = try? ProcFS.threadStatus(pid), status.tgid == pid, !status.isDead else {
            throw .noSuchProcess(pid)
        }
        if pid == SelfProcess.pid { throw .refused(pid, "crashwatch cannot supervise itself") }
        if let tracer = status.tracerPID, tracer != 0 {
            throw .alreadyTraced(pid: pid, tracer: tracer, tracerName: ProcFS.threadName(pid: tracer, tid: tracer))
        }
        attached = true
        mainPID = pid
        mainExecuted = true
        followedProcesses.insert(pid)
        try seizeAllThreads(of: pid)
        observer?.supervisorStarted()
        openControlSocket()
        do {
            defer { control = nil }
            let status = try loop()
            return detached ? .detached : .ended(status)
        } catch {
            throw .system(error)
        }
    }

    /// Seizes every thread of `pid`, rescanning until a round finds none new.
    private func seizeAllThreads(of pid: Int32) throws(AttachError) {
        let options = Ptrace.seizeOptions(followForks: self.options.followForks)
        var seized: Set<Int32> = []
        for _ in 0..<Self.maximumSeizeRounds {
            let new = ProcFS.threadIDs(of: pid).filter { !seized.contains($0) }
            if new.isEmpty { return }
            for tid in new {
                do {
                    try Ptrace.seize(tid, options: options)
                } catch where error.isNoSuchProcess {
                    // Gone meanwhile.
                } catch where error.isPermissionDenied && (try? ProcFS.threadStatus(tid))?.tracerPID == SelfProcess.pid {
                    // Created by a thread seized already: TRACECLONE made it ours.
                } catch where error.isPermissionDenied {
                    if let tracer = (try? ProcFS.threadStatus(tid))?.tracerPID, tracer != 0 {
                        letGoOfSeized()
                        throw .alreadyTraced(pid: pid, tracer: tracer, tracerName: ProcFS.threadName(pid: tracer, tid: tracer))
                    }
                    letGoOfSeized()
                    throw .notPermitted(pid, Self.refusal(of: pid, error))
                } catch {
                    letGoOfSeized()
                    throw .system(error)
                }
                seized.insert(tid)
            }
        }
        letGoOfSeized()
        throw .threadsKeptAppearing(pid)
    }

    /// Why the kernel refused to let crashwatch trace `pid`, in its own terms: another user's or a privileged
    /// process (the ptrace access rule), else what the preflight knows (Yama, a security module).
    static func refusal(of pid: Int32, _ error: SystemError) -> String {
        let own = effectiveUserID
        if own != 0, let status = try? ProcFS.threadStatus(pid), let credentials = ProcessCredentials.of(pid, status: status) {
            if credentials.uids.contains(where: { $0 != own }) {
                return "\(error.reason): it runs as uid \(credentials.uids[1]) (real \(credentials.realUID)), and only root (CAP_SYS_PTRACE) may trace another user's or a setuid process"
            }
            if credentials.dumpable == false {
                return "\(error.reason): it is not dumpable (it changed credentials or set PR_SET_DUMPABLE 0), and only root (CAP_SYS_PTRACE) may trace it"
            }
        }
        return "\(error.reason) (\(PtracePreflight.refusalReason()))"
    }

    /// Undoes a partial attach: every thread seized so far is detached as a detach signal would.
    private func letGoOfSeized() {
        try? detachAll()
    }

    /// Stops every task crashwatch traces (other than its workers) and detaches each from the stop it reports,
    /// with the signal it was stopped to take; a task that does not stop in time stays traced until crashwatch
    /// exits (the kernel then detaches it, running). Rounds repeat while forks create new traced processes.
    func detachAll() throws(SystemError) {
        detachRequested = true
        for _ in 0..<16 {
            let processes = tracedProcesses()
            if processes.isEmpty { break }
            for pid in processes {
                // Stops already reported for the process count as its threads' stops.
                var initial: [Int32: ThreadStop] = [:]
                deferredEvents.removeAll { event in
                    guard case .stopped(let signal, let ptraceEvent) = event.status,
                          (try? ProcFS.threadStatus(event.pid))?.tgid == pid else { return false }
                    initial[event.pid] = ThreadStop(signal: signal, event: ptraceEvent)
                    return true
                }
                let stopped = try stopAllThreads(of: pid, crashedTID: pid, initial: initial,
                                                 deadline: Clock.monotonicNanoseconds() + 2_000_000_000)
                for (tid, stop) in stopped.stops {
                    let signal: Int32 = if case .signalDelivery(let number) = stop { number } else { 0 }
                    do {
                        try Ptrace.detach(tid, signal: signal)
                    } catch where error.isNoSuchProcess {
                        // Gone meanwhile.
                    }
                    handledFaults[tid] = nil
                    dispositions.forget(tid)
                }
                leftForKill = leftForKill.filter { $0.value.pid != pid }
            }
        }
        // Reports of tasks let go mean nothing now.
        deferredEvents.removeAll { if case .stopped = $0.status { true } else { false } }
        detached = true
        if finalStatus == nil { finalStatus = .exited(code: 0) }
    }

    /// The processes with a thread crashwatch traces, workers aside: those it follows and their descendants,
    /// found by the kernel's TracerPid.
    private func tracedProcesses() -> [Int32] {
        let own = SelfProcess.pid
        let workers = Set(self.workers.runningPIDs)
        var found: [Int32] = []
        var queue = Array(followedProcesses.union([mainPID]))
        var seen: Set<Int32> = []
        // Bounded: each process looked at once, and at most `maximumProcesses` of them.
        while let pid = queue.popLast(), seen.count < Self.maximumProcesses {
            guard seen.insert(pid).inserted, !workers.contains(pid) else { continue }
            if ProcFS.threadIDs(of: pid).contains(where: { (try? ProcFS.threadStatus($0))?.tracerPID == own }) { found.append(pid) }
            queue += ProcFS.children(of: pid)
        }
        return found
    }
}
