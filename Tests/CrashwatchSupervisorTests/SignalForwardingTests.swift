// SignalForwardingTests.swift — which signals sent to crashwatch reach the child, and how often (DESIGN.md
// "Transparent wrapper"): the terminal's never twice, a process's not when the child got the same sender's
// copy (pending, or seen at a delivery-stop, even one still waiting in waitpid), the service manager's after
// a grace; and the job-control mirroring rules. A fake target stands for the child, waitpid and crashwatch.
@testable import CrashwatchSupervisor
import CrashwatchModel
import CrashwatchSystem
import Testing

/// The world forwarding sees, scripted: the child's pending set, the stops waiting in waitpid and their
/// senders, the clock; and what forwarding did to it.
private final class FakeTarget: ForwardingTarget {
    static let main: Int32 = 100
    var sharesGroup = true
    var pending: UInt64? = 0
    var waitingStops: [WaitEvent] = []
    var senders: [Int32: Int32] = [:]
    var mainThreads: Set<Int32> = [main, main + 1]
    var copyWaiting = false
    var watchdogIsSilent = false
    var now: Int64 = 1_000_000_000

    private(set) var sent: [Signal] = []
    private(set) var stoppedWith: [Signal] = []
    private(set) var hangCaptures = 0
    private(set) var setAside: [WaitEvent] = []

    func childSharesSupervisorGroup() -> Bool { sharesGroup }
    func childPendingSignals() -> UInt64? { pending }
    func setAsideWaitingStops() throws(SystemError) -> [WaitEvent] {
        defer { waitingStops = [] }
        setAside += waitingStops
        return waitingStops
    }
    func senderOfDelivery(to tid: Int32) -> Int32? { senders[tid] }
    func isMainChildThread(_ tid: Int32) -> Bool { mainThreads.contains(tid) }
    func receivedCopyWaiting(_ signal: Signal) -> Bool { copyWaiting }
    func captureHang() throws(SystemError) { hangCaptures += 1 }
    func sendOn(_ signal: Signal) throws(SystemError) { sent.append(signal) }
    func stopSelf(with signal: Signal) { stoppedWith.append(signal) }
    func monotonicNanoseconds() -> Int64 { now }
}

/// What the terminal driver sends (`SI_KERNEL`), and what a process sends with kill(2) (`SI_USER`).
private func terminal(_ signal: Signal) -> ReceivedSignal { ReceivedSignal(signal: signal, code: 0x80, senderPID: 0) }
private func from(_ sender: Int32, _ signal: Signal) -> ReceivedSignal { ReceivedSignal(signal: signal, code: 0, senderPID: sender) }
private func bit(_ signal: Signal) -> UInt64 { UInt64(1) << UInt64(signal.number - 1) }
private let grace: Int64 = 100_000_000

@Suite struct SignalForwardingTests {
    @Test("the forwarded set: termination, interactive, job-control and user signals; never SIGKILL, SIGSTOP, SIGCHLD")
    func forwardedSet() {
        #expect(Set(forwardedSignals) == [.term, .int, .hup, .quit, .abrt, .usr1, .usr2, .winch, .alrm, .cont, .tstp, .ttin, .ttou])
        for never in [Signal.kill, .stop, .chld, .segv, .pipe] { #expect(!forwardedSignalSet.contains(never)) }
    }

    @Test("a signal from a process is sent on once; SIGCHLD never")
    func fromProcess() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        try forwarder.forward([from(4242, .term), from(4242, .chld), from(4242, .usr1)], to: target)
        #expect(target.sent == [.term, .usr1])
    }

