// EventLoop.swift — the supervisor's one waitpid(-1, __WALL) loop over every traced task, on the tracer
// thread: it polls before it sleeps, services the inbox, relay and timers, and performs at each stop what
// `routeStop` decided (DESIGN.md "Event loop"). The loop is the supervisor's whole steady-state cost, so a
// non-crash signal costs one waitpid and one PTRACE_CONT.
import CrashwatchModel
import CrashwatchSystem

extension Supervisor {
    func loop() throws(SystemError) -> WaitStatus {
        var idlePolls = 0
        while true {
            if let end = finalStatus, workers.isIdle { return end }
            if let event = try nextEvent() {
                idlePolls = 0
                try handle(event)
                if Clock.monotonicNanoseconds() - lastTimerCheck > Self.timerInterval {
                    try serviceTimers()
                    _ = enforceJobDeadlines()
                }
                continue
            }
            if idlePolls < options.busyPolls {
                idlePolls += 1
                continue
            }
            // Read the inbox before sleeping on it. Draining consumes a pending SIGCHLD, so look for
            // stops once more afterwards: a stop that came in between would otherwise wait forever.
            try serviceInbox()
            try serviceTimers()
            // Either may have ended the supervision (a detach signal read, the last followed process gone):
            // nothing would wake the sleep below then.
            if finalStatus != nil, workers.isIdle { continue }
            if let event = try nextEvent() {
                idlePolls = 0
                try handle(event)
                continue
            }
            try inbox.waitUntilPending(timeoutMilliseconds: sleepLimit(),
                                       alsoReadable: (relay.map { [$0.fd] } ?? []) + (control?.pollDescriptors ?? []))
            _ = enforceJobDeadlines()
            idlePolls = 0
        }
    }

    /// While events keep the loop busy (another process's signal storm), the relay, the timers and the
    /// workers' deadlines are looked at this often.
    private static let timerInterval: Int64 = 20_000_000

    /// Relays waiting notifications, forwards signals whose grace ran out, and captures a hang whose
    /// watchdog pings stopped.
    private func serviceTimers() throws(SystemError) {
        lastTimerCheck = Clock.monotonicNanoseconds()
        serviceRelay()
        try serviceControl()
        if attached, !detachRequested, detachSignals.contains(where: { inbox.isPending($0) }) { try serviceInbox() }
        if mainChildEnded {
            // A process gone without its end seen (it cannot be, as its subreaper; but never wait on one).
            followedProcesses = followedProcesses.filter { ProcFS.exists($0) }
            endWhenNothingIsFollowed()
        }
        if forwarding.hasPendingForwards { try forwarding.settlePendingForwards(to: self) }
        if let due = watchdog.hangDue, Clock.monotonicNanoseconds() >= due { try captureHang() }
    }

    /// With `outlivesMainChild`, once the main child and every process it left have ended: the supervisor
    /// ends as the last of them did.
    private func endWhenNothingIsFollowed() {
        guard mainChildEnded, followedProcesses.isEmpty, finalStatus == nil else { return }
        finalStatus = lastProcessEnd ?? .exited(code: 0)
    }

    /// How long the loop may sleep (milliseconds, -1 for no limit): until the next job deadline, pending
    /// forward or watchdog hang check.
    private func sleepLimit() -> Int32 {
        var limit = Int64(enforceJobDeadlines())
        if mainChildEnded { limit = limit < 0 ? 1_000 : min(limit, 1_000) }
        let now = Clock.monotonicNanoseconds()
        for due in forwarding.pendingForwardDues + [watchdog.hangDue, control?.nextDeadline].compactMap({ $0 }) {
            let milliseconds = max(due - now, 0) / 1_000_000 + 1
            limit = limit < 0 ? milliseconds : min(limit, milliseconds)
        }
        return Int32(clamping: limit)
    }

