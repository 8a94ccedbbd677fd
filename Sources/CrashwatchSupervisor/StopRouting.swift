// StopRouting.swift — what one waitpid report means and what the event loop does about it, as pure functions
// of the wait status and what the supervisor knows of the task (DESIGN.md "Event loop"); the loop performs
// the ptrace requests these name, and the unit tests read them without a tracee.
//
// Every tracee is seized (PTRACE_SEIZE with TRACECLONE/FORK/VFORK/EXEC/EXIT; the shim's spawn, no
// PTRACE_ATTACH anywhere), so a group-stop shows as PTRACE_EVENT_STOP with the stop signal, and a stop signal
// at event 0 is that signal's delivery-stop (the group-stop follows it), never an ambiguous stop that only
// PTRACE_GETSIGINFO could tell apart.
import CrashwatchModel
import CrashwatchSystem

/// PTRACE_EVENT_* values as the loop matches them.
enum PtraceEvent {
    static let fork: Int32 = 1
    static let vfork: Int32 = 2
    static let exec: Int32 = 4
    static let exit: Int32 = 6
    static let stop: Int32 = 128
}

/// One waitpid report of a seized task, classified.
enum TaskReport: Equatable, Sendable {
    /// The task exited or was killed (the `WaitStatus` says which).
    case ended(WaitStatus)
    /// A stopped child was continued (not asked for: crashwatch does not pass WCONTINUED).
    case continued
    /// A signal is about to be delivered to the task (event 0).
    case signalDelivery(Signal)
    /// A job-control group-stop: PTRACE_EVENT_STOP with a stop signal.
    case groupStop(Signal)
    /// A PTRACE_EVENT_STOP that is not a group-stop (SIGTRAP): a new task's first stop, an interrupt, or the
    /// wake from a group-stop after SIGCONT.
    case eventStop
    /// PTRACE_EVENT_EXEC: the task's thread group exec'd.
    case exec
    /// PTRACE_EVENT_EXIT: the task is about to exit; its exit status is the event message.
    case exit
    /// PTRACE_EVENT_FORK or PTRACE_EVENT_VFORK: the task started a process.
    case fork(vfork: Bool)
    /// Any other event (clone: the new task reports its own first stop; vfork-done).
    case otherEvent(Int32)

    /// Classifies a waitpid status.
    init(_ status: WaitStatus) {
        switch status {
        case .exited, .signaled: self = .ended(status)
        case .continued: self = .continued
        case .stopped(let signal, let event):
            switch event {
            case 0: self = .signalDelivery(Signal(signal))
            case PtraceEvent.stop: self = Signal(signal).isStop ? .groupStop(Signal(signal)) : .eventStop
            case PtraceEvent.exec: self = .exec
            case PtraceEvent.exit: self = .exit
            case PtraceEvent.fork: self = .fork(vfork: false)
            case PtraceEvent.vfork: self = .fork(vfork: true)
            default: self = .otherEvent(event)
            }
        }
    }
}

extension ThreadStop {
    /// How a thread that reported a stop with `signal` and ptrace `event` is stopped, which decides how it is let go.
    init(signal: Int32, event: Int32) {
        switch TaskReport(.stopped(signal: signal, event: event)) {
        case .signalDelivery: self = .signalDelivery(signal)
        case .groupStop: self = .groupStop
        default: self = .event
        }
    }
}

/// What the supervisor knows of the task that reported, as far as the routing needs it.
struct TaskFacts: Equatable, Sendable {
    /// The task is a processing worker; `workerKilledAtDeadline` when the supervisor killed it at its deadline.
    var isWorker = false
    var workerKilledAtDeadline = false
    /// The task is the crashed thread of a process released to die, whose other threads are held for the kill.
    var heldForKill = false
    /// The task is the main child (its thread-group leader), and the main child has exec'd the command.
    var isMain = false
    var mainExecuted = false
    /// The task belongs to a process released to die of its crash: nothing is left to learn at its exit stop.
    var dying = false
    /// Forks are followed beyond the main child's end (`SupervisorOptions.outlivesMainChild`).
    var outlivesMainChild = false
}