    @Test("the terminal's signals are not sent again when the child shares crashwatch's process group")
    func terminalSignals() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        try forwarder.forward([terminal(.int), terminal(.winch), terminal(.quit)], to: target)
        #expect(target.sent.isEmpty)
        target.sharesGroup = false  // the program runs in a process group of its own
        try forwarder.forward([terminal(.int)], to: target)
        #expect(target.sent == [.int])
    }

    @Test("not twice: a copy still pending in the child is not sent again")
    func pendingInChild() throws {
        let target = FakeTarget()
        target.pending = bit(.hup)
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        try forwarder.forward([from(4242, .hup), from(4242, .usr2)], to: target)
        #expect(target.sent == [.usr2])
    }

    @Test("not twice: a delivery the child took from the same sender answers for one received copy")
    func seenAtDeliveryStop() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        forwarder.noteDelivery(tid: FakeTarget.main + 1, signal: .term, sender: 4242, now: target.now)
        try forwarder.forward([from(4242, .term)], to: target)
        #expect(target.sent.isEmpty, "the child's thread already took it")
        try forwarder.forward([from(4242, .term)], to: target)
        #expect(target.sent == [.term], "a second copy is a second signal")
        forwarder.noteDelivery(tid: FakeTarget.main, signal: .term, sender: 777, now: target.now)
        try forwarder.forward([from(4242, .term)], to: target)
        #expect(target.sent == [.term, .term], "another sender's delivery does not count")
    }

    @Test("not twice: a delivery-stop still waiting in waitpid is found, noted and set aside for the loop")
    func deliveryStillInWaitpid() throws {
        let target = FakeTarget()
        target.waitingStops = [WaitEvent(pid: FakeTarget.main, status: .stopped(signal: Signal.usr1.number, event: 0)),
                               WaitEvent(pid: 555, status: .exited(code: 0))]
        target.senders[FakeTarget.main] = 4242
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        try forwarder.forward([from(4242, .usr1)], to: target)
        #expect(target.sent.isEmpty)
        #expect(target.setAside.count == 2, "every report is kept for the event loop")
    }

    @Test("a delivery to another process, a self-sent one, or one without a sender is not the child's copy")
    func otherDeliveries() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        forwarder.noteDelivery(tid: 900, signal: .term, sender: 4242, now: target.now)  // not a main-child thread
        forwarder.noteDelivery(tid: FakeTarget.main, signal: .term, sender: FakeTarget.main, now: target.now)
        forwarder.noteDelivery(tid: FakeTarget.main, signal: .term, sender: nil, now: target.now)
        try forwarder.forward([from(4242, .term), from(FakeTarget.main, .term)], to: target)
        #expect(target.sent == [.term, .term])
    }

    @Test("deliveries are remembered for a second at most")
    func deliveriesExpire() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        forwarder.noteDelivery(tid: FakeTarget.main, signal: .term, sender: 4242, now: target.now)
        forwarder.noteDelivery(tid: FakeTarget.main, signal: .hup, sender: 4242, now: target.now + 1_500_000_000)
        try forwarder.forward([from(4242, .term)], to: target)
        #expect(target.sent == [.term])
    }

    @Test("a delivery is worth noting only while a received copy may be waiting to be forwarded")
    func mayBeCopy() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        #expect(!forwarder.mayBeForwardedCopy(.term, target))
        target.copyWaiting = true
        #expect(forwarder.mayBeForwardedCopy(.term, target))
        target.copyWaiting = false
        try forwarder.forward([from(1, .term)], to: target)
        #expect(forwarder.mayBeForwardedCopy(.usr1, target), "the service manager's signal waits for the child's copy")
    }

    @Test("the service manager's signal waits its grace for the child's own copy, then is sent")
    func serviceManagerGrace() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        try forwarder.forward([from(1, .term)], to: target)
        #expect(target.sent.isEmpty && forwarder.pendingForwardDues == [target.now + grace])
        target.now += grace - 1
        try forwarder.settlePendingForwards(to: target)
        #expect(target.sent.isEmpty && forwarder.hasPendingForwards)
        target.now += 1
        try forwarder.settlePendingForwards(to: target)
        #expect(target.sent == [.term] && !forwarder.hasPendingForwards)
    }

    @Test("the service manager's signal is not sent when the child's copy shows during the grace")
    func serviceManagerCopyArrives() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        try forwarder.forward([from(1, .term)], to: target)
        target.waitingStops = [WaitEvent(pid: FakeTarget.main, status: .stopped(signal: Signal.term.number, event: 0))]
        target.senders[FakeTarget.main] = 1
        target.now += grace
        try forwarder.settlePendingForwards(to: target)
        #expect(target.sent.isEmpty && !forwarder.hasPendingForwards)
    }

    @Test("systemd's watchdog signal captures the hang first when the pings stopped; other senders' do not")
    func watchdogSignal() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        target.watchdogIsSilent = true
        try forwarder.forward([from(4242, .abrt), from(1, .term)], to: target)
        #expect(target.hangCaptures == 0)
        try forwarder.forward([from(1, .abrt), from(1, .quit)], to: target)
        #expect(target.hangCaptures == 2)
        target.watchdogIsSilent = false
        try forwarder.forward([from(1, .abrt)], to: target)
        #expect(target.hangCaptures == 2)
    }

    @Test("a job-control stop is mirrored only once the main child is group-stopped; SIGCONT cancels it")
    func jobControlMirroring() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        try forwarder.forward([terminal(.tstp)], to: target)
        #expect(target.stoppedWith.isEmpty && forwarder.stopRequest == .tstp, "the program has not stopped yet")
        forwarder.mainGroupStopped = true
        try forwarder.forward([], to: target)
        #expect(target.stoppedWith == [.tstp] && forwarder.stopRequest == nil, "mirrored once")
        try forwarder.forward([], to: target)
        #expect(target.stoppedWith == [.tstp])

        forwarder.mainGroupStopped = false
        try forwarder.forward([from(4242, .ttin), from(4242, .cont)], to: target)
        forwarder.mainGroupStopped = true
        try forwarder.forward([], to: target)
        #expect(target.stoppedWith == [.tstp] && forwarder.stopRequest == nil, "a SIGCONT ended the request")
        #expect(target.sent == [.ttin, .cont], "a process's job-control signals are forwarded")
    }

    @Test("a stop for the program alone (its group-stop without a request) never stops crashwatch")
    func programAloneStopped() throws {
        let target = FakeTarget()
        let forwarder = SignalForwarder(serviceManagerGraceNanoseconds: grace)
        forwarder.mainGroupStopped = true
        try forwarder.forward([from(4242, .usr1)], to: target)
        #expect(target.stoppedWith.isEmpty)
    }

    @Test("the stop request: a stop signal sets it, SIGCONT clears it, anything else keeps it")
    func stopRequestRule() {
        for stop in [Signal.tstp, .ttin, .ttou, .stop] {
            #expect(SignalForwarder.stopRequest(after: stop, current: nil) == stop)
        }
        #expect(SignalForwarder.stopRequest(after: .cont, current: .tstp) == nil)
        #expect(SignalForwarder.stopRequest(after: .term, current: .tstp) == .tstp)
        #expect(SignalForwarder.stopRequest(after: .ttou, current: .tstp) == .ttou)
    }
}
