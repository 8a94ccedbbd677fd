// SignalInbox.swift — the supervisor's own signals, blocked and read through a signalfd so that they
// never land on a random thread and never interrupt the tracer in the middle of a ptrace sequence.
import CCrashwatch
import CrashwatchModel
import Glibc

/// A signal the supervisor received: which one, its `si_code`, and who sent it.
public struct ReceivedSignal: Equatable, Sendable {
    public let signal: Signal
    public let code: Int32
    public let senderPID: Int32

    public init(signal: Signal, code: Int32, senderPID: Int32) {
        self.signal = signal
        self.code = code
        self.senderPID = senderPID
    }

    /// Whether the terminal driver generated it (`SI_KERNEL`): Ctrl-C, Ctrl-Z, Ctrl-\, window resize, hangup.
    public var isFromTerminal: Bool { code == 0x80 }

    /// Whether a process sent it with kill(2), tgkill(2) or sigqueue(3), so `senderPID` names it.
    public var isSentByProcess: Bool { code == 0 || code == -1 || code == -6 }

    /// The process that sent it with kill(2), tgkill(2) or sigqueue(3); nil when no process did.
    public var sender: Int32? { isSentByProcess ? senderPID : nil }
}

/// Blocks a set of signals in the calling thread and reads them from a signalfd.
///
/// Create it on the main thread before any other thread starts, so every later thread inherits the mask.
public struct SignalInbox: ~Copyable {
    /// The signalfd; readable whenever one of the signals is pending.
    public let fd: Int32
    /// The signal mask the process had before: what a spawned child must get back.
    public let previousMask: sigset_t

    /// Blocks `signals` and opens the signalfd.
    public init(signals: [Signal]) throws(SystemError) {
        var previous = sigset_t()
        let numbers = signals.map(\.number)
        let fd = numbers.withUnsafeBufferPointer { cw_block_and_open_signalfd($0.baseAddress, $0.count, &previous) }
        guard fd >= 0 else { throw SystemError("signalfd", errno: lastErrno()) }
        self.fd = fd
        self.previousMask = previous
    }

    deinit { close(fd) }

    /// Sets the calling thread's signal mask back to `mask` (an inbox's `previousMask`): signals it blocked that
    /// are pending then take their own action at once (a SIGINT's default one ends the process).
    public static func restore(mask: sigset_t) {
        var mask = mask
        pthread_sigmask(SIG_SETMASK, &mask, nil)
    }

    /// Takes every pending signal without blocking.
    public func drain() throws(SystemError) -> [ReceivedSignal] {
        var received: [ReceivedSignal] = []
        var event = cw_signal_event()
        while true {
            let result = cw_signalfd_read(fd, &event)
            if result == 0 { return received }
            guard result == 1 else { throw SystemError("read signalfd", errno: lastErrno()) }
            received.append(ReceivedSignal(signal: Signal(event.signo), code: event.code, senderPID: event.pid))
        }
    }

    /// Whether `signal` is waiting to be read (sent to the process and not drained yet): one `sigpending`,
    /// no read of the signalfd.
    public func isPending(_ signal: Signal) -> Bool {
        var pending = sigset_t()
        guard sigpending(&pending) == 0 else { return true }
        return sigismember(&pending, signal.number) == 1
    }

