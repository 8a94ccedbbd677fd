// Supervisor.swift — `crashwatch run`'s engine: spawns the command as a seized tracee and runs the one
// waitpid loop that classifies every stop of every traced task (DESIGN.md "Process model").
//
// Everything here runs on the thread that created the Supervisor: ptrace only accepts requests from the
// thread that attached. The loop is the supervisor's whole steady-state cost, so a non-crash signal
// costs one waitpid and one PTRACE_CONT.
import CrashwatchModel
import CrashwatchSystem

/// How `crashwatch run` supervises its command.
public struct SupervisorOptions: Sendable {
    /// The command and its arguments; the first element is looked up in PATH like a shell does.
    public var command: [String]
    /// The same as the bytes crashwatch was given, passed on untouched (an argument need not be UTF-8);
    /// nil: `command`'s UTF-8.
    public var rawCommand: [[UInt8]]?
    /// Trace forked and vforked children too, so their crashes are reported (`--no-follow-forks` clears it).
    public var followForks: Bool = true
    /// How many times the loop polls `waitpid` without blocking before it sleeps: a tracee stopping in
    /// quick succession is then answered without a cross-CPU wakeup.
    public var busyPolls: Int = 200
    /// How long a capture may keep a crashed process stopped before it writes what it has, and how long
    /// its processing may take from the crash on.
    public var captureTimeoutNanoseconds: Int64 = 10_000_000_000
    /// Processing workers that run at once; more crashes wait their turn (their minimal reports are written).
    public var maximumWorkers: Int = 2
    /// Crashes that may wait for a worker; beyond this, a crash keeps its minimal report.
    public var maximumWaitingJobs: Int = 64
    /// systemd's `NOTIFY_SOCKET` for this service, if any: the program gets a relay socket instead, and
    /// what it sends there is sent on from crashwatch (the main process systemd listens to).
    public var notifySocket: String?
    /// The service's watchdog timeout (`WATCHDOG_USEC` addressed to crashwatch): when the program's pings
    /// stop for half of it, its threads are captured as a hang.
    public var watchdogTimeoutNanoseconds: Int64?
    /// Keep supervising after the main child exits, for as long as processes it started live (a
    /// `Type=forking` daemon: the main child forks the daemon and exits). crashwatch then ends as the
    /// last of them did; `mainChildExited` hears of the main child's own end.
    public var outlivesMainChild = false
    public var mainChildExited: (@Sendable (WaitStatus) -> Void)?
    /// How long a signal from the service manager (pid 1) waits for the program's own copy before
    /// crashwatch forwards it: systemd signals the main process first, then the rest of the cgroup.
    public var serviceManagerGraceNanoseconds: Int64 = 100_000_000

    public init(command: [String], followForks: Bool = true) {
        self.command = command
        self.followForks = followForks
    }
}

/// Why the supervisor could not run the command at all.
public enum SupervisorError: Error, Equatable, Sendable {
    /// No candidate path for the command existed (exit status 127, like a shell).
    case commandNotFound(String)
    /// The command exists but could not be executed (exit status 126), with the errno.
    case commandNotExecutable(String, ExecFailure)
    /// A system call the supervisor depends on failed.
    case system(SystemError)
    /// ptrace is refused here (a seccomp filter, Yama, missing capabilities): a line naming the cause and
    /// the fix. Nothing was started.
    case supervisionBlocked(String)
}

/// Signals sent to the supervisor that it passes on to its child.
public let forwardedSignals: [Signal] = [.term, .int, .hup, .quit, .abrt, .usr1, .usr2, .winch, .alrm, .cont, .tstp, .ttin, .ttou]
private let forwardedSignalSet = Set(forwardedSignals)

/// Runs one command under ptrace and reports its crashes to an observer.
public final class Supervisor {
    private let options: SupervisorOptions
    private weak var observer: (any SupervisorObserver)?
    private let inbox: SignalInbox

    private var mainPID: Int32 = 0
    /// False until the main child's first exec: its start-up stops are ours, not the program's.
    private var mainExecuted = false
    /// The last crash signal each thread handled; dropped when the thread exits.
    private var handledFaults: [Int32: NestedFaults] = [:]
    /// Each thread's signal dispositions, read cheaply at every crash signal it takes.
    private let dispositions = DispositionReader()
    /// Processes already reported (crashed or killed), so one death yields one record.
    private var reportedProcesses: Set<Int32> = []
    /// The threads of processes released to die of their crash, by thread id, each with its process: at
    /// their exit stops nothing is left to learn (no exit status, no /proc look-up of the thread group).
    private var dyingThreads: [Int32: Int32] = [:]
    /// Crashed processes whose other threads were left in their stops for the kernel's kill, by crashed
    /// thread: its next report (its exit, normally after the kill) lets them go, so none is left stopped
    /// should the fatal signal not end the process.
    private var leftForKill: [Int32: StoppedProcess] = [:]
    /// Threads waiting in vfork() for their child to exec or exit, by the child's pid: such a thread cannot
    /// stop until then (the kernel's wait ends only for the child, or a kill), so a capture does not wait
    /// for it.
    private var vforkParents: [Int32: Int32] = [:]
    /// Stops of other processes that arrived while a capture waited for its own threads.
    private var deferredEvents: [WaitEvent] = []
    /// Signals sent to the supervisor during a capture, forwarded after it.
    private var deferredSignals: [ReceivedSignal] = []
    /// Forwardable signals processes sent straight to the main child's threads, with their senders and
    /// when they were seen: the duplicates `forward` must not send again. Each matches one received copy.
    private var mainDeliveries: [(tid: Int32, signal: Signal, sender: Int32, seen: Int64)] = []
    /// Signals from the service manager waiting (until `due`) for the program's own copy to show.
    private var pendingForwards: [(received: ReceivedSignal, due: Int64)] = []
    /// A job-control stop addressed to crashwatch itself — SIGTSTP, SIGTTIN or SIGTTOU from its terminal, its
    /// process group, or a process that signalled it — that it has not mirrored yet and no SIGCONT has ended.
    private var stopRequest: Signal?
    /// Whether the main child is in a group-stop: its leader reported one (and was PTRACE_LISTENed) and has
    /// reported nothing since (a SIGCONT wakes it into a PTRACE_EVENT_STOP of SIGTRAP).
    private var mainGroupStopped = false
    /// The sd_notify relay's socket, when systemd gave crashwatch a NOTIFY_SOCKET.
    private var relay: NotifySocket?
    private var lastTimerCheck: Int64 = 0
    private var relayFailureReported = false
    /// The program's watchdog pings, for hang reports.
    private var watchdog = WatchdogPings()
    /// Processing workers running, by pid, and jobs waiting for a free slot.
    private var runningJobs: [Int32: ProcessingJob] = [:]
    private var waitingJobs: [ProcessingJob] = []
    /// The main child's end, once seen: the supervisor returns it when no job is left.
    private var finalStatus: WaitStatus?
    /// Processes followed (the main child, and every fork when `outlivesMainChild`; vfork children always),
    /// for `outlivesMainChild`, and how the last one ended.
    private var followedProcesses: Set<Int32> = []
    private var lastProcessEnd: WaitStatus?
    private var mainChildEnded = false

