// NotifyFilter.swift — which of a supervised program's sd_notify assignments the relay sends on to systemd,
// and whether the descriptors passed with them go too: one pure decision over a datagram's bytes.
//
// systemd believes what the service's main process tells it, and under `crashwatch run` that process is
// crashwatch. So the program may speak for itself — its state, its status and errors, its watchdog, its
// timeouts, its own descriptor store — and for nothing else: not for which process is the main one, and not
// for who else may talk to systemd.

/// What the relay does with one notification: the assignments it sends on, whether the descriptors go with
/// them, and what it learns for its own watchdog.
public struct NotifyDecision: Equatable, Sendable {
    /// The kept assignments, newline-separated, in the order they came; empty: nothing is sent.
    public var forwarded: [UInt8] = []
    /// Whether the passed descriptors are sent with them; if not, the relay closes them.
    public var passesDescriptors = false
    /// Whether a kept `WATCHDOG=1` pinged the watchdog.
    public var watchdogPing = false
    /// The watchdog timeout a kept `WATCHDOG_USEC=` set (nanoseconds), when it was a valid number.
    public var watchdogTimeoutNanoseconds: Int64?

    public init() {}
}

/// The relay's filter over the assignments systemd documents (sd_notify(3), systemd 259's list).
///
/// Each field, decided:
/// - Sent on: `READY=1`, `RELOADING=1`, `STOPPING=1`, `MONOTONIC_USEC=` (the service's own state and when it
///   changed), `STATUS=`, `ERRNO=`, `BUSERROR=`, `VARLINKERROR=`, `EXIT_STATUS=` (what it says of itself),
///   `WATCHDOG=1`, `WATCHDOG=trigger`, `WATCHDOG_USEC=`, `EXTEND_TIMEOUT_USEC=` (its watchdog and timeouts;
///   pings and the timeout are also noted for crashwatch's hang reports), `RESTART_RESET=1` (its restart
///   counter), `FDSTORE=1`, `FDSTOREREMOVE=1`, `FDNAME=`, `FDPOLL=` (its own descriptor store).
/// - Sent on only as `NOTIFYACCESS=none` or `NOTIFYACCESS=main`: those narrow who systemd listens to (main is
///   crashwatch, which relays); `exec` and `all` would let the program's processes write to systemd's socket
///   themselves, around this filter.
/// - Dropped: `MAINPID=`, `MAINPIDFDID=` and `MAINPIDFD=` — every main-PID change: crashwatch stays the main
///   process (systemd sees the program's end through crashwatch's), and systemd ≥ 256 would take the main PID
///   from a passed pidfd (one of PID 1, say); a message with `MAINPIDFD=` has its descriptors closed, whatever
///   else it holds. Also dropped: every other name (`X_…` extensions, systemd's own manager-to-manager fields,
///   anything unknown, lines without `=`): systemd ignores unknown names, so nothing a service may rely on is
///   lost, and nothing systemd may learn to read later goes through unexamined.
/// - Descriptors go only with a kept `FDSTORE=1`, and with `BARRIER=1`: sd_notify_barrier(3) sends it alone
///   with exactly one descriptor, which systemd closes once it has processed every earlier message — the
///   barrier's whole meaning, which the relay closing it would fake. systemd never uses that descriptor for
///   anything else, so it goes on only in that exact form (the one line, one descriptor); any other message
///   with `BARRIER=1` is one systemd ignores whole, and is dropped.
public enum NotifyFilter {
    /// Assignments sent on whatever their value.
    static let forwardedNames: Set<[UInt8]> = Set([
        "READY", "RELOADING", "STOPPING", "MONOTONIC_USEC", "STATUS", "ERRNO", "BUSERROR", "VARLINKERROR",
        "EXIT_STATUS", "WATCHDOG", "WATCHDOG_USEC", "EXTEND_TIMEOUT_USEC", "RESTART_RESET",
        "FDSTORE", "FDSTOREREMOVE", "FDNAME", "FDPOLL",
    ].map { Array($0.utf8) })
    /// The values of `NOTIFYACCESS=` sent on.
    static let narrowingAccess: Set<[UInt8]> = [Array("none".utf8), Array("main".utf8)]

    /// Decides what to send on of `bytes` (one datagram) that came with `descriptorCount` descriptors.
    public static func decide(_ bytes: [UInt8], descriptorCount: Int) -> NotifyDecision {
        var decision = NotifyDecision()
        let lines = bytes.split(separator: UInt8(ascii: "\n"))
        if lines.contains(where: { $0.elementsEqual("BARRIER=1".utf8) }) {
            if lines.count == 1 && descriptorCount == 1 {
                decision.forwarded = Array("BARRIER=1".utf8)
                decision.passesDescriptors = true
            }
            return decision
        }
        var kept: [ArraySlice<UInt8>] = []
        var storesDescriptors = false
        var namesMainPID = false
        for line in lines {
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = Array(line[..<equals])
            let value = line[(equals + 1)...]
            if name.elementsEqual("MAINPIDFD".utf8) { namesMainPID = true }
            if name.elementsEqual("NOTIFYACCESS".utf8) {
                if narrowingAccess.contains(Array(value)) { kept.append(line) }
                continue
            }
            guard forwardedNames.contains(name) else { continue }
            kept.append(line)
            if line.elementsEqual("FDSTORE=1".utf8) { storesDescriptors = true }
            if line.elementsEqual("WATCHDOG=1".utf8) { decision.watchdogPing = true }
            if name.elementsEqual("WATCHDOG_USEC".utf8), value.count <= 19, value.allSatisfy({ (48...57).contains($0) }),
               let usec = Int64(String(decoding: value, as: UTF8.self)), usec > 0, usec < Int64.max / 1_000 {
                decision.watchdogTimeoutNanoseconds = usec * 1_000
            }
        }
        decision.forwarded = Array(kept.joined(separator: [UInt8(ascii: "\n")]))
        decision.passesDescriptors = descriptorCount > 0 && storesDescriptors && !namesMainPID
        return decision
    }
}
