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
    /// Trace forked and vforked children too, so their crashes are reported (`--no-follow-forks` clears it).
    public var followForks: Bool = true
    /// How many times the loop polls `waitpid` without blocking before it sleeps: a tracee stopping in
    /// quick succession is then answered without a cross-CPU wakeup.
    public var busyPolls: Int = 200

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

/// Runs one command under ptrace and reports its crashes to an observer.
public final class Supervisor {
    private let options: SupervisorOptions
    private weak var observer: (any SupervisorObserver)?
    private let inbox: SignalInbox

    private var mainPID: Int32 = 0
    /// False until the main child's first exec: its start-up stops are ours, not the program's.
    private var mainExecuted = false
    /// The last crash signal each thread handled; dropped when the thread exits.
    private var handledFaults: [Int32: HandledFault] = [:]
    /// Processes already reported (crashed or killed), so one death yields one record.
    private var reportedProcesses: Set<Int32> = []

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
        let child: SpawnedChild
        do {
            child = try spawnTraced(
                argv: options.command,
                candidates: ExecutableSearch.candidates(for: command, path: environmentPath()),
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
            if let event = try waitForAnyTask(block: false) {
                idlePolls = 0
                if let end = try handle(event) { return end }
                continue
            }
            if idlePolls < options.busyPolls {
                idlePolls += 1
                continue
            }
            // Read the inbox before sleeping on it. Draining consumes a pending SIGCHLD, so look for
            // stops once more afterwards: a stop that came in between would otherwise wait forever.
            try forward(try inbox.drain())
            if let event = try waitForAnyTask(block: false) {
                idlePolls = 0
                if let end = try handle(event) { return end }
                continue
            }
            try inbox.waitUntilPending()
            idlePolls = 0
        }
    }

    /// Handles one waitpid report; returns the main child's final status when it has ended.
    private func handle(_ event: WaitEvent) throws(SystemError) -> WaitStatus? {
        let tid = event.pid
        switch event.status {
        case .exited, .signaled:
            handledFaults[tid] = nil
            if case .signaled(let signal, _) = event.status, signal == Signal.kill.number {
                recordAbnormalExit(pid: tid, signal: .kill)
            }
            reportedProcesses.remove(tid)
            return tid == mainPID ? event.status : nil
        case .continued:
            return nil
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
            return nil
        }
    }

    /// A signal is about to be delivered to `tid`: pass it on, remembering or reporting crash signals.
    private func signalDeliveryStop(tid: Int32, signal: Signal) throws(SystemError) {
        guard signal.isCrash else { return try resume(tid, signal: signal.number) }

        guard let status = try? ProcFS.threadStatus(tid), let info = try? Ptrace.signalInfo(tid) else {
            return try resume(tid, signal: signal.number)  // the thread is already gone
        }
        let pid = status.tgid ?? tid
        switch verdict(for: signal, disposition: status.disposition(of: signal.number)) {
        case .passThrough:
            break
        case .rememberAndDeliver:
            handledFaults[tid] = HandledFault(tid: tid, signal: info, timeNanoseconds: Clock.realtimeNanoseconds())
        case .fatal:
            if reportedProcesses.insert(pid).inserted {
                let crash = DetectedCrash(
                    pid: pid, tid: tid,
                    threadName: ProcFS.threadName(pid: pid, tid: tid),
                    executable: executableName(of: pid, status: status),
                    signal: info,
                    originalFault: handledFaults[tid],
                    timeNanoseconds: Clock.realtimeNanoseconds(),
                    isMainProcess: pid == mainPID)
                observer?.supervisorDetected(crash)
            }
        }
        try resume(tid, signal: signal.number)
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

    private func forward(_ signals: [ReceivedSignal]) throws(SystemError) {
        for received in signals where received.signal != .chld {
            // The terminal already sent Ctrl-C, Ctrl-Z, … to the whole foreground process group.
            if received.isFromTerminal && processGroup(of: mainPID) == SelfProcess.processGroup { continue }
            try sendSignal(received.signal, to: mainPID)
        }
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

/// PTRACE_EVENT_* values as the loop matches them.
private enum Event {
    static let exec: Int32 = 4
    static let exit: Int32 = 6
    static let stop: Int32 = 128
}
