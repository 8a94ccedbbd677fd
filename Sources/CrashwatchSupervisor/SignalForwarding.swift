// SignalForwarding.swift — signals sent to crashwatch, passed on to the child once (DESIGN.md "Transparent
// wrapper"): not the terminal's, which already reached the child's process group; not one the child already
// got from the same sender; the service manager's after a grace for the child's own copy. Job-control stops
// addressed to crashwatch are mirrored once the child has stopped too.
//
// `SignalForwarder` holds the decisions and their state; what it asks of the world goes through
// `ForwardingTarget` — the Supervisor on the tracer thread, a fake in the unit tests.
import CrashwatchModel
import CrashwatchSystem

/// Signals sent to the supervisor that it passes on to its child.
public let forwardedSignals: [Signal] = [.term, .int, .hup, .quit, .abrt, .usr1, .usr2, .winch, .alrm, .cont, .tstp, .ttin, .ttou]
let forwardedSignalSet = Set(forwardedSignals)

/// What forwarding needs to know and do outside its own state.
protocol ForwardingTarget: AnyObject {
    /// Whether the main child is in crashwatch's process group, which the terminal signals as a whole.
    func childSharesSupervisorGroup() -> Bool
    /// The main child's pending signals (its thread's and its process's, bit `signal - 1`); nil when it is gone.
    func childPendingSignals() -> UInt64?
    /// Takes the stops waiting in waitpid now, setting them aside for the event loop.
    func setAsideWaitingStops() throws(SystemError) -> [WaitEvent]
    /// The sender of the signal `tid` is stopped delivering (PTRACE_GETSIGINFO); nil when not sent by a process.
    func senderOfDelivery(to tid: Int32) -> Int32?
    /// Whether `tid` is a thread of the main child.
    func isMainChildThread(_ tid: Int32) -> Bool
    /// Whether another copy of `signal` sent to crashwatch is waiting, unread or set aside during a capture.
    func receivedCopyWaiting(_ signal: Signal) -> Bool
    /// Whether the program's watchdog pings have stopped (a service manager's SIGABRT or SIGQUIT then captures
    /// the hang first).
    var watchdogIsSilent: Bool { get }
    /// Captures the main child as a hang and lets it go on.
    func captureHang() throws(SystemError)
    /// Sends `signal` to the main child (or, once it has ended, to the processes it left).
    func sendOn(_ signal: Signal) throws(SystemError)
    /// Stops crashwatch with a job-control stop until it is continued.
    func stopSelf(with signal: Signal)
    /// CLOCK_MONOTONIC nanoseconds.
    func monotonicNanoseconds() -> Int64
}

/// Forwarding's state and decisions: the service manager's signals waiting for their grace, the child's
/// deliveries of forwardable signals (so none is sent twice), and the job-control stop to mirror.
final class SignalForwarder {
    /// How long a signal from the service manager (pid 1) waits for the program's own copy.
    let serviceManagerGraceNanoseconds: Int64
    /// Signals from the service manager waiting (until `due`) for the program's own copy to show.
    private(set) var pendingForwards: [(received: ReceivedSignal, due: Int64)] = []
    /// Forwardable signals processes sent straight to traced threads, with their senders and when they were
    /// seen: the duplicates `forward` must not send again. Each matches one received copy.
    private var deliveries: [(tid: Int32, signal: Signal, sender: Int32, seen: Int64)] = []
    /// A job-control stop addressed to crashwatch itself — SIGTSTP, SIGTTIN or SIGTTOU from its terminal, its
    /// process group, or a process that signalled it — that it has not mirrored yet and no SIGCONT has ended.
    private(set) var stopRequest: Signal?
    /// Whether the main child is in a group-stop: its leader reported one (and was PTRACE_LISTENed) and has
    /// reported nothing since (a SIGCONT wakes it into a PTRACE_EVENT_STOP of SIGTRAP).
    var mainGroupStopped = false

    init(serviceManagerGraceNanoseconds: Int64) {
        self.serviceManagerGraceNanoseconds = serviceManagerGraceNanoseconds
    }

    var hasPendingForwards: Bool { !pendingForwards.isEmpty }
    var pendingForwardDues: [Int64] { pendingForwards.map(\.due) }

    /// The stop request after crashwatch received `signal`: a stop signal asks for one, SIGCONT ends it.
    static func stopRequest(after signal: Signal, current: Signal?) -> Signal? {
        if signal.isStop { return signal }
        return signal == .cont ? nil : current
    }

    /// Passes signals sent to the supervisor on to the main child, unless the child already has them.
    /// A signal from the service manager (pid 1) may be one it is also sending the whole cgroup: it waits
    /// a moment for the child's own copy (`settlePendingForwards`).
    /// A job-control stop among them is remembered until crashwatch can mirror it (`mirrorStop`).
    func forward(_ signals: [ReceivedSignal], to target: some ForwardingTarget) throws(SystemError) {
        defer { mirrorStop(target) }
        for received in signals where received.signal != .chld {
            stopRequest = Self.stopRequest(after: received.signal, current: stopRequest)
            // The terminal already sent Ctrl-C, Ctrl-Z, … to the whole foreground process group.
            if received.isFromTerminal && target.childSharesSupervisorGroup() { continue }
            if let sender = received.sender {
                // systemd's watchdog kills with SIGABRT (WatchdogSignal=): the hang is captured first.
                if sender == 1, received.signal == .abrt || received.signal == .quit, target.watchdogIsSilent {
                    try target.captureHang()
                }
                if try childAlreadyGot(received, target) { continue }
                if sender == 1 {
                    pendingForwards.append((received, target.monotonicNanoseconds() + serviceManagerGraceNanoseconds))
                    continue
                }
            }
            try target.sendOn(received.signal)
        }
    }