/// What the event loop does for one report.
enum StopAction: Equatable, Sendable {
    /// Nothing: a continue report, or a worker's stop.
    case nothing
    /// A processing worker ended this way.
    case workerEnded(WorkerOutcome)
    /// A crashed process's thread stopped again instead of dying (a pid namespace's init): the crash is
    /// reported, every thread is let go untraced.
    case detachSurvivor(ThreadStop)
    /// The task is gone: forget it; `recordsKill` when it is the main child killed by SIGKILL with no exit stop
    /// seen (the abnormal-exit record is made from this report).
    case taskEnded(WaitStatus, recordsKill: Bool)
    /// Deliver a signal that is no crash signal; `forwardable` when it may be the child's copy of a signal
    /// crashwatch also received (its sender is then noted, so forwarding does not send it twice).
    case deliver(Signal, forwardable: Bool)
    /// A crash signal: the thread's disposition decides (`verdict(for:disposition:)`).
    case judgeCrash(Signal)
    /// A group-stop: PTRACE_LISTEN; `mirrors` when it is the main child's after its exec, whose stop
    /// crashwatch may mirror (`SignalForwarder.mirrorStop`).
    case listen(mirrors: Bool)
    /// Resume without a signal (an event-stop, a dying thread's exit stop, clone, vfork-done).
    case resume
    /// The task exec'd: forget its handled faults and vfork, then resume.
    case exec
    /// An exit stop to judge by the exit status (`exitStopAction(for:)`).
    case exitStop
    /// A fork or vfork; `followsChild` when the child's pid is needed (a vfork, or `outlivesMainChild`).
    case fork(vfork: Bool, followsChild: Bool)
}

/// The action for one report, and whether the threads held for the kill of the task's process are let go first.
struct StopPlan: Equatable, Sendable {
    /// Let the threads held for the kill go before the action (the crashed thread's next report came).
    var releasesHeldThreads = false
    var action: StopAction
}

/// Decides what the loop does with `status`, reported by a task of which `facts` are known.
func routeStop(_ status: WaitStatus, facts: TaskFacts) -> StopPlan {
    let report = TaskReport(status)
    if facts.isWorker {
        guard case .ended(let end) = report else { return StopPlan(action: .nothing) }
        return StopPlan(action: .workerEnded(workerOutcome(end, killedAtDeadline: facts.workerKilledAtDeadline)))
    }
    var plan = StopPlan(releasesHeldThreads: facts.heldForKill, action: .nothing)
    switch report {
    case .ended(let end):
        var killed = false
        if case .signaled(let signal, _) = end, signal == Signal.kill.number { killed = facts.isMain }
        plan.action = .taskEnded(end, recordsKill: killed)
    case .continued:
        plan.action = .nothing
    case .signalDelivery(let signal):
        plan.action = signal.isCrash ? .judgeCrash(signal) : .deliver(signal, forwardable: forwardedSignalSet.contains(signal))
    case .groupStop:
        plan.action = .listen(mirrors: facts.isMain && facts.mainExecuted)
    case .eventStop, .otherEvent:
        plan.action = .resume
    case .exec:
        plan.action = .exec
    case .exit:
        plan.action = facts.dying ? .resume : .exitStop
    case .fork(let vfork):
        plan.action = .fork(vfork: vfork, followsChild: vfork || facts.outlivesMainChild)
    }
    // The crashed thread stopped again, not at its exit: it survived its fatal signal.
    if facts.heldForKill, case .stopped(let signal, let event) = status, event != PtraceEvent.exit {
        plan.action = .detachSurvivor(ThreadStop(signal: signal, event: event))
    }
    return plan
}

/// How a worker that ended with `status` did: killed at its deadline whatever it died of.
func workerOutcome(_ status: WaitStatus, killedAtDeadline: Bool) -> WorkerOutcome {
    if killedAtDeadline { return .deadlinePassed }
    switch status {
    case .signaled(let signal, _): return .killed(Signal(signal))
    case .exited(let code): return .exited(code)
    case .stopped, .continued: return .exited(0)  // not an end; routeStop passes only ends
    }
}

/// What an exit stop (of a task not already dying) leads to.
enum ExitStopAction: Equatable, Sendable {
    /// Let it exit.
    case resume
    /// A SIGKILL death, seen at its exit stop: the abnormal-exit record, with stacks if the observer asks.
    case recordKill
    /// A crash signal that reached no delivery stop (the kernel forced it: a seccomp kill): capture it, unless
    /// its process was reported already.
    case forcedCrash(Signal)
}

/// Judges an exit stop by the task's exit status (the PTRACE_EVENT_EXIT message).
func exitStopAction(for exitStatus: WaitStatus) -> ExitStopAction {
    guard case .signaled(let number, _) = exitStatus else { return .resume }
    let signal = Signal(number)
    if signal == .kill { return .recordKill }
    return signal.isCrash ? .forcedCrash(signal) : .resume
}

/// Which handled fault a fatal crash signal continues, and which thread crashed.
///
/// `faults` are the process's handled faults that may still be active, oldest first. The root is the oldest of
/// the crashed thread's own; for a signal the process sent itself (`kill(getpid())`, `raise` from a handler,
/// redis) the oldest of any thread's, whose thread is then the crashed one.
func attributeCrash(tid: Int32, faults: [HandledFault], selfSent: Bool) -> (original: HandledFault?, crashedTID: Int32) {
    let original = faults.first { $0.tid == tid } ?? (selfSent ? faults.first : nil)
    return (original, selfSent ? original?.tid ?? tid : tid)
}
