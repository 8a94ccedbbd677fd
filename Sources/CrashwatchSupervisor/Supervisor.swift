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
}

/// Signals sent to the supervisor that it passes on to its child.
public let forwardedSignals: [Signal] = [.term, .int, .hup, .quit, .usr1, .usr2, .winch, .alrm, .cont, .tstp, .ttin, .ttou]
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
    /// Processes already reported (crashed or killed), so one death yields one record.
    private var reportedProcesses: Set<Int32> = []
    /// Stops of other processes that arrived while a capture waited for its own threads.
    private var deferredEvents: [WaitEvent] = []
    /// Signals sent to the supervisor during a capture, forwarded after it.
    private var deferredSignals: [ReceivedSignal] = []
    /// Forwardable signals processes sent straight to the main child since the inbox was last read,
    /// with their senders: the duplicates `forward` must not send again.
    private var mainDeliveries: [(signal: Signal, sender: Int32)] = []
    /// Processing workers running, by pid, and jobs waiting for a free slot.
    private var runningJobs: [Int32: ProcessingJob] = [:]
    private var waitingJobs: [ProcessingJob] = []
    /// The main child's end, once seen: the supervisor returns it when no job is left.
    private var finalStatus: WaitStatus?

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
        do {
            try SelfProcess.becomeSubreaper()
        } catch {
            throw .system(error)
        }
        let command = options.command[0]
        let raw = options.rawCommand ?? options.command.map { Array($0.utf8) }
        let child: SpawnedChild
        do {
            child = try spawnTraced(
                argv: raw,
                candidates: ExecutableSearch.candidates(for: raw[0], path: environmentPath()),
                childMask: inbox.previousMask,
                ptraceOptions: Ptrace.seizeOptions(followForks: options.followForks))
        } catch {
            throw .system(error)
        }
        mainPID = child.pid

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

    // MARK: - The event loop

    private func loop() throws(SystemError) -> WaitStatus {
        var idlePolls = 0
        while true {
            if let end = finalStatus, runningJobs.isEmpty, waitingJobs.isEmpty { return end }
            if let event = try nextEvent() {
                idlePolls = 0
                try handle(event)
                continue
            }
            if idlePolls < options.busyPolls {
                idlePolls += 1
                continue
            }
            // Read the inbox before sleeping on it. Draining consumes a pending SIGCHLD, so look for
            // stops once more afterwards: a stop that came in between would otherwise wait forever.
            try forward(deferredSignals + (try inbox.drain()))
            deferredSignals.removeAll()
            if let event = try nextEvent() {
                idlePolls = 0
                try handle(event)
                continue
            }
            try inbox.waitUntilPending(timeoutMilliseconds: enforceJobDeadlines())
            _ = enforceJobDeadlines()
            idlePolls = 0
        }
    }

    /// The next stop or exit: first those a capture set aside, then the kernel's.
    private func nextEvent() throws(SystemError) -> WaitEvent? {
        if !deferredEvents.isEmpty { return deferredEvents.removeFirst() }
        return try waitForAnyTask(block: false)
    }

    /// Handles one waitpid report; records the main child's final status when it has ended.
    private func handle(_ event: WaitEvent) throws(SystemError) {
        let tid = event.pid
        if let job = runningJobs[tid] {
            switch event.status {
            case .exited(let code): finish(job, pid: tid, outcome: job.killedAtDeadline ? .deadlinePassed : .exited(code))
            case .signaled(let signal, _): finish(job, pid: tid, outcome: job.killedAtDeadline ? .deadlinePassed : .killed(Signal(signal)))
            case .stopped, .continued: break
            }
            return
        }
        switch event.status {
        case .exited, .signaled:
            handledFaults[tid] = nil
            // Kernels that give no exit stop for SIGKILL leave the main child's own report as the record;
            // threads and untraced orphans reaped here are not processes the supervisor reports on.
            if tid == mainPID, case .signaled(let signal, _) = event.status, signal == Signal.kill.number {
                recordAbnormalExit(pid: tid, signal: .kill)
            }
            reportedProcesses.remove(tid)
            if tid == mainPID { finalStatus = event.status }
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
                if tid == mainPID { mainExecuted = true }
                try resume(tid)
            case Event.exit:
                let exitStatus = WaitStatus(raw: Int32(truncatingIfNeeded: (try? Ptrace.eventMessage(tid)) ?? 0))
                if case .signaled(let deathSignal, _) = exitStatus, deathSignal == Signal.kill.number {
                    recordAbnormalExit(pid: threadGroup(of: tid), signal: .kill)
                }
                try resume(tid)
            default:  // fork, vfork, clone (the new task reports its own first stop), vfork-done
                try resume(tid)
            }
        }
    }

    /// A signal is about to be delivered to `tid`: pass it on, remembering or reporting crash signals.
    private func signalDeliveryStop(tid: Int32, signal: Signal) throws(SystemError) {
        guard signal.isCrash else {
            if tid == mainPID && forwardedSignalSet.contains(signal) {
                noteMainDelivery(WaitEvent(pid: tid, status: .stopped(signal: signal.number, event: 0)))
            }
            return try resume(tid, signal: signal.number)
        }

        guard let status = try? ProcFS.threadStatus(tid), let info = try? Ptrace.signalInfo(tid) else {
            return try resume(tid, signal: signal.number)  // the thread is already gone
        }
        let pid = status.tgid ?? tid
        switch verdict(for: signal, disposition: status.disposition(of: signal.number)) {
        case .passThrough:
            break
        case .rememberAndDeliver:
            handledFaults[tid, default: NestedFaults()].record(HandledFault(
                tid: tid, signal: info, timeNanoseconds: Clock.realtimeNanoseconds(), registers: (try? Ptrace.registerSet(tid)) ?? []))
        case .fatal:
            if reportedProcesses.insert(pid).inserted {
                // Every thread's handled faults that may still be active; the root is the oldest of the
                // crashed thread's, or of any thread's when the process sent itself the signal.
                let threads = Set(ProcFS.threadIDs(of: pid))
                let faults = handledFaults.filter { threads.contains($0.key) }.values.flatMap(\.faults)
                    .sorted { $0.timeNanoseconds < $1.timeNanoseconds }
                let selfSent = info.senderPID == pid
                let original = faults.first { $0.tid == tid } ?? (selfSent ? faults.first : nil)
                let crashedTID = selfSent ? original?.tid ?? tid : tid
                let crash = DetectedCrash(
                    pid: pid, tid: tid,
                    threadName: ProcFS.threadName(pid: pid, tid: tid),
                    executable: executableName(of: tid, status: status),
                    signal: info,
                    originalFault: original,
                    handledFaults: faults,
                    timeNanoseconds: Clock.realtimeNanoseconds(),
                    crashedThreadID: crashedTID,
                    crashedThreadName: ProcFS.threadName(pid: pid, tid: crashedTID))
                // Should crashwatch die while it holds the process (even by SIGKILL), the kernel detaches it
                // and the signal being delivered would be lost: the app would live on. A second copy, queued
                // now, survives that and kills as the first would; normally the process is dead before it
                // is dequeued.
                queueSignal(signal, to: tid, of: pid)
                let deadline = Clock.monotonicNanoseconds() + options.captureTimeoutNanoseconds
                let heldSince = Clock.monotonicNanoseconds()
                let held = HeldProcess(try stopAllThreads(of: pid, crashedTID: tid, fatalSignal: signal, deadline: deadline),
                                       fatalSignal: signal)
                let job = observer?.supervisorDetected(crash, stopped: held.stopped)
                try held.release()
                if let job {
                    job.holdNanoseconds = Clock.monotonicNanoseconds() - heldSince
                    enqueue(job)
                }
                return
            }
        }
        try resume(tid, signal: signal.number)
    }

    // MARK: - Stopping every thread of a crashed process

    /// Stops every thread of `pid` (the crashed one is already stopped at its fatal signal), tolerating
    /// threads that exit or appear meanwhile. Gives up on threads that have not stopped by `deadline`.
    private func stopAllThreads(of pid: Int32, crashedTID: Int32, fatalSignal: Signal, deadline: Int64)
        throws(SystemError) -> StoppedProcess
    {
        var states: [Int32: ThreadStop] = [crashedTID: .signalDelivery(fatalSignal.number)]
        var interrupted: Set<Int32> = []
        var gone: Set<Int32> = []

        func interruptNewThreads() throws(SystemError) {
            for tid in ProcFS.threadIDs(of: pid) where states[tid] == nil && !interrupted.contains(tid) && !gone.contains(tid) {
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
                switch ptraceEvent {
                case 0: states[tid] = .signalDelivery(signal)
                case Event.stop: states[tid] = Signal(signal).isStop ? .groupStop : .event
                default: states[tid] = .event
                }
            }
        }

        let stoppedTIDs = states.keys.sorted { lhs, rhs in lhs == crashedTID ? true : rhs == crashedTID ? false : lhs < rhs }
        return StoppedProcess(pid: pid, crashedTID: crashedTID, threads: stoppedTIDs, unstopped: interrupted.sorted(),
                              deadlineNanoseconds: deadline, stops: states)
    }

    /// A PTRACE_EVENT_STOP: a group-stop (stop signal) or a new task's first stop / an interrupt (SIGTRAP).
    private func eventStop(tid: Int32, signal: Signal) throws(SystemError) {
        guard signal.isStop else { return try resume(tid) }
        do {
            try Ptrace.listen(tid)
        } catch where error.isNoSuchProcess {
            return
        }
        // The program was stopped (Ctrl-Z, SIGSTOP): stop the supervisor too, so a shell or a service
        // manager watching it sees the job stop, and continue with it.
        if tid == mainPID && mainExecuted {
            SelfProcess.stop(with: signal)
        }
    }

    private func resume(_ tid: Int32, signal: Int32 = 0) throws(SystemError) {
        do {
            try Ptrace.cont(tid, signal: signal)
        } catch where error.isNoSuchProcess {
            // Killed meanwhile (SIGKILL, or its process exited): its exit is reported next.
        }
    }

    // MARK: - Signals sent to the supervisor

    /// Passes signals sent to the supervisor on to the main child, unless the child already has them.
    private func forward(_ signals: [ReceivedSignal]) throws(SystemError) {
        defer { mainDeliveries.removeAll(keepingCapacity: true) }
        for received in signals where received.signal != .chld {
            // The terminal already sent Ctrl-C, Ctrl-Z, … to the whole foreground process group.
            if received.isFromTerminal && processGroup(of: mainPID) == SelfProcess.processGroup { continue }
            if received.isSentByProcess, try childAlreadyGot(received) { continue }
            try sendSignal(received.signal, to: mainPID)
        }
    }

    /// Whether a signal some process sent to the supervisor also reached the main child directly, as
    /// `kill -SIG -PGID`, a shell's `fg` or systemd's control-group kill do: then forwarding would
    /// deliver it twice. Either it is still pending in the child (a second copy of a standard signal
    /// would merge into it anyway), or the child has dequeued it, which the child's signal-delivery-stop
    /// shows with the same sender. Reading the pending sets takes the child's signal lock, under which a
    /// dequeue also enters its ptrace stop, so a stop not yet in `waitpid` cannot slip between the checks.
    private func childAlreadyGot(_ received: ReceivedSignal) throws(SystemError) -> Bool {
        let signal = received.signal
        if mainDeliveries.contains(where: { $0.signal == signal && $0.sender == received.senderPID }) { return true }
        guard let status = try? ProcFS.threadStatus(mainPID) else { return false }
        let bit = UInt64(1) << UInt64(signal.number - 1)
        if (status.pending | status.sharedPending) & bit != 0 { return true }
        while let event = try waitForAnyTask(block: false) {
            deferredEvents.append(event)
            noteMainDelivery(event)
        }
        return mainDeliveries.contains(where: { $0.signal == signal && $0.sender == received.senderPID })
    }

    /// Remembers a forwardable signal a process sent to the main child, seen at its delivery-stop.
    private func noteMainDelivery(_ event: WaitEvent) {
        guard event.pid == mainPID, case .stopped(let number, 0) = event.status else { return }
        let signal = Signal(number)
        guard forwardedSignalSet.contains(signal), mainDeliveries.count < 64,
              let info = try? Ptrace.signalInfo(mainPID), let sender = info.senderPID else { return }
        mainDeliveries.append((signal, sender))
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
        if let failure = job.prepare?() {
            return observer?.supervisorFinished(job, outcome: .notStarted(failure)) ?? ()
        }
        do {
            let pid = try spawnWorker(arguments: job.arguments + ["--hold-ns", String(job.holdNanoseconds)],
                                      environment: job.environment, descriptors: job.descriptors.map(\.fd),
                                      limits: job.limits)
            job.pid = pid
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

    /// Kills workers past their deadline; returns how long the loop may sleep before the next one is due
    /// (milliseconds, -1 for no limit).
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
            } else {
                next = min(next, job.deadlineNanoseconds - now)
            }
        }
        return next == Int64.max ? 100 : Int32(min(next / 1_000_000 + 1, 60_000))
    }

    // MARK: - Records

    private func recordAbnormalExit(pid: Int32, signal: Signal) {
        guard reportedProcesses.insert(pid).inserted else { return }
        observer?.supervisorSawAbnormalExit(AbnormalExit(
            pid: pid, executable: executableName(of: pid, status: nil), signal: signal,
            timeNanoseconds: Clock.realtimeNanoseconds()))
    }

    private func threadGroup(of tid: Int32) -> Int32 {
        (try? ProcFS.threadStatus(tid))?.tgid ?? tid
    }

    private func executableName(of pid: Int32, status: ProcStatus?) -> String {
        if let argv0 = ProcFS.commandLine(pid).first, !argv0.isEmpty { return argv0 }
        return status?.name ?? ProcFS.threadName(pid: pid, tid: pid) ?? "pid \(pid)"
    }
}