    /// Blocks the supervisor's signals on the calling thread. Call before any other thread starts.
    public init(options: SupervisorOptions, observer: any SupervisorObserver) throws(SupervisorError) {
        self.options = options
        self.observer = observer
        do {
            inbox = try SignalInbox(signals: [.chld] + forwardedSignals)
        } catch {
            throw .system(error)
        }
    }

    /// Spawns the command, supervises it until it ends, and returns how it ended.
    /// Followed processes still running then are left running (detached when the supervisor exits).
    public func run() throws(SupervisorError) -> WaitStatus {
        let preflight = PtracePreflight.check()
        if let blocked = preflight.blocker { throw .supervisionBlocked(blocked) }
        if let warning = preflight.warning { observer?.supervisorWarning("crashwatch: \(warning)") }
        do {
            try SelfProcess.becomeSubreaper()
        } catch {
            throw .system(error)
        }
        let command = options.command[0]
        watchdog.timeout = options.watchdogTimeoutNanoseconds
        let child: SpawnedChild
        do {
            child = try spawnTraced(
                argv: commandBytes,
                candidates: commandCandidates,
                environment: relayEnvironment(),
                childMask: inbox.previousMask,
                ptraceOptions: Ptrace.seizeOptions(followForks: options.followForks))
        } catch where error.isPermissionDenied {
            throw .supervisionBlocked(PtracePreflight.refusalReason())
        } catch {
            throw .system(error)
        }
        mainPID = child.pid
        followedProcesses.insert(child.pid)
        observer?.supervisorStarted()

        let status: WaitStatus
        do {
            status = try loop()
        } catch {
            throw .system(error)
        }
        if !mainExecuted, let error = child.execFailure() {
            throw error.isNotFound ? .commandNotFound(command) : .commandNotExecutable(command, error)
        }
        return status
    }

    /// Replaces crashwatch with the command, unsupervised (after `run` threw `.supervisionBlocked`):
    /// the program then is the service's main process itself. Returns only if it could not be executed.
    public func execUnsupervised() -> SupervisorError {
        let failure = SelfProcess.execUnsupervised(argv: commandBytes, candidates: commandCandidates, mask: inbox.previousMask)
        return failure.isNotFound ? .commandNotFound(options.command[0]) : .commandNotExecutable(options.command[0], failure)
    }

    /// The command's argv as crashwatch was given it (bytes, untouched).
    private var commandBytes: [[UInt8]] { options.rawCommand ?? options.command.map { Array($0.utf8) } }

    /// Where the command may be, in the order `execvp` tries them.
    private var commandCandidates: [[UInt8]] { ExecutableSearch.candidates(for: commandBytes[0], path: environmentPath()) }

    // MARK: - The event loop

