// Clock.swift — the two clocks crashwatch reads: wall time for reports, monotonic time for deadlines.
import Glibc

/// Reads the system clocks.
public enum Clock {
    /// Wall-clock time (CLOCK_REALTIME) in nanoseconds since the Unix epoch.
    public static func realtimeNanoseconds() -> Int64 { read(CLOCK_REALTIME) }

    /// Monotonic time (CLOCK_MONOTONIC) in nanoseconds; only differences mean anything.
    public static func monotonicNanoseconds() -> Int64 { read(CLOCK_MONOTONIC) }

    /// Sleeps the calling thread for about `nanoseconds` (a signal may end it early).
    public static func sleep(nanoseconds: Int64) {
        var spec = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        _ = nanosleep(&spec, nil)
    }

    private static func read(_ clock: clockid_t) -> Int64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
