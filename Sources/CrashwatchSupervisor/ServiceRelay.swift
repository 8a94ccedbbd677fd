// ServiceRelay.swift — the sd_notify relay between the program and systemd (crashwatch stays the service's
// main process: the program talks to a relay socket, `NotifyFilter` decides what goes on), and the watchdog
// built on it: when the program's pings stop for half the timeout, or systemd's watchdog signal comes, its
// threads are captured as a hang and let go on.
import CrashwatchModel
import CrashwatchSystem

extension Supervisor {
    /// Opens the relay and returns the child's environment: crashwatch's own, with NOTIFY_SOCKET naming
    /// the relay. nil (the environment unchanged) without a NOTIFY_SOCKET, or when the relay cannot open.
    func relayEnvironment() -> [[UInt8]]? {
        guard options.notifySocket != nil else { return nil }
        do {
            let socket = try NotifySocket()
            relay = socket
            let prefix = Array("NOTIFY_SOCKET=".utf8)
            return ProcessEnvironment.entries().filter { !$0.starts(with: prefix) } + [prefix + Array(socket.address.utf8)]
        } catch {
            observer?.supervisorWarning("crashwatch: \(error); the program talks to systemd's NOTIFY_SOCKET directly (needs NotifyAccess=all)")
            return nil
        }
    }

    /// Sends on what the supervised processes sent to the relay (at most 64 messages a call), as `NotifyFilter`
    /// decides: the program's own state, status, watchdog and descriptor store, never a main-PID change (crashwatch
    /// stays the main process, so that systemd sees the program's end through crashwatch's); descriptors only
    /// with `FDSTORE=1` (or a barrier's own), the rest closed. Watchdog pings and timeouts are noted for hang
    /// reports. Messages from processes crashwatch does not trace are dropped.
    func serviceRelay() {
        guard let relay, let upstream = options.notifySocket else { return }
        for _ in 0..<64 {
            let message: NotifyMessage
            do {
                guard let next = try relay.receive() else { return }
                message = next
            } catch {
                return relayFailed(error)
            }
            guard message.senderPID > 0,
                  message.senderPID == mainPID || (try? ProcFS.threadStatus(message.senderPID))?.tracerPID == SelfProcess.pid
            else { continue }
            let decision = NotifyFilter.decide(message.bytes, descriptorCount: message.descriptors.count)
            if decision.watchdogPing { watchdog.ping() }
            if let timeout = decision.watchdogTimeoutNanoseconds { watchdog.timeout = timeout }
            // Descriptors not sent on are closed with the message.
            guard !decision.forwarded.isEmpty else { continue }
            do {
                try NotifySocket.send(decision.forwarded, descriptors: decision.passesDescriptors ? message.descriptors : [], to: upstream)
            } catch {
                relayFailed(error)
            }
        }
    }

    private func relayFailed(_ error: SystemError) {
        guard !relayFailureReported else { return }
        relayFailureReported = true
        observer?.supervisorWarning("crashwatch: sd_notify relay: \(error)")
    }

    /// Captures the main child's threads as a hang and lets them go on: its watchdog pings stopped for
    /// half the watchdog timeout, or the service manager's watchdog signal arrived. Once per silence.
    func captureHang() throws(SystemError) {
        guard !watchdog.hangCaptured, let lastPing = watchdog.lastPing else { return }
        if let last = watchdog.lastCapture, Clock.monotonicNanoseconds() - last < WatchdogPings.minimumCaptureInterval { return }
        watchdog.captured()
        let pid = mainPID
        guard mainExecuted, finalStatus == nil, !reportedProcesses.contains(pid),
              let status = try? ProcFS.threadStatus(pid), !status.isDead else { return }
        let now = Clock.monotonicNanoseconds()
        let identity = identify(pid, status: status)
        var crash = DetectedCrash(
            pid: pid, tid: pid, threadName: ProcFS.threadName(pid: pid, tid: pid),
            executable: identity.executable, signal: SignalInfo(signo: 0, code: 0),
            originalFault: nil, handledFaults: [], timeNanoseconds: Clock.realtimeNanoseconds(),
            crashedThreadID: pid, crashedThreadName: ProcFS.threadName(pid: pid, tid: pid))
        crash.unreadableFiles = identity.unreadable
        crash.hang = DetectedHang(lastPingNanoseconds: lastPing.realtime, silenceNanoseconds: now - lastPing.monotonic,
                                  watchdogTimeoutNanoseconds: watchdog.timeout)
        try capture(crash, initial: [:], fatalSignal: nil, heldSince: now)
    }
}

/// The program's watchdog pings as the relay saw them.
struct WatchdogPings {
    /// The watchdog timeout (nanoseconds), from WATCHDOG_USEC; nil: no watchdog.
    var timeout: Int64?
    /// The last WATCHDOG=1 (CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds); nil before the first.
    var lastPing: (monotonic: Int64, realtime: Int64)?
    /// Whether the current silence was captured as a hang already.
    var hangCaptured = false
    /// When the last hang was captured (CLOCK_MONOTONIC nanoseconds).
    var lastCapture: Int64?
    /// The least time between two hang captures: the program chooses its watchdog timeout and when it
    /// pings, and must not make crashwatch stop it and write a report every few milliseconds.
    static let minimumCaptureInterval: Int64 = 10_000_000_000

    mutating func ping() {
        lastPing = (Clock.monotonicNanoseconds(), Clock.realtimeNanoseconds())
        hangCaptured = false
    }

    mutating func captured() {
        hangCaptured = true
        lastCapture = Clock.monotonicNanoseconds()
    }

    /// When the current silence becomes a hang (half the timeout after the last ping, and not sooner than
    /// `minimumCaptureInterval` after the last capture); nil when there is no watchdog, no ping yet, or the
    /// hang was captured.
    var hangDue: Int64? {
        guard let timeout, let lastPing, !hangCaptured else { return nil }
        return max(lastPing.monotonic + timeout / 2, (lastCapture ?? Int64.min / 2) + Self.minimumCaptureInterval)
    }

    /// Whether pings were expected and have stopped for at least half the timeout.
    var isSilent: Bool {
        guard let timeout, let lastPing else { return false }
        return Clock.monotonicNanoseconds() - lastPing.monotonic >= timeout / 2
    }
}