    private func loop() throws(SystemError) -> WaitStatus {
        var idlePolls = 0
        while true {
            if let end = finalStatus, runningJobs.isEmpty, waitingJobs.isEmpty { return end }
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
            if let event = try nextEvent() {
                idlePolls = 0
                try handle(event)
                continue
            }
            try inbox.waitUntilPending(timeoutMilliseconds: sleepLimit(), alsoReadable: relay.map { [$0.fd] } ?? [])
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
        if mainChildEnded {
            // A process gone without its end seen (it cannot be, as its subreaper; but never wait on one).
            followedProcesses = followedProcesses.filter { ProcFS.exists($0) }
            endWhenNothingIsFollowed()
        }
        if !pendingForwards.isEmpty { try settlePendingForwards() }
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
        for due in pendingForwards.map(\.due) + [watchdog.hangDue].compactMap({ $0 }) {
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

    /// Handles one waitpid report; records the main child's final status when it has ended.
    private func handle(_ event: WaitEvent) throws(SystemError) {
        let tid = event.pid
        // Any report but a group-stop (which sets it again) means the leader left its group-stop.
        if tid == mainPID { mainGroupStopped = false }
        if let job = runningJobs[tid] {
            switch event.status {
            case .exited(let code): finish(job, pid: tid, outcome: job.killedAtDeadline ? .deadlinePassed : .exited(code))
            case .signaled(let signal, _): finish(job, pid: tid, outcome: job.killedAtDeadline ? .deadlinePassed : .killed(Signal(signal)))
            case .stopped, .continued: break
            }
            return
        }
        if !leftForKill.isEmpty, let leftStopped = leftForKill.removeValue(forKey: tid) {
            if case .stopped(let signal, let ptraceEvent) = event.status, ptraceEvent != Event.exit {
                return try detachSurvivor(leftStopped, stop: ThreadStop(signal: signal, event: ptraceEvent))
            }
            try HeldProcess.letOthersGo(leftStopped)
        }
        switch event.status {
        case .exited, .signaled:
            if !vforkParents.isEmpty { forgetVfork(of: tid) }
            handledFaults[tid] = nil
            dispositions.forget(tid)
            if dyingThreads.removeValue(forKey: tid) != nil, dyingThreads.values.contains(tid) {
                // The process is gone: threads whose own exit was not reported go with it.
                dyingThreads = dyingThreads.filter { $0.value != tid }
            }
            // Kernels that give no exit stop for SIGKILL leave the main child's own report as the record;
            // threads and untraced orphans reaped here are not processes the supervisor reports on.
            if tid == mainPID, case .signaled(let signal, _) = event.status, signal == Signal.kill.number {
                try recordAbnormalExit(pid: tid, signal: .kill, stoppedAt: nil)
            }
            reportedProcesses.remove(tid)
            if followedProcesses.remove(tid) != nil { lastProcessEnd = event.status }
            if tid == mainPID {
                if options.outlivesMainChild {
                    mainChildEnded = true
                    options.mainChildExited?(event.status)
                } else {
                    finalStatus = event.status
                }
            }
            endWhenNothingIsFollowed()
        case .continued:
            return
        case .stopped(let signal, let ptraceEvent):
            switch ptraceEvent {
            case 0:
                try signalDeliveryStop(tid: tid, signal: Signal(signal))
            case Event.stop:
                try eventStop(tid: tid, signal: Signal(signal))
            case Event.exec:
                let formerTID = Int32(truncatingIfNeeded: (try? Ptrace.eventMessage(tid)) ?? UInt(tid))
                if formerTID != tid { handledFaults[formerTID] = nil }
                handledFaults[tid] = nil
                if !vforkParents.isEmpty { forgetVfork(of: tid) }
                if tid == mainPID { mainExecuted = true }
                try resume(tid)
            case Event.exit:
                if dyingThreads[tid] != nil { return try resume(tid) }
                if !vforkParents.isEmpty { forgetVfork(of: tid) }
                let exitStatus = WaitStatus(raw: Int32(truncatingIfNeeded: (try? Ptrace.eventMessage(tid)) ?? 0))
                if case .signaled(let number, _) = exitStatus {
                    let deathSignal = Signal(number)
                    if deathSignal == .kill {
                        return try recordAbnormalExit(pid: threadGroup(of: tid), signal: .kill, stoppedAt: tid)
                    }
                    // A crash signal that reached no delivery stop: the kernel forced it (a seccomp kill).
                    if deathSignal.isCrash, !reportedProcesses.contains(threadGroup(of: tid)) {
                        return try captureAtExit(tid: tid, pid: threadGroup(of: tid), signal: deathSignal)
                    }
                }
                try resume(tid)
            case Event.fork, Event.vfork:
                // The child's pid (one more request on a just-stopped tracee) is needed only to outlive the main
                // child with the processes it leaves, and for a vfork, whose parent cannot stop until it ends.
                if ptraceEvent == Event.vfork || options.outlivesMainChild,
                   let child = try? Ptrace.eventMessage(tid), child > 0, child <= UInt(Int32.max) {
                    followedProcesses.insert(Int32(child))
                    if ptraceEvent == Event.vfork { vforkParents[Int32(child)] = tid }
                }
                try resume(tid)
            default:  // clone (the new task reports its own first stop), vfork-done
                try resume(tid)
            }
        }
    }

    /// A signal is about to be delivered to `tid`: pass it on, remembering or reporting crash signals.
    private func signalDeliveryStop(tid: Int32, signal: Signal) throws(SystemError) {
        guard signal.isCrash else {
            if forwardedSignalSet.contains(signal), mayBeForwardedCopy(signal) {
                noteDelivery(tid: tid, signal: signal, info: try? Ptrace.signalInfo(tid))
            }
            return try resume(tid, signal: signal.number)
        }

        // Dispositions first, from /proc/TID/task/TID/stat (kept open): a handled fault, the common case (JVMs, Go),
        // needs nothing more of /proc; only a fatal one reads the whole status.
        guard let disposition = dispositions.dispositions(of: tid)?.disposition(of: signal.number),
              let info = try? Ptrace.signalInfo(tid)
        else {
            return try resume(tid, signal: signal.number)  // the thread is already gone
        }
        // SIGQUIT and SIGABRT are a service manager's signals too (systemd's watchdog).
        if forwardedSignalSet.contains(signal) { noteDelivery(tid: tid, signal: signal, info: info) }
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
                // Every thread's handled faults that may still be active; the root is the oldest of the
                // crashed thread's, or of any thread's when the process sent itself the signal.
                let threads = Set(ProcFS.threadIDs(of: pid))
                let faults = handledFaults.filter { threads.contains($0.key) }.values.flatMap(\.faults)
                    .sorted { $0.timeNanoseconds < $1.timeNanoseconds }
                let selfSent = info.senderPID == pid
                let original = faults.first { $0.tid == tid } ?? (selfSent ? faults.first : nil)
                let crashedTID = selfSent ? original?.tid ?? tid : tid
                let identity = identify(tid, status: status)
                var crash = DetectedCrash(
                    pid: pid, tid: tid,
                    threadName: ProcFS.threadName(pid: pid, tid: tid),
                    executable: identity.executable,
                    signal: info,
                    originalFault: original,
                    handledFaults: faults,
                    timeNanoseconds: Clock.realtimeNanoseconds(),
                    crashedThreadID: crashedTID,
                    crashedThreadName: ProcFS.threadName(pid: pid, tid: crashedTID))
                crash.unreadableFiles = identity.unreadable
                // Should crashwatch die while it holds the process (even by SIGKILL), the kernel detaches it
                // and the signal being delivered would be lost: the app would live on. A second copy, queued
                // now, survives that and kills as the first would; normally the process is dead before it
                // is dequeued.
                queueSignal(signal, to: tid, of: pid)
                return try capture(crash, initial: [tid: .signalDelivery(signal.number)], fatalSignal: signal,
                                   heldSince: Clock.monotonicNanoseconds())
            }
        }
        try resume(tid, signal: signal.number)
    }

    // MARK: - Stopping every thread of a crashed process

    /// Stops every thread of `pid` (those in `initial` are stopped already: a crashed one at its fatal signal), tolerating
    /// threads that exit or appear meanwhile. Gives up on threads that have not stopped by `deadline`; the capture
    /// ends by `captureDeadline` (by default the same).
    private func stopAllThreads(of pid: Int32, crashedTID: Int32, initial: [Int32: ThreadStop], deadline: Int64,
                                captureDeadline: Int64? = nil) throws(SystemError) -> StoppedProcess
    {
        var states = initial
        var interrupted: Set<Int32> = []
        var gone: Set<Int32> = []
        // Not interrupted: they would stop only once their vfork() ends, which may be never.
        let waitingInVfork = Set(vforkParents.values).subtracting(initial.keys)
        var vforking: Set<Int32> = []

        func interruptNewThreads() throws(SystemError) {
            for tid in ProcFS.threadIDs(of: pid) where states[tid] == nil && !interrupted.contains(tid) && !gone.contains(tid) {
                if waitingInVfork.contains(tid) {
                    vforking.insert(tid)
                    continue
                }
                // A leader that called pthread_exit stays a zombie while its threads run: it cannot stop.
                // (Only the leader lingers so; other threads vanish from the list when they exit.)
                if tid == pid, (try? ProcFS.threadStatus(tid))?.isDead == true {
                    gone.insert(tid)
                    continue
                }
                do {
                    try Ptrace.interrupt(tid)
                    interrupted.insert(tid)
                } catch where error.isNoSuchProcess {
                    gone.insert(tid)
                }
            }
        }

        try interruptNewThreads()
        while true {
            var idlePolls = 0
            while !interrupted.isEmpty {
                guard let event = try waitForAnyTask(block: false) else {
                    let remaining = deadline - Clock.monotonicNanoseconds()
                    if remaining <= 0 { break }
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
                        try absorb(event)
                    } else {
                        try inbox.waitUntilPending(timeoutMilliseconds: Int32(min(remaining / 1_000_000 + 1, 1000)))
                    }
                    continue
                }
                idlePolls = 0
                try absorb(event)
            }
            // Threads created meanwhile start stopped (PTRACE_O_TRACECLONE) and were absorbed above or
            // are interrupted now; a rescan that finds nobody new ends the loop.
            if Clock.monotonicNanoseconds() >= deadline { break }
            let before = interrupted.count
            try interruptNewThreads()
            if interrupted.count == before { break }
        }

        func absorb(_ event: WaitEvent) throws(SystemError) {
            let tid = event.pid
            let belongs = interrupted.contains(tid) || states[tid] != nil || ((try? ProcFS.threadStatus(tid))?.tgid == pid)
            guard belongs else {
                deferredEvents.append(event)
                return
            }
            interrupted.remove(tid)
            switch event.status {
            case .exited, .signaled:
                states[tid] = nil
                gone.insert(tid)
                handledFaults[tid] = nil
            case .continued:
                interrupted.insert(tid)
            case .stopped(let signal, let ptraceEvent):
                states[tid] = ThreadStop(signal: signal, event: ptraceEvent)
            }
        }

        let stoppedTIDs = states.keys.sorted { lhs, rhs in lhs == crashedTID ? true : rhs == crashedTID ? false : lhs < rhs }
        return StoppedProcess(pid: pid, crashedTID: crashedTID, threads: stoppedTIDs, unstopped: interrupted.sorted(),
                              inVfork: vforking.sorted(), deadlineNanoseconds: captureDeadline ?? deadline, stops: states)
    }