    /// The next stop or exit: first those a capture set aside, then the kernel's.
    private func nextEvent() throws(SystemError) -> WaitEvent? {
        if !deferredEvents.isEmpty { return deferredEvents.removeFirst() }
        return try waitForAnyTask(block: false)
    }

    /// What the supervisor knows of `tid` for `routeStop`.
    private func facts(of tid: Int32) -> TaskFacts {
        let job = workers.job(of: tid)
        return TaskFacts(
            isWorker: job != nil, workerKilledAtDeadline: job?.killedAtDeadline ?? false,
            heldForKill: !leftForKill.isEmpty && leftForKill[tid] != nil,
            isMain: tid == mainPID, mainExecuted: mainExecuted,
            dying: !dyingThreads.isEmpty && dyingThreads[tid] != nil,
            outlivesMainChild: options.outlivesMainChild || attached)
    }

    /// Handles one waitpid report; records the main child's final status when it has ended.
    func handle(_ event: WaitEvent) throws(SystemError) {
        let tid = event.pid
        // Any report but a group-stop (which sets it again) means the leader left its group-stop.
        if tid == mainPID { forwarding.mainGroupStopped = false }
        let plan = routeStop(event.status, facts: facts(of: tid))
        if plan.releasesHeldThreads, let leftStopped = leftForKill.removeValue(forKey: tid) {
            if case .detachSurvivor(let stop) = plan.action { return try detachSurvivor(leftStopped, stop: stop) }
            try HeldProcess.letOthersGo(leftStopped)
        }
        switch plan.action {
        case .nothing, .detachSurvivor:
            return
        case .workerEnded(let outcome):
            finishJob(of: tid, outcome: outcome)
        case .taskEnded(let status, let recordsKill):
            try taskEnded(tid, status: status, recordsKill: recordsKill)
        case .deliver(let signal, let forwardable):
            if forwardable, mayBeForwardedCopy(signal) {
                forwarding.noteDelivery(tid: tid, signal: signal, sender: (try? Ptrace.signalInfo(tid))?.senderPID,
                                        now: Clock.monotonicNanoseconds())
            }
            try resume(tid, signal: signal.number)
        case .judgeCrash(let signal):
            try crashSignalStop(tid: tid, signal: signal)
        case .listen(let mirrors):
            // An attached process's stop is its own business: crashwatch, not its parent, does not mirror it.
            try groupStop(tid, mirrors: mirrors && !attached)
        case .resume:
            try resume(tid)
        case .exec:
            let formerTID = Int32(truncatingIfNeeded: (try? Ptrace.eventMessage(tid)) ?? UInt(tid))
            if formerTID != tid { handledFaults[formerTID] = nil }
            handledFaults[tid] = nil
            if !vforkParents.isEmpty { forgetVfork(of: tid) }
            if tid == mainPID { mainExecuted = true }
            try resume(tid)
        case .exitStop:
            try exitStop(tid)
        case .fork(let vfork, let followsChild):
            // The child's pid (one more request on a just-stopped tracee) is needed only to outlive the main
            // child with the processes it leaves, and for a vfork, whose parent cannot stop until it ends.
            if followsChild, let child = try? Ptrace.eventMessage(tid), child > 0, child <= UInt(Int32.max) {
                followedProcesses.insert(Int32(child))
                if vfork { vforkParents[Int32(child)] = tid }
            }
            try resume(tid)
        }
    }

    /// A task exited or was killed: forget it; the main child's end becomes the supervisor's.
    private func taskEnded(_ tid: Int32, status: WaitStatus, recordsKill: Bool) throws(SystemError) {
        if !vforkParents.isEmpty { forgetVfork(of: tid) }
        handledFaults[tid] = nil
        dispositions.forget(tid)
        if dyingThreads.removeValue(forKey: tid) != nil, dyingThreads.values.contains(tid) {
            // The process is gone: threads whose own exit was not reported go with it.
            dyingThreads = dyingThreads.filter { $0.value != tid }
        }
        // Kernels that give no exit stop for SIGKILL leave the main child's own report as the record;
        // threads and untraced orphans reaped here are not processes the supervisor reports on.
        if recordsKill { try recordAbnormalExit(pid: tid, signal: .kill, stoppedAt: nil) }
        reportedProcesses.remove(tid)
        if followedProcesses.remove(tid) != nil { lastProcessEnd = status }
        if tid == mainPID {
            if options.outlivesMainChild {
                mainChildEnded = true
                options.mainChildExited?(status)
            } else {
                finalStatus = status
                noteOrphansLeftRunning(status)
            }
        }
        endWhenNothingIsFollowed()
    }