/// A crashed process held stopped for its capture. Letting it go is the only way to end this value:
/// `release()` on the normal path, and — should anything between the stop and the release throw — the
/// deinit, so no path leaves a thread stopped.
private struct HeldProcess: ~Copyable {
    let stopped: StoppedProcess
    let fatalSignal: Signal
    private var released = false

    init(_ stopped: StoppedProcess, fatalSignal: Signal) {
        self.stopped = stopped
        self.fatalSignal = fatalSignal
    }

    /// Delivers the fatal signal to the crashed thread first — the kernel then takes the whole process
    /// down, waking the rest — and lets every other thread go on as it would have: pending signals
    /// delivered, group-stops kept.
    consuming func release() throws(SystemError) {
        released = true
        try Self.letGo(stopped, fatalSignal: fatalSignal)
    }

    deinit {
        if !released { try? Self.letGo(stopped, fatalSignal: fatalSignal) }
    }

    private static func letGo(_ stopped: StoppedProcess, fatalSignal: Signal) throws(SystemError) {
        var failure: SystemError?
        func attempt(_ body: () throws(SystemError) -> Void) {
            do { try body() } catch where error.isNoSuchProcess {
                // Killed meanwhile: its exit is reported next.
            } catch {
                if failure == nil { failure = error }
            }
        }
        attempt { () throws(SystemError) in try Ptrace.cont(stopped.crashedTID, signal: fatalSignal.number) }
        for (tid, stop) in stopped.stops where tid != stopped.crashedTID {
            switch stop {
            case .signalDelivery(let signal): attempt { () throws(SystemError) in try Ptrace.cont(tid, signal: signal) }
            case .event: attempt { () throws(SystemError) in try Ptrace.cont(tid) }
            case .groupStop: attempt { () throws(SystemError) in try Ptrace.listen(tid) }
            }
        }
        if let failure { throw failure }
    }
}

/// PTRACE_EVENT_* values as the loop matches them.
private enum Event {
    static let exec: Int32 = 4
    static let exit: Int32 = 6
    static let stop: Int32 = 128
}