    /// A PTRACE_EVENT_STOP: a group-stop (stop signal) or a new task's first stop / an interrupt (SIGTRAP).
    private func eventStop(tid: Int32, signal: Signal) throws(SystemError) {
        guard signal.isStop else { return try resume(tid) }
        do {
            try Ptrace.listen(tid)
        } catch where error.isNoSuchProcess {
            return
        }
        // The program stopped. Whether crashwatch stops too depends on who the stop was for (`mirrorStop`):
        // read the inbox now, where the stop signal the terminal sent the whole group is waiting.
        if tid == mainPID && mainExecuted {
            mainGroupStopped = true
            try serviceInbox()
        }
    }

    /// Stops crashwatch with the stop it was asked for, now that the main child is stopped too, so that a shell
    /// sees its job stop (Ctrl-Z, a background read: SIGTSTP/SIGTTIN/SIGTTOU to the foreground or background
    /// group, both got it) and whoever stopped crashwatch continues both (`fg`, `bg`, `kill -CONT`: a SIGCONT to
    /// the group, or to crashwatch, which forwards it).
    ///
    /// Only then. A stop sent to the program alone (`kill -STOP APP`, from any user who may signal it) leaves
    /// crashwatch running: stopped, it could not answer the ptrace stop the program's SIGCONT wakes it into, nor
    /// see a crash after it, and the SIGCONT, sent to the program alone too, would never come to crashwatch —
    /// both would stay stopped for good. SIGSTOP to crashwatch itself (systemd's `systemctl kill -s STOP`
    /// signals every process of the cgroup) stops it by the kernel, never through here; its SIGCONT continues
    /// it the same way. The cgroup freezer holds every task where it is and needs nothing from crashwatch.
    /// A SIGCONT that arrived before crashwatch could stop ends the request (`SelfProcess.stop`).
    private func mirrorStop() {
        guard let request = stopRequest, mainGroupStopped else { return }
        stopRequest = nil
        SelfProcess.stop(with: request)
    }

    private func resume(_ tid: Int32, signal: Int32 = 0) throws(SystemError) {
        do {
            try Ptrace.cont(tid, signal: signal)
        } catch where error.isNoSuchProcess {
            // Killed meanwhile (SIGKILL, or its process exited): its exit is reported next.
        }
    }