    /// Forwards the service manager's signals whose grace ran out without the child's own copy showing.
    func settlePendingForwards(to target: some ForwardingTarget) throws(SystemError) {
        let now = target.monotonicNanoseconds()
        var waiting: [(received: ReceivedSignal, due: Int64)] = []
        for pending in pendingForwards {
            if try childAlreadyGot(pending.received, target) { continue }
            if now >= pending.due {
                try target.sendOn(pending.received.signal)
            } else {
                waiting.append(pending)
            }
        }
        pendingForwards = waiting
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
    private func mirrorStop(_ target: some ForwardingTarget) {
        guard let request = stopRequest, mainGroupStopped else { return }
        stopRequest = nil
        target.stopSelf(with: request)
    }

    /// Whether a signal some process sent to the supervisor also reached the main child directly, as
    /// `kill -SIG -PGID`, a shell's `fg` or systemd's control-group kill do: then forwarding would
    /// deliver it twice. Either it is still pending in the child (a second copy of a standard signal
    /// would merge into it anyway), or one of the child's threads has dequeued it, which its
    /// signal-delivery-stop shows with the same sender (each such delivery answers for one received copy).
    /// Reading the pending sets takes the child's signal lock, under which a dequeue also enters its
    /// ptrace stop, so a stop not yet in `waitpid` cannot slip between the checks.
    private func childAlreadyGot(_ received: ReceivedSignal, _ target: some ForwardingTarget) throws(SystemError) -> Bool {
        if takeDelivery(matching: received, target) { return true }
        guard let pending = target.childPendingSignals() else { return false }
        if pending & (UInt64(1) << UInt64(received.signal.number - 1)) != 0 { return true }
        for event in try target.setAsideWaitingStops() {
            if case .stopped(let number, 0) = event.status, forwardedSignalSet.contains(Signal(number)) {
                noteDelivery(tid: event.pid, signal: Signal(number), sender: target.senderOfDelivery(to: event.pid),
                             now: target.monotonicNanoseconds())
            }
        }
        return takeDelivery(matching: received, target)
    }

    /// Removes and returns whether a delivery to the main child matches `received`.
    private func takeDelivery(matching received: ReceivedSignal, _ target: some ForwardingTarget) -> Bool {
        guard let index = deliveries.firstIndex(where: { delivery in
            delivery.signal == received.signal && delivery.sender == received.sender && target.isMainChildThread(delivery.tid)
        }) else { return false }
        deliveries.remove(at: index)
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
    func mayBeForwardedCopy(_ signal: Signal, _ target: some ForwardingTarget) -> Bool {
        !pendingForwards.isEmpty || target.receivedCopyWaiting(signal)
    }

    /// Remembers a forwardable signal a process (`sender`) sent to a traced thread, seen at its delivery-stop
    /// (whether the thread belongs to the main child is checked only when a received copy needs it).
    /// Entries older than a second, or beyond the newest 64, are forgotten.
    func noteDelivery(tid: Int32, signal: Signal, sender: Int32?, now: Int64) {
        guard let sender, sender != tid else { return }
        deliveries.removeAll { now - $0.seen > 1_000_000_000 }
        if deliveries.count >= 64 { deliveries.removeFirst() }
        deliveries.append((tid, signal, sender, now))
    }
}

extension Supervisor: ForwardingTarget {
    /// Forwards what the inbox holds, and what a capture set aside.
    func serviceInbox() throws(SystemError) {
        let received = deferredSignals + (try inbox.drain())
        deferredSignals.removeAll()
        if attached {
            // Nothing is forwarded to a process crashwatch did not start; TERM, INT and HUP detach from it.
            if !detachRequested, received.contains(where: { detachSignals.contains($0.signal) }) { try detachAll() }
            return
        }
        try forwarding.forward(received, to: self)
    }

    /// Whether a delivery of `signal` may be the child's copy of one crashwatch also got (`SignalForwarder`).
    func mayBeForwardedCopy(_ signal: Signal) -> Bool { forwarding.mayBeForwardedCopy(signal, self) }

    func childSharesSupervisorGroup() -> Bool { processGroup(of: mainPID) == SelfProcess.processGroup }

    func childPendingSignals() -> UInt64? {
        guard let status = try? ProcFS.threadStatus(mainPID) else { return nil }
        return status.pending | status.sharedPending
    }

    func setAsideWaitingStops() throws(SystemError) -> [WaitEvent] {
        var events: [WaitEvent] = []
        while let event = try waitForAnyTask(block: false) {
            deferredEvents.append(event)
            events.append(event)
        }
        return events
    }

    func senderOfDelivery(to tid: Int32) -> Int32? { (try? Ptrace.signalInfo(tid))?.senderPID }

    func isMainChildThread(_ tid: Int32) -> Bool { tid == mainPID || (try? ProcFS.threadStatus(tid))?.tgid == mainPID }

    func receivedCopyWaiting(_ signal: Signal) -> Bool { !deferredSignals.isEmpty || inbox.isPending(signal) }

    var watchdogIsSilent: Bool { watchdog.isSilent }

    /// Sends a forwarded signal to the main child; once it has exited (`outlivesMainChild`), to the
    /// followed processes it left behind, which crashwatch reaps as their subreaper.
    func sendOn(_ signal: Signal) throws(SystemError) {
        guard mainChildEnded else { return try sendSignal(signal, to: mainPID) }
        for pid in followedProcesses where (try? ProcFS.threadStatus(pid))?.ppid == SelfProcess.pid {
            try sendSignal(signal, to: pid)
        }
    }

    func stopSelf(with signal: Signal) { SelfProcess.stop(with: signal) }

    func monotonicNanoseconds() -> Int64 { Clock.monotonicNanoseconds() }
}
