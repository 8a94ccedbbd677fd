// HelperThreadTests.swift — the helper thread a capture hands its /proc reads and its minimal report to:
// work runs in order on one other thread with every signal blocked, a late helper is not waited for past
// the deadline, and without a helper the work is done on the calling thread.
import CrashwatchSystem
import Dispatch
import Glibc
import Synchronization
import Testing

@Suite struct HelperThreadTests {
    /// The calling thread's pthread id.
    static func threadID() -> UInt { pthread_self() }

    @Test("work runs in submission order on one thread other than the caller's, with the process's signals blocked")
    func order() throws {
        let helper = try #require(HelperThread.start())
        let seen = Mutex<[(Int, UInt, Bool)]>([])
        var tasks: [HelperTask] = []
        for index in 0..<20 {
            tasks.append(helper.submit {
                var mask = sigset_t()
                pthread_sigmask(SIG_BLOCK, nil, &mask)
                let allBlocked = [SIGTERM, SIGCHLD, SIGINT, SIGUSR1, SIGHUP, SIGWINCH].allSatisfy { sigismember(&mask, $0) == 1 }
                seen.withLock { $0.append((index, Self.threadID(), allBlocked)) }
            })
        }
        let deadline = Clock.monotonicNanoseconds() + 5_000_000_000
        for task in tasks { #expect(task.wait(until: deadline)) }
        // Done stays done.
        #expect(tasks[0].wait(until: 0))
        let record = seen.withLock { $0 }
        #expect(record.map(\.0) == Array(0..<20))
        #expect(Set(record.map(\.1)).count == 1)
        #expect(record[0].1 != Self.threadID())
        #expect(record.allSatisfy { $0.2 })
    }

    @Test("a computation the helper has not finished by the deadline: wait gives nil, value computes it here")
    func lateHelper() throws {
        let helper = try #require(HelperThread.start())
        let release = DispatchSemaphore(value: 0)
        // The helper is busy until released: what is submitted behind it cannot finish.
        helper.submit { release.wait() }
        let caller = Self.threadID()
        let late = HelperComputation(on: helper) { Self.threadID() }
        #expect(late.wait(until: Clock.monotonicNanoseconds() + 20_000_000) == nil)
        let (value, fromHelper) = late.value(until: Clock.monotonicNanoseconds() + 20_000_000)
        #expect(value == caller)
        #expect(!fromHelper)
        release.signal()
        // Once the helper gets to it, it is computed there.
        let done = try #require(late.wait(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        #expect(done != caller)
    }

    @Test("without a helper the computation runs at once on the calling thread")
    func noHelper() {
        let ran = Mutex(0)
        let computation = HelperComputation(on: nil) { ran.withLock { $0 += 1; return Self.threadID() } }
        #expect(ran.withLock { $0 } == 1)
        let (value, fromHelper) = computation.value(until: 0)
        #expect(value == Self.threadID())
        #expect(!fromHelper)
        #expect(ran.withLock { $0 } == 1)
    }
}
