// Signals.swift — the Linux signal vocabulary: numbers, names, si_code names, one-line descriptions,
// and which signals count as crashes. Pure tables, identical on x86-64 and ARM64 (both use the generic
// Linux numbering), so they are testable anywhere.

/// A Linux signal number with its conventional name and crash classification.
public struct Signal: Hashable, Sendable, CustomStringConvertible {
    /// The signal number, as the kernel and `kill(2)` use it.
    public let number: Int32

    /// Wraps a signal number; any value is accepted, unknown ones are named `SIG<n>`.
    public init(_ number: Int32) { self.number = number }

    public static let hup = Signal(1), int = Signal(2), quit = Signal(3), ill = Signal(4)
    public static let trap = Signal(5), abrt = Signal(6), bus = Signal(7), fpe = Signal(8)
    public static let kill = Signal(9), usr1 = Signal(10), segv = Signal(11), usr2 = Signal(12)
    public static let pipe = Signal(13), alrm = Signal(14), term = Signal(15), stkflt = Signal(16)
    public static let chld = Signal(17), cont = Signal(18), stop = Signal(19), tstp = Signal(20)
    public static let ttin = Signal(21), ttou = Signal(22), urg = Signal(23), xcpu = Signal(24)
    public static let xfsz = Signal(25), vtalrm = Signal(26), prof = Signal(27), winch = Signal(28)
    public static let io = Signal(29), pwr = Signal(30), sys = Signal(31)

    private static let names: [String] = [
        "SIG0", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
        "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT",
        "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU",
        "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
    ]

    /// The conventional name (`SIGSEGV`), `SIGRTMIN+n` for real-time signals, `SIG<n>` otherwise.
    public var name: String {
        if number >= 0 && Int(number) < Signal.names.count { return Signal.names[Int(number)] }
        if number >= 32 && number <= 64 { return number == 34 ? "SIGRTMIN" : "SIGRTMIN+\(number - 34)" }
        return "SIG\(number)"
    }

    public var description: String { name }

    /// Parses `SIGSEGV`, `SEGV`, `segv` or `11`.
    public init?(name text: String) {
        if let n = Int32(text), n > 0, n <= 64 { self.init(n); return }
        var upper = text.uppercased()
        if !upper.hasPrefix("SIG") { upper = "SIG" + upper }
        guard let index = Signal.names.firstIndex(of: upper), index > 0 else { return nil }
        self.init(Int32(index))
    }

    /// Signals whose default action dumps core: the ones crashwatch treats as crashes.
    public static let crashSignals: Set<Signal> = [.segv, .bus, .ill, .fpe, .abrt, .trap, .sys, .quit, .xcpu, .xfsz]

    /// Whether an unhandled delivery of this signal is a crash (its default action dumps core).
    public var isCrash: Bool { Signal.crashSignals.contains(self) }

    /// Whether this is a job-control stop signal (its default action stops the process).
    public var isStop: Bool { self == .stop || self == .tstp || self == .ttin || self == .ttou }

    /// Whether the signal's fault address (`si_addr`) is meaningful when the kernel generated it.
    public var carriesFaultAddress: Bool {
        self == .segv || self == .bus || self == .ill || self == .fpe || self == .trap || self == .sys
    }

    /// A short human description of the signal itself, like `strsignal(3)`.
    public var summary: String {
        switch self {
        case .segv: "Segmentation fault"
        case .bus: "Bus error"
        case .ill: "Illegal instruction"
        case .fpe: "Floating-point exception"
        case .abrt: "Aborted"
        case .trap: "Trace/breakpoint trap"
        case .sys: "Bad system call"
        case .quit: "Quit"
        case .xcpu: "CPU time limit exceeded"
        case .xfsz: "File size limit exceeded"
        case .kill: "Killed"
        case .term: "Terminated"
        case .int: "Interrupt"
        case .hup: "Hangup"
        case .pipe: "Broken pipe"
        case .alrm: "Alarm clock"
        case .usr1: "User defined signal 1"
        case .usr2: "User defined signal 2"
        default: name
        }
    }
}

/// A signal's `si_code`: why and how it was sent, with the names `<signal.h>` uses.
public struct SignalCode: Hashable, Sendable {
    /// The raw `si_code` value.
    public let rawValue: Int32
    /// The signal the code belongs to (codes above zero are signal-specific).
    public let signal: Signal