    // MARK: - Signals sent to the supervisor

    /// Forwards what the inbox holds, and what a capture set aside.
    private func serviceInbox() throws(SystemError) {
        let received = deferredSignals + (try inbox.drain())
        deferredSignals.removeAll()
        try forward(received)
    }

    /// Passes signals sent to the supervisor on to the main child, unless the child already has them.
    /// A signal from the service manager (pid 1) may be one it is also sending the whole cgroup: it waits
    /// a moment for the child's own copy (`settlePendingForwards`).
    /// A job-control stop among them is remembered until crashwatch can mirror it (`mirrorStop`).
    private func forward(_ signals: [ReceivedSignal]) throws(SystemError) {
        defer { mirrorStop() }
        for received in signals where received.signal != .chld {
            if received.signal.isStop {
                stopRequest = received.signal
            } else if received.signal == .cont {
                stopRequest = nil
            }
            // The terminal already sent Ctrl-C, Ctrl-Z, … to the whole foreground process group.
            if received.isFromTerminal && processGroup(of: mainPID) == SelfProcess.processGroup { continue }
            if received.isSentByProcess {
                // systemd's watchdog kills with SIGABRT (WatchdogSignal=): the hang is captured first.
                if received.senderPID == 1, received.signal == .abrt || received.signal == .quit, watchdog.isSilent {
                    try captureHang()
                }
                if try childAlreadyGot(received) { continue }
                if received.senderPID == 1 {
                    pendingForwards.append((received, Clock.monotonicNanoseconds() + options.serviceManagerGraceNanoseconds))
                    continue
                }
            }
            try sendOn(received.signal)
        }
    }

    /// Sends a forwarded signal to the main child; once it has exited (`outlivesMainChild`), to the
    /// followed processes it left behind, which crashwatch reaps as their subreaper.
    private func sendOn(_ signal: Signal) throws(SystemError) {
        guard mainChildEnded else { return try sendSignal(signal, to: mainPID) }
        for pid in followedProcesses where (try? ProcFS.threadStatus(pid))?.ppid == SelfProcess.pid {
            try sendSignal(signal, to: pid)
        }
    }

    /// Forwards the service manager's signals whose grace ran out without the child's own copy showing.
    private func settlePendingForwards() throws(SystemError) {
        let now = Clock.monotonicNanoseconds()
        var waiting: [(received: ReceivedSignal, due: Int64)] = []
        for pending in pendingForwards {
            if try childAlreadyGot(pending.received) { continue }
            if now >= pending.due {
                try sendOn(pending.received.signal)
            } else {
                waiting.append(pending)
            }
        }
        pendingForwards = waiting
    }

    /// Whether a signal some process sent to the supervisor also reached the main child directly, as
    /// `kill -SIG -PGID`, a shell's `fg` or systemd's control-group kill do: then forwarding would
    /// deliver it twice. Either it is still pending in the child (a second copy of a standard signal
    /// would merge into it anyway), or one of the child's threads has dequeued it, which its
    /// signal-delivery-stop shows with the same sender (each such delivery answers for one received copy).
    /// Reading the pending sets takes the child's signal lock, under which a dequeue also enters its
    /// ptrace stop, so a stop not yet in `waitpid` cannot slip between the checks.
    private func childAlreadyGot(_ received: ReceivedSignal) throws(SystemError) -> Bool {
        if takeMainDelivery(of: received) { return true }
        guard let status = try? ProcFS.threadStatus(mainPID) else { return false }
        let bit = UInt64(1) << UInt64(received.signal.number - 1)
        if (status.pending | status.sharedPending) & bit != 0 { return true }
        while let event = try waitForAnyTask(block: false) {
            deferredEvents.append(event)
            if case .stopped(let number, 0) = event.status, forwardedSignalSet.contains(Signal(number)) {
                noteDelivery(tid: event.pid, signal: Signal(number), info: try? Ptrace.signalInfo(event.pid))
            }
        }
        return takeMainDelivery(of: received)
    }

    /// Removes and returns whether a delivery to the main child matches `received`.
    private func takeMainDelivery(of received: ReceivedSignal) -> Bool {
        guard let index = mainDeliveries.firstIndex(where: { delivery in
            delivery.signal == received.signal && delivery.sender == received.senderPID
                && (delivery.tid == mainPID || (try? ProcFS.threadStatus(delivery.tid))?.tgid == mainPID)
        }) else { return false }
        mainDeliveries.remove(at: index)
        return true
    }

    /// Whether a delivery of `signal` to a traced thread may be the program's copy of one the supervisor also
    /// got, and must be remembered with its sender (`PTRACE_GETSIGINFO`, the one request a passed-on signal
    /// costs beyond the floor's): while a received copy waits to be forwarded — not read from the inbox yet,
    /// set aside during a capture, or the service manager's waiting for the program's own. Whoever signals
    /// both signals the supervisor no later than the program — a process-group kill queues every copy in one
    /// system call, systemd's control-group kill starts with the main process — so the supervisor's copy is
    /// pending by the time the program's delivery stop is seen; and a copy already forwarded was matched
    /// then, against the program's pending set and the stops in `waitpid`. (A sender that signals the
    /// program and then, in a second call, the supervisor has it forwarded: two signals, two deliveries.)
    private func mayBeForwardedCopy(_ signal: Signal) -> Bool {
        !pendingForwards.isEmpty || !deferredSignals.isEmpty || inbox.isPending(signal)
    }

    /// Remembers a forwardable signal (with its siginfo) a process sent to a traced thread, seen at its delivery-stop
    /// (whether the thread belongs to the main child is checked only when a received copy needs it).
    /// Entries older than a second, or beyond the newest 64, are forgotten.
    private func noteDelivery(tid: Int32, signal: Signal, info: SignalInfo?) {
        guard let sender = info?.senderPID, sender != tid else { return }
        let now = Clock.monotonicNanoseconds()
        mainDeliveries.removeAll { now - $0.seen > 1_000_000_000 }
        if mainDeliveries.count >= 64 { mainDeliveries.removeFirst() }
        mainDeliveries.append((tid, signal, sender, now))
    }