    /// The main child exited with 0 while processes it started run on: a daemon that forked and exited
    /// (`Type=forking`). Without `--pid-file`, crashwatch exits with it and they run on unsupervised, their
    /// crashes unreported: said on stderr and in the journal, naming `--pid-file`. Its orphans are
    /// crashwatch's children now (a subreaper), workers aside.
    private func noteOrphansLeftRunning(_ status: WaitStatus) {
        guard status == .exited(code: 0), options.followForks else { return }
        let workers = Set(self.workers.runningPIDs)
        let orphans = ProcFS.children(of: SelfProcess.pid).filter { !workers.contains($0) }
        guard !orphans.isEmpty else { return }
        let shown = orphans.prefix(8).map(String.init).joined(separator: ", ") + (orphans.count > 8 ? ", …" : "")
        observer?.supervisorNotice("crashwatch: \(options.command[0]) exited with status 0 and left \(orphans.count) process\(orphans.count == 1 ? "" : "es") running (pid \(shown)), now unsupervised: their crashes will not be reported; a daemon that forks and exits (systemd Type=forking) needs --pid-file FILE (and PIDFile=FILE)")
    }

    /// A PTRACE_EVENT_EXIT stop of a task not released to die: a SIGKILL death or a forced crash is recorded.
    private func exitStop(_ tid: Int32) throws(SystemError) {
        if !vforkParents.isEmpty { forgetVfork(of: tid) }
        let exitStatus = WaitStatus(raw: Int32(truncatingIfNeeded: (try? Ptrace.eventMessage(tid)) ?? 0))
        switch exitStopAction(for: exitStatus) {
        case .resume:
            try resume(tid)
        case .recordKill:
            try recordAbnormalExit(pid: threadGroup(of: tid), signal: .kill, stoppedAt: tid)
        case .forcedCrash(let signal):
            let pid = threadGroup(of: tid)
            if reportedProcesses.contains(pid) { return try resume(tid) }
            try captureAtExit(tid: tid, pid: pid, signal: signal)
        }
    }

    /// A group-stop: PTRACE_LISTEN, and — the main child's, after its exec — read the inbox now, where the
    /// stop signal the terminal sent the whole group is waiting, to mirror the stop (`SignalForwarder.mirrorStop`).
    private func groupStop(_ tid: Int32, mirrors: Bool) throws(SystemError) {
        do {
            try Ptrace.listen(tid)
        } catch where error.isNoSuchProcess {
            return
        }
        if mirrors {
            forwarding.mainGroupStopped = true
            try serviceInbox()
        }
    }

    func resume(_ tid: Int32, signal: Int32 = 0) throws(SystemError) {
        do {
            try Ptrace.cont(tid, signal: signal)
        } catch where error.isNoSuchProcess {
            // Killed meanwhile (SIGKILL, or its process exited): its exit is reported next.
        }
    }

    /// `tid` exec'd or is gone: a vfork() it was the child of is over, and one it was waiting in cannot matter.
    private func forgetVfork(of tid: Int32) {
        vforkParents[tid] = nil
        if vforkParents.values.contains(tid) { vforkParents = vforkParents.filter { $0.value != tid } }
    }

    func threadGroup(of tid: Int32) -> Int32 {
        (try? ProcFS.threadStatus(tid))?.tgid ?? tid
    }
}