    /// Pairs a raw `si_code` with the signal it was delivered with.
    public init(_ rawValue: Int32, signal: Signal) {
        self.rawValue = rawValue
        self.signal = signal
    }

    /// Whether the kernel raised the signal for a fault in the thread itself (not `kill`, `raise`, a queue…).
    public var isKernelFault: Bool { rawValue > 0 && rawValue != 0x80 }

    /// Whether a process sent the signal (`kill`, `tgkill`, `sigqueue`), so sender pid and uid are meaningful.
    public var isSentByProcess: Bool { rawValue == 0 || rawValue == -1 || rawValue == -6 }

    private static let generic: [Int32: (String, String)] = [
        0: ("SI_USER", "sent by kill()"),
        0x80: ("SI_KERNEL", "sent by the kernel"),
        -1: ("SI_QUEUE", "sent by sigqueue()"),
        -2: ("SI_TIMER", "POSIX timer expired"),
        -3: ("SI_MESGQ", "message queue state changed"),
        -4: ("SI_ASYNCIO", "AIO completed"),
        -5: ("SI_SIGIO", "queued SIGIO"),
        -6: ("SI_TKILL", "sent by tkill() or raise()"),
        -7: ("SI_DETHREAD", "sent by execve() killing subsidiary threads"),
        -60: ("SI_ASYNCNL", "asynchronous name lookup completed"),
    ]

    private static let specific: [Signal: [(String, String)]] = [
        .segv: [("SEGV_MAPERR", "address not mapped to object"), ("SEGV_ACCERR", "invalid permissions for mapped object"),
                ("SEGV_BNDERR", "failed address bound checks"), ("SEGV_PKUERR", "access denied by memory protection keys"),
                ("SEGV_ACCADI", "ADI not enabled for mapped object"), ("SEGV_ADIDERR", "disrupting MCD error"),
                ("SEGV_ADIPERR", "precise MCD exception"), ("SEGV_MTEAERR", "asynchronous MTE tag check fault"),
                ("SEGV_MTESERR", "synchronous MTE tag check fault"), ("SEGV_CPERR", "control protection fault")],
        .bus: [("BUS_ADRALN", "invalid address alignment"), ("BUS_ADRERR", "nonexistent physical address"),
               ("BUS_OBJERR", "object-specific hardware error"), ("BUS_MCEERR_AR", "hardware memory error consumed on a machine check"),
               ("BUS_MCEERR_AO", "hardware memory error detected in process but not consumed")],
        .ill: [("ILL_ILLOPC", "illegal opcode"), ("ILL_ILLOPN", "illegal operand"), ("ILL_ILLADR", "illegal addressing mode"),
               ("ILL_ILLTRP", "illegal trap"), ("ILL_PRVOPC", "privileged opcode"), ("ILL_PRVREG", "privileged register"),
               ("ILL_COPROC", "coprocessor error"), ("ILL_BADSTK", "internal stack error"), ("ILL_BADIADDR", "unimplemented instruction address")],
        .fpe: [("FPE_INTDIV", "integer divide by zero"), ("FPE_INTOVF", "integer overflow"), ("FPE_FLTDIV", "floating-point divide by zero"),
               ("FPE_FLTOVF", "floating-point overflow"), ("FPE_FLTUND", "floating-point underflow"), ("FPE_FLTRES", "floating-point inexact result"),
               ("FPE_FLTINV", "floating-point invalid operation"), ("FPE_FLTSUB", "subscript out of range"),
               ("FPE_9", "unknown"), ("FPE_10", "unknown"), ("FPE_11", "unknown"), ("FPE_12", "unknown"), ("FPE_13", "unknown"),
               ("FPE_FLTUNK", "undiagnosed floating-point exception"), ("FPE_CONDTRAP", "trap on condition")],
        .trap: [("TRAP_BRKPT", "process breakpoint"), ("TRAP_TRACE", "process trace trap"), ("TRAP_BRANCH", "process taken branch trap"),
                ("TRAP_HWBKPT", "hardware breakpoint or watchpoint"), ("TRAP_UNK", "undiagnosed trap"), ("TRAP_PERF", "perf event with sigtrap")],
        .sys: [("SYS_SECCOMP", "seccomp triggered"), ("SYS_USER_DISPATCH", "syscall user dispatch triggered")],
        .chld: [("CLD_EXITED", "child exited"), ("CLD_KILLED", "child killed"), ("CLD_DUMPED", "child dumped core"),
                ("CLD_TRAPPED", "traced child trapped"), ("CLD_STOPPED", "child stopped"), ("CLD_CONTINUED", "stopped child continued")],
    ]