    // MARK: - The sd_notify relay and the watchdog

    /// Opens the relay and returns the child's environment: crashwatch's own, with NOTIFY_SOCKET naming
    /// the relay. nil (the environment unchanged) without a NOTIFY_SOCKET, or when the relay cannot open.
    private func relayEnvironment() -> [[UInt8]]? {
        guard options.notifySocket != nil else { return nil }
        do {
            let socket = try NotifySocket()
            relay = socket
            let prefix = Array("NOTIFY_SOCKET=".utf8)
            return ProcessEnvironment.entries().filter { !$0.starts(with: prefix) } + [prefix + Array(socket.address.utf8)]
        } catch {
            observer?.supervisorWarning("crashwatch: \(error); the program talks to systemd's NOTIFY_SOCKET directly (needs NotifyAccess=all)")
            return nil
        }
    }

    /// Sends on what the supervised processes sent to the relay (at most 64 messages a call), as `NotifyFilter`
    /// decides: the program's own state, status, watchdog and descriptor store, never a main-PID change (crashwatch
    /// stays the main process, so that systemd sees the program's end through crashwatch's); descriptors only
    /// with `FDSTORE=1` (or a barrier's own), the rest closed. Watchdog pings and timeouts are noted for hang
    /// reports. Messages from processes crashwatch does not trace are dropped.
    private func serviceRelay() {
        guard let relay, let upstream = options.notifySocket else { return }
        for _ in 0..<64 {
            let message: NotifyMessage
            do {
                guard let next = try relay.receive() else { return }
                message = next
            } catch {
                return relayFailed(error)
            }
            guard message.senderPID > 0,
                  message.senderPID == mainPID || (try? ProcFS.threadStatus(message.senderPID))?.tracerPID == SelfProcess.pid
            else { continue }
            let decision = NotifyFilter.decide(message.bytes, descriptorCount: message.descriptors.count)
            if decision.watchdogPing { watchdog.ping() }
            if let timeout = decision.watchdogTimeoutNanoseconds { watchdog.timeout = timeout }
            // Descriptors not sent on are closed with the message.
            guard !decision.forwarded.isEmpty else { continue }
            do {
                try NotifySocket.send(decision.forwarded, descriptors: decision.passesDescriptors ? message.descriptors : [], to: upstream)
            } catch {
                relayFailed(error)
            }
        }
    }

    private func relayFailed(_ error: SystemError) {
        guard !relayFailureReported else { return }
        relayFailureReported = true
        observer?.supervisorWarning("crashwatch: sd_notify relay: \(error)")
    }

    /// Captures the main child's threads as a hang and lets them go on: its watchdog pings stopped for
    /// half the watchdog timeout, or the service manager's watchdog signal arrived. Once per silence.
    private func captureHang() throws(SystemError) {
        guard !watchdog.hangCaptured, let lastPing = watchdog.lastPing else { return }
        if let last = watchdog.lastCapture, Clock.monotonicNanoseconds() - last < WatchdogPings.minimumCaptureInterval { return }
        watchdog.captured()
        let pid = mainPID
        guard mainExecuted, finalStatus == nil, !reportedProcesses.contains(pid),
              let status = try? ProcFS.threadStatus(pid), !status.isDead else { return }
        let now = Clock.monotonicNanoseconds()
        let identity = identify(pid, status: status)
        var crash = DetectedCrash(
            pid: pid, tid: pid, threadName: ProcFS.threadName(pid: pid, tid: pid),
            executable: identity.executable, signal: SignalInfo(signo: 0, code: 0),
            originalFault: nil, handledFaults: [], timeNanoseconds: Clock.realtimeNanoseconds(),
            crashedThreadID: pid, crashedThreadName: ProcFS.threadName(pid: pid, tid: pid))
        crash.unreadableFiles = identity.unreadable
        crash.hang = DetectedHang(lastPingNanoseconds: lastPing.realtime, silenceNanoseconds: now - lastPing.monotonic,
                                  watchdogTimeoutNanoseconds: watchdog.timeout)
        try capture(crash, initial: [:], fatalSignal: nil, heldSince: now)
    }

    // MARK: - Processing jobs

    /// Starts `job` now if a worker slot is free, else queues it (or, with the queue full, skips it).
    private func enqueue(_ job: ProcessingJob) {
        if runningJobs.count < options.maximumWorkers {
            start(job)
        } else if waitingJobs.count < options.maximumWaitingJobs {
            waitingJobs.append(job)
        } else {
            observer?.supervisorFinished(job, outcome: .skipped)
        }
    }

    private func start(_ job: ProcessingJob) {
        guard Clock.monotonicNanoseconds() < job.deadlineNanoseconds else {
            return observer?.supervisorFinished(job, outcome: .deadlinePassed) ?? ()
        }
        do {
            let pid = try spawnWorker(arguments: job.arguments + ["--hold-ns", String(job.holdNanoseconds)],
                                      environment: job.environment, descriptors: job.descriptors.map(\.fd),
                                      standardError: job.standardError?.fd,
                                      limits: job.limits)
            job.pid = pid
            let now = Clock.monotonicNanoseconds()
            job.promoteAtNanoseconds = now + (job.deadlineNanoseconds - now) / 2
            job.starvationCheckAtNanoseconds = now + Self.starvationCheckInterval
            runningJobs[pid] = job
        } catch {
            observer?.supervisorFinished(job, outcome: .notStarted("\(error)"))
        }
    }

    private func finish(_ job: ProcessingJob, pid: Int32, outcome: WorkerOutcome) {
        runningJobs[pid] = nil
        observer?.supervisorFinished(job, outcome: outcome)
        while runningJobs.count < options.maximumWorkers, !waitingJobs.isEmpty {
            start(waitingJobs.removeFirst())
        }
    }

