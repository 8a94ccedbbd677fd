// CrashCapture.swift — from a detected death to a released process and a queued processing job: a crash
// signal judged at its delivery-stop (DESIGN.md "When is a signal a crash?"), a SIGKILL or forced crash seen
// at the exit stop, a survivor of its fatal signal; each is stopped whole (StopAll), held (HeldProcess) while
// the observer captures it, released, and its processing queued (WorkerPool).
import CrashwatchModel
import CrashwatchSystem

extension Supervisor {
    /// A crash signal is about to be delivered to `tid`: pass it on, remembering a handled one, or capture the
    /// process when the signal kills it.
    func crashSignalStop(tid: Int32, signal: Signal) throws(SystemError) {
        // The process is held from here (the stop was just reported): its hold counts from now.
        let seen = Clock.monotonicNanoseconds()
        // Dispositions first, from /proc/TID/task/TID/stat (kept open): a handled fault, the common case (JVMs, Go),
        // needs nothing more of /proc; only a fatal one reads the whole status.
        guard let disposition = dispositions.dispositions(of: tid)?.disposition(of: signal.number),
              let info = try? Ptrace.signalInfo(tid)
        else {
            return try resume(tid, signal: signal.number)  // the thread is already gone
        }
        // SIGQUIT and SIGABRT are a service manager's signals too (systemd's watchdog).
        if forwardedSignalSet.contains(signal) {
            forwarding.noteDelivery(tid: tid, signal: signal, sender: info.senderPID, now: Clock.monotonicNanoseconds())
        }
        switch verdict(for: signal, disposition: disposition) {
        case .passThrough:
            break
        case .rememberAndDeliver:
            handledFaults[tid, default: NestedFaults()].record(HandledFault(
                tid: tid, signal: info, timeNanoseconds: Clock.realtimeNanoseconds(), registers: (try? Ptrace.registerSet(tid)) ?? []))
        case .fatal:
            guard let status = try? ProcFS.threadStatus(tid) else { return try resume(tid, signal: signal.number) }
            let pid = status.tgid ?? tid
            if reportedProcesses.insert(pid).inserted {
                return try captureFatal(tid: tid, pid: pid, signal: signal, info: info, status: status, heldSince: seen)
            }
        }
        try resume(tid, signal: signal.number)
    }

    /// Captures `pid`, whose thread `tid` is stopped at the delivery of the crash signal that kills it, held
    /// since `heldSince` (CLOCK_MONOTONIC).
    private func captureFatal(tid: Int32, pid: Int32, signal: Signal, info: SignalInfo, status: ProcStatus,
                              heldSince: Int64) throws(SystemError) {
        // Should crashwatch die while it holds the process (even by SIGKILL), the kernel detaches it
        // and the signal being delivered would be lost: the app would live on. A second copy, queued
        // now, survives that and kills as the first would; normally the process is dead before it
        // is dequeued.
        queueSignal(signal, to: tid, of: pid)
        // The process is described from /proc on the helper thread while the other threads are interrupted here.
        let described = HelperComputation(on: HelperThread.capture) { Description(pid: pid, tid: tid, status: status) }
        let initial: [Int32: ThreadStop] = [tid: .signalDelivery(signal.number)]
        let stopping = try startStopping(pid, initial: initial)
        // Every thread's handled faults that may still be active (`attributeCrash` picks the root).
        let threads = stopping.known
        let faults = handledFaults.filter { threads.contains($0.key) }.values.flatMap(\.faults)
            .sorted { $0.timeNanoseconds < $1.timeNanoseconds }
        let attribution = attributeCrash(tid: tid, faults: faults, selfSent: info.senderPID == pid)
        // Read again here should the helper not answer in time: the hold never waits on a hunch.
        let description = described.value(until: min(Clock.monotonicNanoseconds() + HelperThread.captureWait,
                                                      heldSince + options.captureTimeoutNanoseconds / 4)).0
        var crash = DetectedCrash(
            pid: pid, tid: tid,
            threadName: description.threadName,
            executable: description.executable,
            signal: info,
            originalFault: attribution.original,
            handledFaults: faults,
            timeNanoseconds: Clock.realtimeNanoseconds(),
            crashedThreadID: attribution.crashedTID,
            crashedThreadName: attribution.crashedTID == tid ? description.threadName : ProcFS.threadName(pid: pid, tid: attribution.crashedTID))
        crash.unreadableFiles = description.unreadable
        try capture(crash, initial: initial, stopping: stopping, fatalSignal: signal, heldSince: heldSince)
    }

