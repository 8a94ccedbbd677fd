// StopRoutingTests.swift — what the event loop does at each waitpid report, read from raw status words as the
// kernel gives them to a seizing tracer (PITFALLS.md "ptrace and processes"): signal-delivery-stops,
// group-stops, PTRACE_EVENT_* stops and exits, for the main child, its threads, workers and crashed processes;
// and the crash decisions taken at a delivery-stop and at an exit stop. No ptrace: a scripted event source.
@testable import CrashwatchSupervisor
import CrashwatchModel
import CrashwatchSystem
import Testing

/// Raw waitpid status words, built the way the kernel builds them.
private enum Raw {
    static func exited(_ code: Int32) -> Int32 { (code & 0xff) << 8 }
    static func killed(_ signal: Signal, core: Bool = false) -> Int32 { signal.number | (core ? 0x80 : 0) }
    /// A ptrace stop: `signal` in bits 8–15, the PTRACE_EVENT_* in bits 16–23 (`status >> 16`).
    static func stopped(_ signal: Signal, event: Int32 = 0) -> Int32 { 0x7f | signal.number << 8 | event << 16 }
}

/// A fake event source: the reports a script of raw status words yields, routed one by one with what the
/// supervisor knows of each task.
private struct ScriptedEvents {
    var script: [(tid: Int32, raw: Int32)]
    var facts: (Int32) -> TaskFacts

    func routed() -> [StopPlan] {
        script.map { routeStop(WaitEvent(pid: $0.tid, status: WaitStatus(raw: $0.raw)).status, facts: facts($0.tid)) }
    }
}

private let mainPID: Int32 = 100

private func mainFacts(executed: Bool = true) -> (Int32) -> TaskFacts {
    { tid in TaskFacts(isMain: tid == mainPID, mainExecuted: executed) }
}

private func route(_ raw: Int32, _ facts: TaskFacts = TaskFacts()) -> StopAction {
    routeStop(WaitStatus(raw: raw), facts: facts).action
}

