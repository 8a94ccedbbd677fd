// WatchdogPingsTests.swift — when a silence of the program's watchdog pings becomes a hang capture: half the
// timeout after the last ping, once per silence, and never sooner than ten seconds after the last capture.
@testable import CrashwatchSupervisor
import CrashwatchSystem
import Testing

@Suite struct WatchdogPingsTests {
    @Test("no watchdog or no ping yet: nothing is due")
    func nothingDue() {
        var pings = WatchdogPings()
        #expect(pings.hangDue == nil && !pings.isSilent)
        pings.ping()
        #expect(pings.hangDue == nil, "a ping without a timeout arms nothing")
        pings.timeout = 2_000_000_000
        #expect(pings.hangDue != nil)
    }

    @Test("due half the timeout after the last ping; once per silence; a new ping re-arms")
    func halfTimeout() throws {
        var pings = WatchdogPings()
        pings.timeout = 2_000_000_000
        pings.ping()
        let last = try #require(pings.lastPing)
        #expect(pings.hangDue == last.monotonic + 1_000_000_000)
        pings.captured()
        #expect(pings.hangDue == nil, "captured: not again in the same silence")
        pings.ping()
        #expect(pings.hangDue != nil)
    }

    @Test("a program that pings with a tiny timeout cannot have its hangs captured more than once per 10 s")
    func rateLimited() throws {
        var pings = WatchdogPings()
        pings.timeout = 1_000  // 1 µs
        pings.ping()
        pings.captured()
        let captured = try #require(pings.lastCapture)
        pings.ping()
        let due = try #require(pings.hangDue)
        #expect(due >= captured + WatchdogPings.minimumCaptureInterval)
    }
}