    /// A worker that has waited this long on a run queue, runnable, is starved: busy programs take its CPU.
    private static let starvedAfterNanoseconds: Int64 = 50_000_000
    /// How often a running worker is looked at for that (`/proc/PID/schedstat`).
    private static let starvationCheckInterval: Int64 = 25_000_000

    /// Kills workers past their deadline, and moves out of the background (SCHED_BATCH at nice 19, yielding
    /// every 0.25 ms) to SCHED_OTHER at nice 0 those that are starved, or still running halfway to it — on a
    /// machine kept busy, a worker yielding to every other task would otherwise finish only then (a threads64
    /// crash beside two busy loops: 6 s, against 50 ms); returns how long the loop may sleep before the next
    /// of these is due (milliseconds, -1 for no limit).
    private func enforceJobDeadlines() -> Int32 {
        guard !runningJobs.isEmpty else { return -1 }
        let now = Clock.monotonicNanoseconds()
        var next = Int64.max
        for (pid, job) in runningJobs {
            if now >= job.deadlineNanoseconds {
                if !job.killedAtDeadline {
                    job.killedAtDeadline = true
                    killProcess(pid)
                }
                continue
            }
            // Only a worker started in the background has anything to be promoted from; none is under a seccomp
            // filter (`WorkerLimits.background`), which could kill crashwatch itself for the `sched_setscheduler`.
            if !job.promoted && job.limits.background {
                var starved = false
                if now >= job.starvationCheckAtNanoseconds {
                    starved = (ProcFS.runQueueWaitNanoseconds(pid) ?? 0) >= Self.starvedAfterNanoseconds
                    job.starvationCheckAtNanoseconds = now + Self.starvationCheckInterval
                }
                if starved || now >= job.promoteAtNanoseconds {
                    job.promoted = true
                    _ = promoteWorker(pid)
                } else {
                    next = min(next, min(job.promoteAtNanoseconds, job.starvationCheckAtNanoseconds) - now)
                }
            }
            next = min(next, job.deadlineNanoseconds - now)
        }
        return next == Int64.max ? 100 : Int32(min(next / 1_000_000 + 1, 60_000))
    }

    // MARK: - Records

