// ReportSignal.swift — the report's signal records: the fatal signal, the original fault a handler saw first,
// and the other ways a report ends: a hang (`HangRecord`) and an abnormal exit (`ExitRecord`).
import FoundationEssentials

/// The fatal signal as recorded in the report.
public struct SignalRecord: Codable, Sendable, Equatable {
    /// The signal number (11 for SIGSEGV).
    public var number: Int32
    /// The signal name (`SIGSEGV`).
    public var name: String
    /// The raw `si_code`.
    public var code: Int32
    /// The `si_code` name (`SEGV_MAPERR`, `SI_TKILL`), or the number when unknown.
    public var codeName: String
    /// The fault address (`si_addr`) when the kernel raised the signal for a fault; the call site for SIGSYS.
    public var faultAddress: Address?
    /// The sending process, when a process sent the signal (`kill`, `tgkill`, `sigqueue`).
    public var senderPID: Int32?
    /// The sending process's real uid, when a process sent the signal.
    public var senderUID: UInt32?
    /// For SIGSYS from seccomp: the refused system call number.
    public var syscall: Int32?
    /// One line: `Segmentation fault: address not mapped to object at 0x0`.
    public var description: String
    /// For a crash whose handler ran and then re-raised (or died another way): the fault that started it —
    /// the oldest handled crash signal whose handler was still running when the process died.
    public var originalFault: OriginalFault?
    /// Every handled crash signal whose handler was still running when the process died (its signal frame
    /// still on its thread's stack), oldest first, with thread and registers; the first is `originalFault`.
    /// Empty when none was found (or the report was not unwound).
    public var activeFaults: [OriginalFault]

    /// No signal: what a hang report (a snapshot of a running process) carries.
    public static let none: SignalRecord = {
        var record = SignalRecord(SignalInfo(signo: 0, code: 0))
        record.name = "none"
        record.codeName = "none"
        record.description = "no signal: a snapshot of a running process"
        return record
    }()

    /// A signal seen only in how the process ended (its exit status), without its siginfo: `sentByKernel` when
    /// the kernel is known to have sent it (the OOM killer's SIGKILL, a crash signal forced past its delivery
    /// stop), else who sent it is not known, and no sender is claimed.
    public static func seenAtExit(_ signal: Signal, sentByKernel: Bool) -> SignalRecord {
        var record = SignalRecord(SignalInfo(signo: signal.number, code: sentByKernel ? 0x80 : 0))
        record.senderPID = nil
        record.senderUID = nil
        record.description = "\(signal.summary): " + (sentByKernel
            ? "sent by the kernel; its siginfo is not known (seen at the process's exit)"
            : "seen at the process's exit; who sent it is not known")
        return record
    }

    /// Records a decoded `siginfo_t`, with the original fault and the chain of active faults when there were any.
    public init(_ info: SignalInfo, originalFault: OriginalFault? = nil, activeFaults: [OriginalFault] = []) {
        number = info.signal.number
        name = info.signal.name
        code = info.code.rawValue
        codeName = info.code.name
        faultAddress = info.faultAddress.map { Address($0) }
        senderPID = info.senderPID
        senderUID = info.senderUID
        syscall = info.syscall
        description = info.description
        self.originalFault = originalFault
        self.activeFaults = activeFaults
    }

    enum CodingKeys: String, CodingKey {
        case number, name, code, codeName, faultAddress, senderPID, senderUID, syscall, description, originalFault, activeFaults
    }

    /// Reads reports written before `activeFaults` existed as well.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        number = try container.decode(Int32.self, forKey: .number)
        name = try container.decode(String.self, forKey: .name)
        code = try container.decode(Int32.self, forKey: .code)
        codeName = try container.decode(String.self, forKey: .codeName)
        faultAddress = try container.decodeIfPresent(Address.self, forKey: .faultAddress)
        senderPID = try container.decodeIfPresent(Int32.self, forKey: .senderPID)
        senderUID = try container.decodeIfPresent(UInt32.self, forKey: .senderUID)
        syscall = try container.decodeIfPresent(Int32.self, forKey: .syscall)
        description = try container.decode(String.self, forKey: .description)
        originalFault = try container.decodeIfPresent(OriginalFault.self, forKey: .originalFault)
        activeFaults = try container.decodeIfPresent([OriginalFault].self, forKey: .activeFaults) ?? []
    }
}

