// WorkerGateTests.swift — the gate a processing worker waits at while `run` finishes its input: the
// worker's wait lasts until the gate is opened, says whether to go on, and ends (go no further) when the
// gate is dropped unopened.
import CrashwatchSystem
import Dispatch
import Glibc
import Synchronization
import Testing

@Suite struct WorkerGateTests {
    /// A wait at a gate on another thread.
    final class Waiter: Sendable {
        let ended = DispatchSemaphore(value: 0)
        let result = Mutex<Bool?>(nil)

        init(_ gate: WorkerGate) {
            let fd = gate.workerEnd.fd
            DispatchQueue.global().async { [self] in
                let proceed = WorkerGate.wait(fd: fd)
                result.withLock { $0 = proceed }
                ended.signal()
            }
        }
    }

    @Test("the wait lasts until the gate opens, and then says go on; opening again changes nothing")
    func proceed() throws {
        let gate = try WorkerGate()
        let waiter = Waiter(gate)
        #expect(waiter.ended.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        gate.open(proceed: true)
        #expect(waiter.ended.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(waiter.result.withLock { $0 } == true)
        gate.open(proceed: false)
        #expect(WorkerGate.wait(fd: gate.workerEnd.fd))
    }

    @Test("a gate opened to end the worker, or dropped without being opened, says go no further")
    func end() throws {
        let refused = try WorkerGate()
        let waiter = Waiter(refused)
        refused.open(proceed: false)
        #expect(waiter.ended.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(waiter.result.withLock { $0 } == false)

        var dropped: WorkerGate? = try WorkerGate()
        let workerEnd = try #require(dropped?.workerEnd)
        dropped = nil
        #expect(!WorkerGate.wait(fd: workerEnd.fd))
    }

    @Test("the worker's end is close-on-exec here: only the worker it is passed to gets it")
    func closeOnExec() throws {
        let gate = try WorkerGate()
        #expect(fcntl(gate.workerEnd.fd, F_GETFD) & FD_CLOEXEC != 0)
    }
}