    /// Blocks until a signal is pending, or at most `timeoutMilliseconds` (-1: no limit). Also returns when
    /// one of `alsoReadable` (other descriptors the caller serves, such as the sd_notify relay) is readable.
    public func waitUntilPending(timeoutMilliseconds: Int32 = -1, alsoReadable others: [Int32] = []) throws(SystemError) {
        var pollfds = [Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        pollfds += others.map { Glibc.pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let result = retryingOnEINTR { poll(&pollfds, nfds_t(pollfds.count), timeoutMilliseconds) }
        guard result >= 0 else { throw SystemError("poll signalfd", errno: lastErrno()) }
    }
}

/// Process-wide actions on the supervisor itself.
public enum SelfProcess {
    /// The supervisor's process group.
    public static var processGroup: Int32 { getpgrp() }

    /// Whether no seccomp filter confines the calling process (`Seccomp: 0` in its status). A filter may kill
    /// it for calls it was not written to allow (`sched_setscheduler`, `setpriority`, `setitimer`: a unit's
    /// `SystemCallFilter=~@resources`), so scheduling changes are made only without one; unknown counts as one.
    /// Read once: only crashwatch itself could add a filter, and it adds none (a worker's is its own process).
    public static let hasNoSeccompFilter: Bool = (try? ProcFS.threadStatus(getpid()))?.seccompMode == 0

    /// Becomes the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER).
    public static func becomeSubreaper() throws(SystemError) {
        guard cw_set_child_subreaper() == 0 else { throw SystemError("prctl(PR_SET_CHILD_SUBREAPER)", errno: lastErrno()) }
    }

    /// Lets go of the resident pages of code and constants that only loading and start-up used
    /// (`cw_drop_loaded_pages`); what runs next faults back in what it needs.
    public static func releaseStartupPages() { cw_drop_loaded_pages() }

    /// Has freed heap memory go back to the system promptly (`cw_malloc_return_promptly`), for a process that
    /// lives on after bursts of work (a supervisor after a crash, a shipper after a burst of reports).
    public static func returnFreedMemoryPromptly() { cw_malloc_return_promptly() }

    /// Gives back the free pages left inside the heaps once a burst of work is over (`malloc_trim`).
    public static func returnFreePages() { _ = cw_malloc_trim() }

    /// Stops the supervisor with a job-control stop signal (TSTP, TTIN, TTOU) until it is continued, unless a
    /// SIGCONT is already pending (not read from the inbox yet): that one ended the stop. Returns whether it
    /// stopped (or tried to: an ignored signal or an orphaned process group stops nothing).
    @discardableResult
    public static func stop(with signal: Signal) -> Bool { cw_stop_self(signal.number) != 0 }

    /// Ends the supervisor exactly as a child ended: the same exit code, or death by the same signal
    /// (without a core dump of its own). As PID 1 of a PID namespace, where a process cannot kill itself,
    /// exits with 128+signal instead.
    public static func terminate(like status: WaitStatus) -> Never {
        switch status {
        case .exited(let code):
            exit(code)
        case .signaled(let signal, _):
            cw_die_by_signal(signal)
            exit(128 + signal)
        case .stopped, .continued:
            exit(70)  // not a termination: a supervisor bug; EX_SOFTWARE
        }
    }
}

/// Sends `signal` to a process; a process that is already gone is not an error.
public func sendSignal(_ signal: Signal, to pid: Int32) throws(SystemError) {
    if kill(pid, signal.number) == -1 {
        let saved = lastErrno()
        if saved != ESRCH { throw SystemError("kill \(signal.name)", pid: pid, errno: saved) }
    }
}

/// Queues `signal` for thread `tid` of process `pid` (tgkill); a thread that is gone is not an error.
public func queueSignal(_ signal: Signal, to tid: Int32, of pid: Int32) {
    _ = cw_tgkill(pid, tid, signal.number)
}

/// The process group of `pid`, or nil when the process is gone.
public func processGroup(of pid: Int32) -> Int32? {
    let group = getpgid(pid)
    return group == -1 ? nil : group
}

extension SelfProcess {
    /// Whether the supervisor runs as root (effective uid 0).
    public static var isRoot: Bool { geteuid() == 0 }

    /// The effective user id.
    public static var effectiveUID: UInt32 { geteuid() }

    /// This process's pid.
    public static var pid: Int32 { getpid() }

    /// The pid of this process's parent (the shell or script that ran it; 1 or a subreaper once it died).
    public static var parentPID: Int32 { getppid() }
}

/// The supervisor's own environment.
public enum ProcessEnvironment {
    /// Sets `name` in the supervisor's environment unless it is already set. Only for after the child
    /// was spawned: the child's environment must stay the one crashwatch was given.
    public static func setDefault(_ name: String, _ value: String) {
        setenv(name, value, 0)
    }

    /// Sets `name` to `value` in this process's environment, or removes it when `value` is nil: for libraries
    /// that read their configuration from the environment (libdw's debuginfod client reads DEBUGINFOD_URLS).
    public static func set(_ name: String, _ value: String?) {
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }

    /// This process's working directory, nil when it cannot be told (removed, too long).
    public static var workingDirectory: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Every variable of the supervisor's environment (a later entry of the same name wins).
    public static var current: [String: String] {
        var result: [String: String] = [:]
        for entry in entries() {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            result[String(decoding: entry[..<equals], as: UTF8.self)] = String(decoding: entry[(equals + 1)...], as: UTF8.self)
        }
        return result
    }

    /// Every `NAME=value` entry of the supervisor's environment as bytes, in order.
    public static func entries() -> [[UInt8]] {
        var result: [[UInt8]] = []
        var pointer = environ
        while let entry = pointer.pointee {
            result.append(Array(UnsafeBufferPointer(start: UnsafeRawPointer(entry).assumingMemoryBound(to: UInt8.self), count: strlen(entry))))
            pointer += 1
        }
        return result
    }
}