@Suite struct StopRoutingTests {
    @Test("a seized child's start: SIGSTOP group-stop, SIGTRAP event-stop, SIGCONT delivery, exec — none mirrored")
    func spawnSequence() {
        let start = ScriptedEvents(script: [
            (mainPID, Raw.stopped(.stop, event: PtraceEvent.stop)),
            (mainPID, Raw.stopped(.trap, event: PtraceEvent.stop)),
            (mainPID, Raw.stopped(.cont)),
            (mainPID, Raw.stopped(.trap, event: PtraceEvent.exec)),
        ], facts: mainFacts(executed: false))
        #expect(start.routed().map(\.action) == [
            .listen(mirrors: false), .resume, .deliver(.cont, forwardable: true), .exec,
        ])
    }

    @Test("signal-delivery-stops pass non-crash signals on; forwardable ones are flagged for the duplicate check")
    func signalDelivery() {
        #expect(route(Raw.stopped(.usr1)) == .deliver(.usr1, forwardable: true))
        #expect(route(Raw.stopped(.term)) == .deliver(.term, forwardable: true))
        #expect(route(Raw.stopped(.pipe)) == .deliver(.pipe, forwardable: false))
        #expect(route(Raw.stopped(.chld)) == .deliver(.chld, forwardable: false))
        #expect(route(Raw.stopped(Signal(34))) == .deliver(Signal(34), forwardable: false), "a real-time signal")
    }

    @Test("a stop signal at event 0 is its delivery-stop (seized: the group-stop follows as PTRACE_EVENT_STOP)")
    func stopSignalDelivery() {
        for signal in [Signal.stop, .tstp, .ttin, .ttou] {
            #expect(route(Raw.stopped(signal)) == .deliver(signal, forwardable: signal != .stop))
            #expect(ThreadStop(signal: signal.number, event: 0) == .signalDelivery(signal.number))
        }
    }

    @Test(arguments: Array(Signal.crashSignals))
    func crashSignalsAreJudged(_ signal: Signal) {
        #expect(route(Raw.stopped(signal)) == .judgeCrash(signal))
    }

    @Test("group-stops are listened to; only the main child's after its exec is mirrored")
    func groupStops() {
        for signal in [Signal.stop, .tstp, .ttin, .ttou] {
            let raw = Raw.stopped(signal, event: PtraceEvent.stop)
            #expect(route(raw, TaskFacts(isMain: true, mainExecuted: true)) == .listen(mirrors: true))
            #expect(route(raw, TaskFacts(isMain: true, mainExecuted: false)) == .listen(mirrors: false))
            #expect(route(raw, TaskFacts(isMain: false, mainExecuted: true)) == .listen(mirrors: false), "another thread or process")
            #expect(ThreadStop(signal: signal.number, event: PtraceEvent.stop) == .groupStop)
        }
    }

    @Test("a PTRACE_EVENT_STOP of SIGTRAP (new thread, interrupt, wake after SIGCONT) is resumed, never listened to")
    func eventStop() {
        #expect(route(Raw.stopped(.trap, event: PtraceEvent.stop), TaskFacts(isMain: true, mainExecuted: true)) == .resume)
        #expect(ThreadStop(signal: Signal.trap.number, event: PtraceEvent.stop) == .event)
    }

    @Test("PTRACE_EVENT_* stops: exec, exit, fork and vfork, and the rest resumed")
    func ptraceEvents() {
        #expect(route(Raw.stopped(.trap, event: PtraceEvent.exec)) == .exec)
        #expect(route(Raw.stopped(.trap, event: PtraceEvent.exit)) == .exitStop)
        #expect(route(Raw.stopped(.trap, event: PtraceEvent.exit), TaskFacts(dying: true)) == .resume, "released to die")
        #expect(route(Raw.stopped(.trap, event: PtraceEvent.fork)) == .fork(vfork: false, followsChild: false))
        #expect(route(Raw.stopped(.trap, event: PtraceEvent.fork), TaskFacts(outlivesMainChild: true))
            == .fork(vfork: false, followsChild: true))
        #expect(route(Raw.stopped(.trap, event: PtraceEvent.vfork)) == .fork(vfork: true, followsChild: true))
        #expect(route(Raw.stopped(.trap, event: 3)) == .resume, "clone: the new thread reports its own stop")
        #expect(route(Raw.stopped(.trap, event: 5)) == .resume, "vfork-done")
        for event in [PtraceEvent.exec, PtraceEvent.exit, PtraceEvent.fork, 3] {
            #expect(ThreadStop(signal: Signal.trap.number, event: event) == .event)
        }
    }

    @Test("exits: a task's end is recorded; a SIGKILL of the main child makes the abnormal-exit record")
    func exits() {
        #expect(route(Raw.exited(3), TaskFacts(isMain: true)) == .taskEnded(.exited(code: 3), recordsKill: false))
        #expect(route(Raw.killed(.kill), TaskFacts(isMain: true)) == .taskEnded(.signaled(signal: 9, coreDumped: false), recordsKill: true))
        #expect(route(Raw.killed(.kill)) == .taskEnded(.signaled(signal: 9, coreDumped: false), recordsKill: false), "a thread or an orphan")
        #expect(route(Raw.killed(.segv, core: true), TaskFacts(isMain: true))
            == .taskEnded(.signaled(signal: 11, coreDumped: true), recordsKill: false), "a crash was judged at its delivery")
        #expect(route(0xffff) == .nothing, "continued")
    }

    @Test("a worker's end is its job's outcome, killed at the deadline whatever it died of; its stops are ignored")
    func workers() {
        let worker = TaskFacts(isWorker: true)
        #expect(route(Raw.exited(0), worker) == .workerEnded(.exited(0)))
        #expect(route(Raw.killed(.segv), worker) == .workerEnded(.killed(.segv)))
        #expect(route(Raw.killed(.kill), TaskFacts(isWorker: true, workerKilledAtDeadline: true)) == .workerEnded(.deadlinePassed))
        #expect(route(Raw.stopped(.stop, event: PtraceEvent.stop), worker) == .nothing)
        #expect(!routeStop(WaitStatus(raw: Raw.exited(0)), facts: TaskFacts(isWorker: true, heldForKill: true)).releasesHeldThreads)
    }

    @Test("a crashed thread whose others are held: its exit lets them go; stopping again instead means it survived")
    func heldForKill() {
        let held = TaskFacts(heldForKill: true)
        let exitStop = routeStop(WaitStatus(raw: Raw.stopped(.trap, event: PtraceEvent.exit)), facts: held)
        #expect(exitStop == StopPlan(releasesHeldThreads: true, action: .exitStop))
        let gone = routeStop(WaitStatus(raw: Raw.killed(.segv)), facts: held)
        #expect(gone == StopPlan(releasesHeldThreads: true, action: .taskEnded(.signaled(signal: 11, coreDumped: false), recordsKill: false)))
        let again = routeStop(WaitStatus(raw: Raw.stopped(.segv)), facts: held)
        #expect(again == StopPlan(releasesHeldThreads: true, action: .detachSurvivor(.signalDelivery(11))))
        let groupStopped = routeStop(WaitStatus(raw: Raw.stopped(.stop, event: PtraceEvent.stop)), facts: held)
        #expect(groupStopped.action == .detachSurvivor(.groupStop))
        #expect(!routeStop(WaitStatus(raw: Raw.stopped(.segv)), facts: TaskFacts()).releasesHeldThreads)
    }

    @Test("an exit stop: SIGKILL is an abnormal exit, a crash signal with no delivery-stop a forced crash")
    func exitStops() {
        #expect(exitStopAction(for: .exited(code: 0)) == .resume)
        #expect(exitStopAction(for: .signaled(signal: Signal.kill.number, coreDumped: false)) == .recordKill)
        #expect(exitStopAction(for: .signaled(signal: Signal.sys.number, coreDumped: true)) == .forcedCrash(.sys))
        #expect(exitStopAction(for: .signaled(signal: Signal.term.number, coreDumped: false)) == .resume)
    }

    @Test("the crash decision at a delivery-stop: the thread's disposition decides fatal, remembered or passed")
    func crashDecision() {
        guard case .judgeCrash(let signal) = route(Raw.stopped(.segv)) else { Issue.record("not judged"); return }
        #expect(verdict(for: signal, disposition: .default) == .fatal)
        #expect(verdict(for: signal, disposition: .handled) == .rememberAndDeliver)
        #expect(verdict(for: signal, disposition: .ignored) == .passThrough)
    }

    @Test("the crashed thread and original fault: its own oldest; a self-sent signal takes any thread's oldest")
    func attribution() {
        let faults = [fault(tid: 7, at: 1), fault(tid: 8, at: 2), fault(tid: 8, at: 3)]
        let own = attributeCrash(tid: 8, faults: faults, selfSent: false)
        #expect(own.original?.timeNanoseconds == 2 && own.crashedTID == 8)
        let other = attributeCrash(tid: 9, faults: faults, selfSent: false)
        #expect(other.original == nil && other.crashedTID == 9, "another thread's handled fault is not this crash's")
        let raised = attributeCrash(tid: 9, faults: faults, selfSent: true)
        #expect(raised.original?.tid == 7 && raised.crashedTID == 7, "kill(getpid()) after thread 7's fault")
        let plain = attributeCrash(tid: 9, faults: [], selfSent: true)
        #expect(plain.original == nil && plain.crashedTID == 9)
    }
}

private func fault(tid: Int32, at time: Int64) -> HandledFault {
    HandledFault(tid: tid, signal: SignalInfo(signo: 11, code: 1), timeNanoseconds: time, registers: [])
}