    /// A SIGKILL death: the observer records it, and when the threads are stopped at their exit (`stoppedAt`)
    /// and the observer asks for it, their stacks are captured first. Once per process.
    private func recordAbnormalExit(pid: Int32, signal: Signal, stoppedAt tid: Int32?) throws(SystemError) {
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
    private func captureAtExit(tid: Int32, pid: Int32, signal: Signal) throws(SystemError) {
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

    /// Stops every thread of `crash.pid` (those in `initial` are stopped already), hands the process to the
    /// observer for its capture, lets it go — the crashed thread with `fatalSignal`, or, without one, every
    /// thread as it was stopped — and queues the processing the observer asks for. The capture's deadline
    /// counts from `heldSince`.
    private func capture(_ crash: DetectedCrash, initial: [Int32: ThreadStop], fatalSignal: Signal?, heldSince: Int64)
        throws(SystemError)
    {
        observer?.supervisorStopping(crash)
        // A thread that has not stopped by a quarter of the capture's time is in a sleep no signal ends (a
        // FUSE server that does not answer, a stuck device): it is left out, and the rest of the time goes
        // to copying the memory and processing, not to waiting for it.
        let stopped = try stopAllThreads(of: crash.pid, crashedTID: crash.tid, initial: initial,
                                         deadline: heldSince + options.captureTimeoutNanoseconds / 4,
                                         captureDeadline: heldSince + options.captureTimeoutNanoseconds)
        let held = HeldProcess(stopped, fatalSignal: fatalSignal, options: Ptrace.seizeOptions(followForks: options.followForks))
        let job = observer?.supervisorDetected(crash, stopped: held.stopped)
        if let leftStopped = try held.release() { leftForKill[stopped.crashedTID] = leftStopped }
        if fatalSignal != nil {
            for tid in stopped.threads + stopped.unstopped + stopped.inVfork { dyingThreads[tid] = crash.pid }
        }
        if let job {
            job.holdNanoseconds = Clock.monotonicNanoseconds() - heldSince
            enqueue(job)
        }
    }

    /// A process released to die of its crash (`left`: the threads still held in their stops) whose crashed
    /// thread stopped again (`stop`) instead. The kernel keeps a pid namespace's init alive through a fatal
    /// signal while it is traced, and the fault that raised it comes back for ever; untraced, that fault kills
    /// it (the kernel then drops the protection). The crash is reported: every thread is let go untraced — the
    /// held ones from their stops, any the crashed thread started since once stopped, the crashed one with the
    /// signal it stopped for — so the process ends, or goes on, as it would have without crashwatch.
    private func detachSurvivor(_ left: StoppedProcess, stop: ThreadStop) throws(SystemError) {
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

    /// `tid` exec'd or is gone: a vfork() it was the child of is over, and one it was waiting in cannot matter.
    private func forgetVfork(of tid: Int32) {
        vforkParents[tid] = nil
        if vforkParents.values.contains(tid) { vforkParents = vforkParents.filter { $0.value != tid } }
    }

    private func threadGroup(of tid: Int32) -> Int32 {
        (try? ProcFS.threadStatus(tid))?.tgid ?? tid
    }

    /// What of `pid`'s memory is never read (`UnreadableFiles`), and the name the crash line gives it: its
    /// argv[0], unless the argument area is a page of a FUSE file (reading that could stall for ever).
    private func identify(_ pid: Int32, status: ProcStatus?) -> (executable: String, unreadable: UnreadableFiles) {
        let unreadable = UnreadableFiles(pid: pid)
        if unreadable.argumentsReadable(pid: pid, through: pid), let argv0 = ProcFS.commandLine(pid).first, !argv0.isEmpty {
            return (argv0, unreadable)
        }
        return (status?.name ?? ProcFS.threadName(pid: pid, tid: pid) ?? "pid \(pid)", unreadable)
    }
}

/// A crashed process held stopped for its capture. Letting it go is the only way to end this value:
/// `release()` on the normal path, and — should anything between the stop and the release throw — the
/// deinit, so no path leaves a thread stopped.
private struct HeldProcess: ~Copyable {
    let stopped: StoppedProcess
    /// The signal the crashed thread dies of; nil for a hang snapshot, whose threads all go on as they were.
    let fatalSignal: Signal?
    /// The ptrace options the threads were seized with.
    let options: UInt
    private var released = false

    init(_ stopped: StoppedProcess, fatalSignal: Signal?, options: UInt) {
        self.stopped = stopped
        self.fatalSignal = fatalSignal
        self.options = options
    }

    /// With a fatal signal: delivers it to the crashed thread and leaves every other thread in its stop,
    /// returned, for the kernel to take: the group exit (or the core dump) sends each a SIGKILL, which ends
    /// a ptrace stop, so none runs another instruction of its own after the capture — resumed, they could
    /// (a handler, a few microseconds of code) before the kill landed. The caller lets them go should the
    /// crashed thread stop again instead of dying (`letOthersGo`). The others lose their exit stop first
    /// (`PTRACE_SETOPTIONS`, about 0.5 µs each on a thread stopped this long): each would be one more round
    /// trip through the tracer thread, and 64 of them right after a capture are what another traced
    /// process's next stop waits behind; their ends are reported all the same. After the fatal signal would
    /// be too late: the crashed thread, let go, kills them before most are reached. Without a fatal signal
    /// (a hang snapshot, a death seen at the exit stops), every thread goes on as it was and nothing is
    /// returned.
    consuming func release() throws(SystemError) -> StoppedProcess? {
        released = true
        guard let fatalSignal else {
            try Self.letGo(stopped, except: nil)
            return nil
        }
        let dying = Ptrace.withoutExitStop(options)
        for tid in stopped.stops.keys where tid != stopped.crashedTID {
            try? Ptrace.setOptions(tid, dying)  // gone meanwhile: its end comes all the same
        }
        do {
            try Ptrace.cont(stopped.crashedTID, signal: fatalSignal.number)
        } catch where error.isNoSuchProcess {
            // Killed meanwhile: so are the others.
        } catch {
            try Self.letGo(stopped, except: nil)
            throw error
        }
        return stopped
    }

    deinit {
        if !released { try? Self.letGo(stopped, except: nil) }
    }

    /// Lets every thread but `crashedTID` go on from the stop it was held in: pending signals delivered,
    /// group-stops kept. Threads gone or taken by a kill meanwhile are passed over.
    static func letOthersGo(_ stopped: StoppedProcess) throws(SystemError) {
        try letGo(stopped, except: stopped.crashedTID)
    }

    private static func letGo(_ stopped: StoppedProcess, except skipped: Int32?) throws(SystemError) {
        var failure: SystemError?
        func attempt(_ body: () throws(SystemError) -> Void) {
            do { try body() } catch where error.isNoSuchProcess {
                // Killed meanwhile: its exit is reported next.
            } catch {
                if failure == nil { failure = error }
            }
        }
        for (tid, stop) in stopped.stops where tid != skipped {
            switch stop {
            case .signalDelivery(let signal): attempt { () throws(SystemError) in try Ptrace.cont(tid, signal: signal) }
            case .event: attempt { () throws(SystemError) in try Ptrace.cont(tid) }
            case .groupStop: attempt { () throws(SystemError) in try Ptrace.listen(tid) }
            }
        }
        if let failure { throw failure }
    }
}

/// The program's watchdog pings as the relay saw them.
struct WatchdogPings {
    /// The watchdog timeout (nanoseconds), from WATCHDOG_USEC; nil: no watchdog.
    var timeout: Int64?
    /// The last WATCHDOG=1 (CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds); nil before the first.
    var lastPing: (monotonic: Int64, realtime: Int64)?
    /// Whether the current silence was captured as a hang already.
    var hangCaptured = false
    /// When the last hang was captured (CLOCK_MONOTONIC nanoseconds).
    var lastCapture: Int64?
    /// The least time between two hang captures: the program chooses its watchdog timeout and when it
    /// pings, and must not make crashwatch stop it and write a report every few milliseconds.
    static let minimumCaptureInterval: Int64 = 10_000_000_000

    mutating func ping() {
        lastPing = (Clock.monotonicNanoseconds(), Clock.realtimeNanoseconds())
        hangCaptured = false
    }

    mutating func captured() {
        hangCaptured = true
        lastCapture = Clock.monotonicNanoseconds()
    }

    /// When the current silence becomes a hang (half the timeout after the last ping, and not sooner than
    /// `minimumCaptureInterval` after the last capture); nil when there is no watchdog, no ping yet, or the
    /// hang was captured.
    var hangDue: Int64? {
        guard let timeout, let lastPing, !hangCaptured else { return nil }
        return max(lastPing.monotonic + timeout / 2, (lastCapture ?? Int64.min / 2) + Self.minimumCaptureInterval)
    }

    /// Whether pings were expected and have stopped for at least half the timeout.
    var isSilent: Bool {
        guard let timeout, let lastPing else { return false }
        return Clock.monotonicNanoseconds() - lastPing.monotonic >= timeout / 2
    }
}

extension ThreadStop {
    /// How a thread that reported a stop with `signal` and ptrace `event` is stopped.
    fileprivate init(signal: Int32, event: Int32) {
        switch event {
        case 0: self = .signalDelivery(signal)
        case Event.stop: self = Signal(signal).isStop ? .groupStop : .event
        default: self = .event
        }
    }
}

/// PTRACE_EVENT_* values as the loop matches them.
private enum Event {
    static let fork: Int32 = 1
    static let vfork: Int32 = 2
    static let exec: Int32 = 4
    static let exit: Int32 = 6
    static let stop: Int32 = 128
}
