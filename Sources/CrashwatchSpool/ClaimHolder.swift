// ClaimHolder.swift — who holds a claim: a process's pid and start time (`/proc/PID/stat` field 22, through
// `ProcStat`), written `<pid>-<start ticks>` in a claim's name, and whether that process still runs.
import CrashwatchModel
import CrashwatchSystem

/// The process holding a claim: its pid and its start time, so a dead holder is recognised even after the
/// kernel reuses its pid.
///
/// In a claim's file name the holder is `<pid>-<start ticks>`, e.g. `4242-1234567`. Start ticks are field 22
/// of `/proc/PID/stat` (clock ticks after boot). Liveness is judged through this machine's `/proc` and
/// `kill(pid, 0)`, so every reader of one spool must share a pid namespace.
public struct ClaimHolder: Hashable, Sendable, CustomStringConvertible {
    /// The holder's process id.
    public let pid: Int32
    /// When the holder started, in clock ticks after boot (`/proc/PID/stat` field 22).
    public let startTicks: UInt64

    /// A holder from its parts (for tests, or a holder read from elsewhere).
    public init(pid: Int32, startTicks: UInt64) {
        self.pid = pid
        self.startTicks = startTicks
    }

    /// The holder identity of running process `pid`, read from `/proc/PID/stat`; lets a script's helper
    /// claim on behalf of the long-lived script (`crashwatch claim --holder $$`).
    public init(process pid: Int32) throws(SystemError) {
        guard pid > 0 else { throw SystemError.invalidData("claim holder pid \(pid)", pid: pid) }
        let text = try ProcFS.readText("/proc/\(pid)/stat")
        guard let ticks = ProcessClock.startTicks(statText: text) else {
            throw SystemError.invalidData("parse /proc/\(pid)/stat", pid: pid)
        }
        self.init(pid: pid, startTicks: ticks)
    }

    /// The calling process as a holder (`getpid` and `/proc/self/stat`).
    public static func current() throws(SystemError) -> ClaimHolder {
        let pid = ProcessProbe.currentID
        let text = try ProcFS.readText("/proc/self/stat")
        guard let ticks = ProcessClock.startTicks(statText: text) else {
            throw SystemError.invalidData("parse /proc/self/stat", pid: pid)
        }
        return ClaimHolder(pid: pid, startTicks: ticks)
    }

    /// Parses `<pid>-<start ticks>` (decimal, no signs, no leading zeros); anything else is nil.
    public init?(parsing text: some StringProtocol) {
        let parts = String(text).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let pid = decimalNumber(parts[0], maxDigits: 19, leadingZeros: false), pid > 0,
              pid <= UInt64(Int32.max), let ticks = decimalNumber(parts[1], maxDigits: 19, leadingZeros: false)
        else { return nil }
        self.init(pid: Int32(pid), startTicks: ticks)
    }

    /// The holder as it appears in a claim's file name: `<pid>-<start ticks>`.
    public var text: String { "\(pid)-\(startTicks)" }

    /// The same as `text`.
    public var description: String { text }

    /// Whether the holder still runs: its pid exists, is not a zombie, and started at `startTicks`.
    ///
    /// When `/proc/PID/stat` cannot be read (e.g. `/proc` mounted with `hidepid`), a pid that `kill(pid, 0)`
    /// still finds counts as alive: a claim is only taken over when its holder is surely gone.
    public var isAlive: Bool {
        do {
            return Self.isAlive(statText: try ProcFS.readText("/proc/\(pid)/stat"), startTicks: startTicks)
        } catch {
            return ProcessProbe.exists(pid)
        }
    }

    /// Whether `/proc/PID/stat` text shows the process that started at `startTicks`, still running (not a
    /// zombie, state `Z`, nor dead, `X`); unparsable text counts as alive.
    static func isAlive(statText: String, startTicks: UInt64) -> Bool {
        guard let stat = ProcStat(text: statText), let ticks = stat.number(22) else { return true }
        guard ticks == startTicks else { return false }
        let state = stat.state
        return state != UInt8(ascii: "Z") && state != UInt8(ascii: "X") && state != UInt8(ascii: "x")
    }
}
