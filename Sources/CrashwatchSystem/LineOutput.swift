// LineOutput.swift — the stderr (or stdout) writer thread: lines handed to a `HelperThread` so that the tracer
// never waits on a stream the supervised program shares and may have stopped reading.
import Glibc
import Synchronization

/// Lines for a standard stream that the writer never waits on: a stream shared with the supervised program
/// (a pipe it filled and nobody reads, a stopped terminal, a journald stream that stalls) can block a write
/// for as long as it likes, and the tracer thread must not wait on it while it holds a crashed process or
/// while other processes wait for it. Once `start()`ed, lines are written in order by a `HelperThread` of
/// their own (at most `capacity` bytes waiting: past that they are dropped and counted); before, each is
/// written at once, as `StandardStream` does.
public final class LineOutput: Sendable {
    private struct Pending {
        var bytes = 0
        var dropped = 0
        var last: HelperTask?
    }

    private let fd: Int32
    private let capacity: Int
    private let thread = Mutex<HelperThread?>(nil)
    private let pending = Mutex(Pending())

    public init(fd: Int32, capacity: Int = 1 << 20) {
        self.fd = fd
        self.capacity = capacity
    }

    /// Starts the writing thread; false when none could be started (lines are then written at once).
    /// A thread started before the supervised command would change what it inherits: call it after.
    @discardableResult
    public func start() -> Bool {
        guard let started = HelperThread.start() else { return false }
        thread.withLock { $0 = started }
        return true
    }

    /// Writes `text` (whole lines), or hands it to the thread; never waits once started.
    public func write(_ text: String) {
        guard let thread = thread.withLock({ $0 }) else { return StandardStream.write(fd, text) }
        let count = text.utf8.count
        let accepted = pending.withLock { pending -> Bool in
            guard pending.bytes + count <= capacity else {
                pending.dropped += 1
                return false
            }
            pending.bytes += count
            return true
        }
        if accepted { hand(text, bytes: count, to: thread) }
    }

    /// Waits until every line handed over is written (and a count of the dropped ones), or the monotonic
    /// clock reaches `deadline` (nanoseconds); whether they all were.
    @discardableResult
    public func flush(until deadline: Int64) -> Bool {
        if let thread = thread.withLock({ $0 }), pending.withLock({ $0.dropped }) > 0 { hand(nil, bytes: 0, to: thread) }
        guard let last = pending.withLock({ $0.last }) else { return true }
        return last.wait(until: deadline)
    }

    /// Queues `text` (nil: only the count of lines dropped before it) on `thread`.
    private func hand(_ text: String?, bytes: Int, to thread: HelperThread) {
        let work: @Sendable () -> Void = { [self] in
            let dropped = pending.withLock { pending in
                defer { pending.dropped = 0 }
                return pending.dropped
            }
            if dropped > 0 {
                StandardStream.write(fd, "crashwatch: \(dropped) line(s) to this stream were dropped: it was not being read\n")
            }
            if let text { StandardStream.write(fd, text) }
            pending.withLock { $0.bytes -= bytes }
        }
        // Submitted under the lock, so that `last` is the last line of all, whichever thread hands one over.
        pending.withLock { $0.last = thread.submit(work) }
    }
}