/// The first fault of a crash whose signal handler ran before the process died: the snapshot taken then.
public struct OriginalFault: Codable, Sendable, Equatable {
    /// The signal number.
    public var number: Int32
    /// The signal name.
    public var name: String
    /// The raw `si_code`.
    public var code: Int32
    /// The `si_code` name.
    public var codeName: String
    /// The fault address, when meaningful (see `SignalRecord.faultAddress`).
    public var faultAddress: Address?
    /// The sending process, when a process sent the signal.
    public var senderPID: Int32?
    /// The sending process's real uid, when a process sent the signal.
    public var senderUID: UInt32?
    /// For SIGSYS from seccomp: the refused system call number.
    public var syscall: Int32?
    /// One line describing the fault.
    public var description: String
    /// The thread that took the fault.
    public var tid: Int32
    /// When the fault was seen, RFC 3339 UTC with milliseconds.
    public var time: String
    /// The faulting thread's registers at the fault, in architecture order; empty when not captured.
    public var registers: [RegisterValue]
    /// The faulting thread's stack at the fault, innermost first; empty when not unwound.
    public var frames: [FrameRecord]

    /// Records the original fault from its decoded `siginfo_t`, thread, time and snapshot.
    public init(_ info: SignalInfo, tid: Int32, time: String, registers: [RegisterValue] = [], frames: [FrameRecord] = []) {
        let record = SignalRecord(info)
        number = record.number
        name = record.name
        code = record.code
        codeName = record.codeName
        faultAddress = record.faultAddress
        senderPID = record.senderPID
        senderUID = record.senderUID
        syscall = record.syscall
        description = record.description
        self.tid = tid
        self.time = time
        self.registers = registers
        self.frames = frames
    }
}

/// A hang: the process stopped making progress. Apsio profile §6.3 (`apsio.hang`): a live hang, captured
/// while it lasted, so its duration is a lower bound and it is marked unfinished.
public struct HangRecord: Codable, Sendable, Equatable {
    /// What saw the hang: `watchdog` (the systemd watchdog pings stopped).
    public var source: String
    /// When the hang began (the last sign of progress: the last watchdog ping), RFC 3339 UTC with milliseconds.
    public var startTime: String
    /// How long it had lasted when it was captured, in milliseconds.
    public var durationMs: Double
    /// Always true for a live capture: the hang had not ended when it was captured.
    public var unfinished: Bool
    /// The watchdog timeout the process runs under (`WATCHDOG_USEC`), in milliseconds, when known.
    public var watchdogTimeoutMs: Double?

    public init(source: String, startTime: String, durationMs: Double, unfinished: Bool = true, watchdogTimeoutMs: Double?) {
        self.source = source
        self.startTime = startTime
        self.durationMs = durationMs
        self.unfinished = unfinished
        self.watchdogTimeoutMs = watchdogTimeoutMs
    }
}

/// Why a process was killed without a chance to crash (Apsio profile §6.4 `app.abnormal_exit`).
public struct ExitRecord: Codable, Sendable, Equatable {
    /// `memory` (the kernel's OOM killer: its count in the process's memory cgroup rose) or `signal`
    /// (a SIGKILL from elsewhere); the profile's other reasons do not occur on Linux.
    public var reason: String
    /// `platform` when the kernel said so (the cgroup's OOM-kill count), `inferred` otherwise.
    public var source: String
    /// What the reason rests on, in words (`memory cgroup /system.slice/x.service: oom_kill 0 -> 1`).
    public var evidence: String?

    public init(reason: String, source: String, evidence: String?) {
        self.reason = reason
        self.source = source
        self.evidence = evidence
    }
}