    /// A SIGKILL death: the observer records it, and when the threads are stopped at their exit (`stoppedAt`)
    /// and the observer asks for it, their stacks are captured first. Once per process.
    func recordAbnormalExit(pid: Int32, signal: Signal, stoppedAt tid: Int32?) throws(SystemError) {
        guard reportedProcesses.insert(pid).inserted else {
            if let tid { try resume(tid) }
            return
        }
        let exit = AbnormalExit(pid: pid, executable: identify(pid, status: nil).executable, signal: signal,
                                timeNanoseconds: Clock.realtimeNanoseconds(), threadsStopped: tid != nil)
        let capture = observer?.supervisorSawAbnormalExit(exit) ?? false
        guard let tid else { return }
        guard capture else { return try resume(tid) }
        try captureAtExit(tid: tid, pid: pid, signal: signal)
    }

    /// Captures a process whose death was seen only at `tid`'s PTRACE_EVENT_EXIT stop: every thread is
    /// stopped (the others at their own exit stops, or interrupted), captured, and let go to exit.
    func captureAtExit(tid: Int32, pid: Int32, signal: Signal) throws(SystemError) {
        reportedProcesses.insert(pid)
        let now = Clock.monotonicNanoseconds()
        let identity = identify(pid, status: nil)
        var crash = DetectedCrash(
            pid: pid, tid: tid, threadName: ProcFS.threadName(pid: pid, tid: tid), executable: identity.executable,
            // Only the signal is known: SIGKILL as a process sends it (SI_USER), a forced crash signal as the kernel's.
            signal: SignalInfo(signo: signal.number, code: signal == .kill ? 0 : 0x80), originalFault: nil, handledFaults: [],
            timeNanoseconds: Clock.realtimeNanoseconds(), crashedThreadID: tid, crashedThreadName: ProcFS.threadName(pid: pid, tid: tid))
        crash.seenAtExit = true
        crash.unreadableFiles = identity.unreadable
        try capture(crash, initial: [tid: .event], fatalSignal: nil, heldSince: now)
    }

    /// Stops every thread of `crash.pid` (those in `initial` are stopped already; `stopping`, when given, has
    /// interrupted the others), hands the process to the observer for its capture, lets it go — the crashed
    /// thread with `fatalSignal`, or, without one, every thread as it was stopped — and then has the observer
    /// start the processing, which is queued after `configure` saw it. The hold and the capture's deadline count
    /// from `heldSince`. Returns the job, if any.
    @discardableResult
    func capture(_ crash: DetectedCrash, initial: [Int32: ThreadStop], stopping: StopAllProgress? = nil, fatalSignal: Signal?,
                 heldSince: Int64, configure: (ProcessingJob) -> Void = { _ in }) throws(SystemError) -> ProcessingJob?
    {
        observer?.supervisorStopping(crash)
        // A thread that has not stopped by a quarter of the capture's time is in a sleep no signal ends (a
        // FUSE server that does not answer, a stuck device): it is left out, and the rest of the time goes
        // to copying the memory and processing, not to waiting for it.
        let started: StopAllProgress
        if let stopping { started = stopping } else { started = try startStopping(crash.pid, initial: initial) }
        let stopped = try finishStopping(started, crashedTID: crash.tid,
                                         deadline: heldSince + options.captureTimeoutNanoseconds / 4,
                                         captureDeadline: heldSince + options.captureTimeoutNanoseconds)
        let held = HeldProcess(stopped, fatalSignal: fatalSignal, options: Ptrace.seizeOptions(followForks: options.followForks))
        let afterRelease = observer?.supervisorDetected(crash, stopped: held.stopped)
        if let leftStopped = try held.release() { leftForKill[stopped.crashedTID] = leftStopped }
        let holdNanoseconds = Clock.monotonicNanoseconds() - heldSince
        if fatalSignal != nil {
            for tid in stopped.threads + stopped.unstopped + stopped.inVfork { dyingThreads[tid] = crash.pid }
        }
        guard let job = afterRelease?.start() else { return nil }
        job.holdNanoseconds = holdNanoseconds
        configure(job)
        enqueue(job)
        return job
    }

