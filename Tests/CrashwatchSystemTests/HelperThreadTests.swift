// HelperThreadTests.swift — the helper thread a capture hands its /proc reads and its minimal report to:
// work runs in order on one other thread with every signal blocked, work it has not started is done by the
// caller that waits for it, a late helper is not waited for past the deadline, a caller about to exit can take
// the queue over, work not started can be withdrawn, and without a helper the work is done on
// the calling thread.
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

    @Test("a computation's value, however long it takes: the helper's once it ends, the caller's own when it had not started")
    func valueWaitsWhole() throws {
        let helper = try #require(HelperThread.start())
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let slow = HelperComputation(on: helper) { () -> UInt in
            started.signal()
            gate.wait()
            return Self.threadID()
        }
        started.wait()
        // Queued behind the slow one: not started when the caller asks for it, so the caller computes it.
        let queued = HelperComputation(on: helper) { Self.threadID() }
        #expect(queued.value() == Self.threadID())
        gate.signal()
        #expect(slow.value() != Self.threadID())
        #expect(HelperComputation(on: nil) { 7 }.value() == 7)
    }

    @Test("a computation the helper has not started is computed by the caller that waits for it, at once")
    func takenBack() throws {
        let helper = try #require(HelperThread.start())
        let release = DispatchSemaphore(value: 0)
        // The helper is busy until released: what is submitted behind it is not started.
        helper.submit { release.wait() }
        let caller = Self.threadID()
        let runs = Mutex(0)
        let queued = HelperComputation(on: helper) { runs.withLock { $0 += 1 }; return Self.threadID() }
        let before = Clock.monotonicNanoseconds()
        #expect(queued.wait(until: before + 5_000_000_000) == caller)
        #expect(Clock.monotonicNanoseconds() - before < 1_000_000_000, "not waited for the busy helper")
        release.signal()
        // The helper, once free, finds nothing left of it: it ran once, and the helper serves on.
        let later = helper.submit {}
        #expect(later.wait(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        #expect(runs.withLock { $0 } == 1)
        #expect(queued.wait(until: 0) == caller)
    }

    @Test("withdrawn work the helper has not started never runs and its task is done at once; started work cannot be withdrawn")
    func withdraw() throws {
        let helper = try #require(HelperThread.start())
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let running = helper.submit { started.signal(); release.wait() }
        let runs = Mutex(0)
        let queued = helper.submit { runs.withLock { $0 += 1 } }
        #expect(started.wait(timeout: .now() + 5) == .success)
        #expect(!helper.withdraw(running), "the running piece was withdrawn")
        #expect(helper.withdraw(queued))
        #expect(queued.wait(until: Clock.monotonicNanoseconds()), "a withdrawn task is not done at once")
        #expect(!helper.withdraw(queued), "withdrawn twice")
        release.signal()
        #expect(running.wait(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        let later = helper.submit {}
        #expect(later.wait(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        #expect(runs.withLock { $0 } == 0)
    }

    @Test("a computation the helper is running past the deadline: wait gives nil, value computes it again here")
    func lateHelper() throws {
        let helper = try #require(HelperThread.start())
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let runs = Mutex(0)
        let caller = Self.threadID()
        // The first run (the helper's) blocks until released; a run on the caller does not.
        let late = HelperComputation(on: helper) {
            if runs.withLock({ $0 += 1; return $0 }) == 1 {
                started.signal()
                release.wait()
            }
            return Self.threadID()
        }
        started.wait()
        #expect(late.wait(until: Clock.monotonicNanoseconds() + 20_000_000) == nil)
        let (value, fromHelper) = late.value(until: Clock.monotonicNanoseconds() + 20_000_000)
        #expect(value == caller)
        #expect(!fromHelper)
        release.signal()
        // Once the helper's run ends, its value is the computation's.
        let done = try #require(late.wait(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        #expect(done != caller)
    }

    @Test("runRemaining waits for the piece running, runs the queued rest here in order (what it submits too), and the thread serves again after")
    func runRemaining() throws {
        let helper = try #require(HelperThread.start())
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let seen = Mutex<[(String, UInt)]>([])
        @Sendable func note(_ name: String) { seen.withLock { $0.append((name, Self.threadID())) } }
        // The thread is busy with "first" until released; "second" and "third" wait behind it, and "second"
        // submits "fourth" as it runs.
        helper.submit { started.signal(); release.wait(); note("first") }
        started.wait()
        helper.submit { note("second"); helper.submit { note("fourth") } }
        helper.submit { note("third") }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { release.signal() }
        helper.runRemaining()
        let record = seen.withLock { $0 }
        #expect(record.map(\.0) == ["first", "second", "third", "fourth"])
        let caller = Self.threadID()
        #expect(record.first?.1 != caller, "the piece already running stays on the thread")
        #expect(record.dropFirst().allSatisfy { $0.1 == caller }, "the rest runs on the caller: \(record)")
        // The thread takes work again.
        let later = helper.submit { note("later") }
        #expect(later.wait(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        #expect(seen.withLock { $0.last.map { $0.0 == "later" && $0.1 != caller } } == true)
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