    private var entry: (String, String)? {
        if rawValue > 0 && rawValue != 0x80, let table = SignalCode.specific[signal], Int(rawValue) <= table.count {
            return table[Int(rawValue) - 1]
        }
        return SignalCode.generic[rawValue]
    }

    /// The `<signal.h>` name (`SEGV_MAPERR`, `SI_TKILL`), or the number when unknown.
    public var name: String { entry?.0 ?? String(rawValue) }

    /// What the code means, in a few words.
    public var meaning: String { entry?.1 ?? "unknown si_code \(rawValue)" }
}

/// The parts of a `siginfo_t` that crashwatch uses, decoded.
public struct SignalInfo: Hashable, Sendable {
    public var signal: Signal
    public var code: SignalCode
    /// `si_errno`; rarely set.
    public var errorNumber: Int32
    /// Fault address (`si_addr`), or the system call site for SIGSYS; nil when not meaningful.
    public var faultAddress: UInt64?
    /// Pid of the sending process, when the code says a process sent it.
    public var senderPID: Int32?
    /// Real uid of the sending process, when the code says a process sent it.
    public var senderUID: UInt32?
    /// For SIGSYS from seccomp: the system call number that was refused.
    public var syscall: Int32?

    /// Decodes the raw fields, keeping only those the signal and code make meaningful.
    public init(signo: Int32, code: Int32, errorNumber: Int32 = 0, pid: Int32 = 0, uid: UInt32 = 0,
                address: UInt64 = 0, syscall: Int32 = 0) {
        let signal = Signal(signo)
        let signalCode = SignalCode(code, signal: signal)
        self.signal = signal
        self.code = signalCode
        self.errorNumber = errorNumber
        self.faultAddress = signal.carriesFaultAddress && signalCode.isKernelFault ? address : nil
        self.senderPID = signalCode.isSentByProcess ? pid : nil
        self.senderUID = signalCode.isSentByProcess ? uid : nil
        self.syscall = signal == .sys && signalCode.rawValue == 1 ? syscall : nil
    }

    /// `SIGSEGV (SEGV_MAPERR)`: the form used for `exception.type` and one-line summaries.
    public var typeName: String { "\(signal.name) (\(code.name))" }

    /// A one-line description: `Segmentation fault: address not mapped to object at 0x0`.
    public var description: String {
        var text = "\(signal.summary): \(code.meaning)"
        if let address = faultAddress { text += " at \(hex(address))" }
        if let pid = senderPID { text += " by pid \(pid)" }
        if let uid = senderUID { text += " uid \(uid)" }
        if let syscall { text += " (system call \(syscall))" }
        return text
    }
}

/// Stored as the raw `siginfo` fields (`signo`, `code`, `errorNumber`, `pid`, `uid`, `address`, `syscall`; 0
/// where not meaningful) and decoded through `init(signo:…)`, so a stored signal means what a fresh one does
/// (the raw capture's metadata).
extension SignalInfo: Codable {
    private enum CodingKeys: String, CodingKey { case signo, code, errorNumber, pid, uid, address, syscall }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(signo: try values.decode(Int32.self, forKey: .signo), code: try values.decode(Int32.self, forKey: .code),
                  errorNumber: try values.decode(Int32.self, forKey: .errorNumber), pid: try values.decode(Int32.self, forKey: .pid),
                  uid: try values.decode(UInt32.self, forKey: .uid), address: try values.decode(UInt64.self, forKey: .address),
                  syscall: try values.decode(Int32.self, forKey: .syscall))
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(signal.number, forKey: .signo)
        try values.encode(code.rawValue, forKey: .code)
        try values.encode(errorNumber, forKey: .errorNumber)
        try values.encode(senderPID ?? 0, forKey: .pid)
        try values.encode(senderUID ?? 0, forKey: .uid)
        try values.encode(faultAddress ?? 0, forKey: .address)
        try values.encode(syscall ?? 0, forKey: .syscall)
    }
}

/// Formats an address the way every crashwatch output does: lower-case hex with `0x`.
public func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