    /// A process released to die of its crash (`left`: the threads still held in their stops) whose crashed
    /// thread stopped again (`stop`) instead. The kernel keeps a pid namespace's init alive through a fatal
    /// signal while it is traced, and the fault that raised it comes back for ever; untraced, that fault kills
    /// it (the kernel then drops the protection). The crash is reported: every thread is let go untraced — the
    /// held ones from their stops, any the crashed thread started since once stopped, the crashed one with the
    /// signal it stopped for — so the process ends, or goes on, as it would have without crashwatch.
    func detachSurvivor(_ left: StoppedProcess, stop: ThreadStop) throws(SystemError) {
        var held = left.stops
        held[left.crashedTID] = stop
        let stopped = try stopAllThreads(of: left.pid, crashedTID: left.crashedTID, initial: held,
                                         deadline: Clock.monotonicNanoseconds() + options.captureTimeoutNanoseconds)
        var failure: SystemError?
        for (tid, stop) in stopped.stops {
            let signal: Int32 = if case .signalDelivery(let number) = stop { number } else { 0 }
            do {
                try Ptrace.detach(tid, signal: signal)
            } catch where error.isNoSuchProcess {
                // Gone meanwhile.
            } catch {
                if failure == nil { failure = error }
            }
            dyingThreads[tid] = nil
            handledFaults[tid] = nil
            dispositions.forget(tid)
        }
        // Threads that had not stopped in time stay traced: their stops come later and are resumed as usual.
        followedProcesses.remove(left.pid)
        if let failure { throw failure }
    }

    /// What of `pid`'s memory is never read (`UnreadableFiles`), and the name the crash line gives it: its
    /// argv[0], unless the argument area is a page of a FUSE file (reading that could stall for ever).
    func identify(_ pid: Int32, status: ProcStatus?) -> (executable: String, unreadable: UnreadableFiles) {
        Self.identify(pid, status: status)
    }

    /// What a crash's capture needs of /proc before its threads are stopped: the name of the thread the signal
    /// stopped, the name the crash line gives the process, and what of its memory is never read.
    struct Description: Sendable {
        let threadName: String?
        let executable: String
        let unreadable: UnreadableFiles

        init(pid: Int32, tid: Int32, status: ProcStatus) {
            threadName = ProcFS.threadName(pid: pid, tid: tid)
            (executable, unreadable) = Supervisor.identify(tid, status: status)
        }
    }

    /// Describes this process's crash of thread `tid` as `captureFatal` does — on the helper thread, in the type it
    /// gets back — once, so that the first crash's hold does not pay for the types' first use.
    static func rehearseDescription() {
        let pid = SelfProcess.pid
        if let status = try? ProcFS.threadStatus(pid) {
            _ = HelperComputation(on: nil) { Description(pid: pid, tid: pid, status: status) }.value(until: 0)
        }
    }

    /// What of `pid`'s memory is never read, and the name the crash line gives it (see the instance method).
    public static func identify(_ pid: Int32, status: ProcStatus?) -> (executable: String, unreadable: UnreadableFiles) {
        let unreadable = UnreadableFiles(pid: pid)
        if unreadable.argumentsReadable(pid: pid, through: pid), let argv0 = ProcFS.commandLine(pid).first, !argv0.isEmpty {
            return (argv0, unreadable)
        }
        return (status?.name ?? ProcFS.threadName(pid: pid, tid: pid) ?? "pid \(pid)", unreadable)
    }
}
