// Report.swift — the crash report, schema version 1: the value every source (live crash, and later core
// files, snapshots, hangs) fills in and the spool, text renderer and shipper read. JSON shape notes:
// - keys appear in declaration order (see `ReportJSONWriter` in ReportJSON.swift), so reports diff well;
// - every key is always present: a missing value is written as `null`, an empty list as `[]`;
// - addresses, offsets and register values are `Address` values, written as lower-case hex strings (`"0x7f…"`),
//   never as JSON numbers; sizes and counts are JSON integers;
// - times are RFC 3339 UTC strings with milliseconds (`RFC3339.format`).
// `schema/crashwatch-report-v1.schema.json` describes this exact shape; change both together, additively.
import FoundationEssentials

// MARK: - Report

/// One crash (or abnormal exit) of one process: the document crashwatch writes to the spool.
public struct CrashReport: Codable, Sendable, Equatable {
    /// The schema version this code writes; readers refuse reports with a higher one.
    public static let currentSchemaVersion = 1
    /// The value of `format` that marks a JSON document as a crashwatch report.
    public static let formatName = "crashwatch.report"

    /// The schema version of this report (1).
    public var schemaVersion: Int
    /// Always `crashwatch.report`: tells a report from other JSON.
    public var format: String
    /// The report id: a lower-case UUID, the same on every attempt to ship this crash.
    public var id: String
    /// What ended the process: a crash signal, or an abnormal exit such as SIGKILL.
    public var kind: ReportKind
    /// When the fatal signal arrived, RFC 3339 UTC with milliseconds.
    public var captureTime: String
    /// How long the capture took, in milliseconds: from the fatal signal to this report being complete
    /// (for a full report, including processing in the worker).
    public var captureDurationMs: Double
    /// How long the crashed process was held stopped for the capture, in milliseconds; nil where the
    /// source was not a live process.
    public var holdDurationMs: Double?
    /// The crashwatch version that wrote the report.
    public var crashwatchVersion: String
    /// The fatal signal (and the original fault, for a handled-then-re-raised crash); for a hang, no
    /// signal (`SignalRecord.none`).
    public var signal: SignalRecord
    /// For a hang report: when the hang began and how long it had lasted when it was captured.
    public var hang: HangRecord?
    /// For an abnormal exit: why the process was killed, as far as crashwatch can tell.
    public var exit: ExitRecord?
    /// For a crash that ended a hang crashwatch had reported (a watchdog's kill): that hang report's id.
    public var hangReportID: String?
    /// The id of the `crashwatch run` that supervised the process (a lower-case UUID, one per run, shared
    /// by every report of that run); the shipped record's `session.id` when systemd gave no invocation id.
    public var runID: String?
    /// Where the process's state came from: `core` for a report built from a core dump
    /// (`crashwatch analyze-core`); nil for a live capture.
    public var source: String?
    /// Where the core dump itself was kept, gzip-compressed (`crashwatch core-handler --keep-core DIR`); nil
    /// when it was not.
    public var coreFile: String?
    /// The process that died.
    public var process: ProcessRecord
    /// The machine it died on.
    public var host: HostRecord
    /// Every thread of the process; exactly one has `crashed` set for a crash.
    public var threads: [ThreadRecord]
    /// The images the frames refer to, plus the main executable; `FrameRecord.imageIndex` indexes this list.
    public var images: [ImageRecord]
    /// crashwatch's view of its own capture conditions.
    public var diagnostics: Diagnostics
    /// Parts of the capture that failed without losing the report.
    public var softErrors: [SoftError]

    /// Creates a report; `schemaVersion` and `format` take the current values.
    public init(id: String, kind: ReportKind, captureTime: String, captureDurationMs: Double, crashwatchVersion: String,
                signal: SignalRecord, process: ProcessRecord, host: HostRecord, threads: [ThreadRecord],
                images: [ImageRecord], diagnostics: Diagnostics, softErrors: [SoftError] = []) {
        self.schemaVersion = CrashReport.currentSchemaVersion
        self.format = CrashReport.formatName
        self.id = id
        self.kind = kind
        self.captureTime = captureTime
        self.captureDurationMs = captureDurationMs
        self.holdDurationMs = nil
        self.crashwatchVersion = crashwatchVersion
        self.signal = signal
        self.hang = nil
        self.exit = nil
        self.hangReportID = nil
        self.runID = nil
        self.source = nil
        self.coreFile = nil
        self.process = process
        self.host = host
        self.threads = threads
        self.images = images
        self.diagnostics = diagnostics
        self.softErrors = softErrors
    }

    /// A fresh report id: a random UUID in lower case.
    public static func newID() -> String { UUID().uuidString.lowercased() }

    /// The thread that took the fatal signal, if the report has one.
    public var crashedThread: ThreadRecord? { threads.first { $0.crashed } }

    /// The image of the main executable, if the report has one.
    public var mainExecutable: ImageRecord? { images.first { $0.isMainExecutable } }

    /// The report as UTF-8 JSON (two-space indented, keys in declaration order, a final newline); throws
    /// `EncodingError` for a NaN or infinite `captureDurationMs`.
    public func encodedJSON() throws -> [UInt8] { try ReportJSONWriter.encode(self) }

    /// Decodes a report, refusing other formats and newer schema versions with a `ReportDecodingError`.
    public static func decode(_ bytes: [UInt8]) throws -> CrashReport {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let header = try decoder.decode(Header.self, from: data)
        guard header.format == formatName else { throw ReportDecodingError.notAReport(format: header.format) }
        guard let version = header.schemaVersion, (1...currentSchemaVersion).contains(version) else {
            throw ReportDecodingError.unsupportedSchemaVersion(header.schemaVersion)
        }
        return try decoder.decode(CrashReport.self, from: data)
    }

    /// The two fields read before anything else, to recognise a report and its version.
    private struct Header: Decodable {
        /// Must be `crashwatch.report`.
        var format: String?
        /// Must be 1...`currentSchemaVersion`.
        var schemaVersion: Int?
    }
}

/// Why bytes could not be read as a crash report, beyond malformed JSON (which throws `DecodingError`).
public enum ReportDecodingError: Error, Equatable, CustomStringConvertible {
    /// The JSON's `format` is missing or is not `crashwatch.report`.
    case notAReport(format: String?)
    /// The JSON's `schemaVersion` is missing, not positive, or newer than this code understands.
    case unsupportedSchemaVersion(Int?)

    /// A one-line explanation, fit for a quarantine reason.
    public var description: String {
        switch self {
        case .notAReport(let format): "not a crashwatch report (format \(format.map { "'\($0)'" } ?? "missing"))"
        case .unsupportedSchemaVersion(let version):
            "unsupported report schema version \(version.map(String.init) ?? "missing") (this crashwatch reads 1...\(CrashReport.currentSchemaVersion))"
        }
    }
}

/// What ended the process; an open set of strings so readers tolerate kinds added later in version 1.
public struct ReportKind: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The JSON value.
    public var rawValue: String
    /// Wraps a JSON value; unknown values are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The process took a crash signal (see `Signal.crashSignals`).
    public static let crash = ReportKind(rawValue: "crash")
    /// The process died in a way that cannot be intercepted, such as SIGKILL from the OOM killer.
    public static let abnormalExit = ReportKind(rawValue: "abnormalExit")
    /// A snapshot of a process that stopped making progress (its watchdog pings stopped); it was left running.
    public static let hang = ReportKind(rawValue: "hang")

    /// The JSON value, for messages.
    public var description: String { rawValue }
}

/// A part of the capture that failed without losing the report (minidump-writer's `soft_errors`).
public struct SoftError: Codable, Sendable, Equatable {
    /// The step that failed: `capture`, `core`, `deadline`, `images`, `process`, `processing`, `registers`, `report`,
    /// `signal`, `stack`, `stop`, `symbols` or `unwind` (the schema's enum, each value described there).
    public var stage: String
    /// The thread concerned, when the failure is about one thread.
    public var tid: Int32?
    /// The image path concerned, when the failure is about one image.
    public var image: String?
    /// What failed, in the system's words: `PTRACE_GETREGSET tid 1234: No such process`.
    public var message: String

    /// Creates a soft error for a stage, optionally tied to a thread or an image.
    public init(stage: String, tid: Int32? = nil, image: String? = nil, message: String) {
        self.stage = stage
        self.tid = tid
        self.image = image
        self.message = message
    }
}

// MARK: - Hang and abnormal exit

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

// MARK: - Signal

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

// MARK: - Process and host

/// The process that died.
public struct ProcessRecord: Codable, Sendable, Equatable {
    /// Its pid (in the supervisor's pid namespace).
    public var pid: Int32
    /// Its parent's pid.
    public var ppid: Int32
    /// The executable path (`/proc/PID/exe`, ` (deleted)` removed; see `ImageRecord.deleted`).
    public var executable: String
    /// The command line, argv[0] first; empty when redacted.
    public var commandLine: [String]
    /// Whether the command line was withheld by configuration.
    public var redacted: Bool
    /// How many empty arguments were removed from the end of the command line: programs that rewrite their
    /// title (setproctitle: redis, PostgreSQL, nginx) leave the rest of the original argument area empty.
    public var commandLineTrimmed: Int?
    /// Every argument's exact bytes in lowercase hexadecimal (each cut at 4096 bytes) when some argument is
    /// not valid UTF-8 (`commandLine` then shows such bytes as U+FFFD); otherwise, and when redacted, nil.
    public var commandLineHex: [String]?

    /// Each argument's exact bytes: from `commandLineHex` when it is there and well-formed (one entry per
    /// argument), else the UTF-8 of `commandLine`.
    public var commandLineBytes: [[UInt8]] {
        if let hex = commandLineHex, hex.count == commandLine.count {
            let decoded = hex.compactMap(Hex.bytes)
            if decoded.count == hex.count { return decoded }
        }
        return commandLine.map { Array($0.utf8) }
    }
    /// The working directory, when readable.
    public var cwd: String?
    /// The real user id.
    public var uid: UInt32
    /// The real group id.
    public var gid: UInt32
    /// When the process started, RFC 3339 UTC with milliseconds, when known.
    public var startTime: String?
    /// The kernel's short name for the process (`/proc/PID/comm`, at most 15 bytes).
    public var comm: String
    /// The cgroup v2 path (`/system.slice/foo.service`), when known.
    public var cgroup: String?
    /// The systemd unit the process runs in, when it runs in one.
    public var systemdUnit: String?
    /// The systemd invocation id (`INVOCATION_ID`) of that unit run, when present.
    public var systemdInvocationID: String?
    /// The application's name, version and release, from options or the environment.
    public var app: AppRecord?
    /// Environment variables whose names were allowed by configuration; empty by default.
    public var environment: [String: String]

    /// Creates a process record; optional facts default to unknown and the environment to empty.
    public init(pid: Int32, ppid: Int32, executable: String, commandLine: [String], redacted: Bool = false,
                cwd: String? = nil, uid: UInt32, gid: UInt32, startTime: String? = nil, comm: String,
                cgroup: String? = nil, systemdUnit: String? = nil, systemdInvocationID: String? = nil,
                app: AppRecord? = nil, environment: [String: String] = [:]) {
        self.pid = pid
        self.ppid = ppid
        self.executable = executable
        self.commandLine = commandLine
        self.redacted = redacted
        self.commandLineTrimmed = nil
        self.commandLineHex = nil
        self.cwd = cwd
        self.uid = uid
        self.gid = gid
        self.startTime = startTime
        self.comm = comm
        self.cgroup = cgroup
        self.systemdUnit = systemdUnit
        self.systemdInvocationID = systemdInvocationID
        self.app = app
        self.environment = environment
    }
}

/// The application's own identity, as given by options or environment (not guessed).
public struct AppRecord: Codable, Sendable, Equatable {
    /// The application name (`service.name`-like).
    public var name: String?
    /// The application version (`service.version`).
    public var version: String?
    /// The release or build label, e.g. a git revision or a deployment name.
    public var release: String?

    /// Creates an app record; any field may be unknown.
    public init(name: String? = nil, version: String? = nil, release: String? = nil) {
        self.name = name
        self.version = version
        self.release = release
    }
}

/// The machine the process ran on.
public struct HostRecord: Codable, Sendable, Equatable {
    /// The host name (`uname -n`).
    public var hostname: String
    /// The kernel release (`uname -r`), e.g. `6.1.0-18-amd64`.
    public var kernelRelease: String
    /// The kernel version string (`uname -v`).
    public var kernelVersion: String
    /// The OS name from os-release(5): `NAME` (`Debian GNU/Linux`), else `ID`, else `Linux` — OpenTelemetry's `os.name`.
    public var osName: String
    /// The OS version from os-release(5): `VERSION_ID` (`12`), nil when absent (rolling releases) — `os.version`.
    public var osVersion: String?
    /// The architecture of the crashed process: `x86_64` or `aarch64`.
    public var architecture: String
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`), when readable.
    public var bootID: String?

    /// Creates a host record.
    public init(hostname: String, kernelRelease: String, kernelVersion: String, osName: String, osVersion: String?,
                architecture: String, bootID: String?) {
        self.hostname = hostname
        self.kernelRelease = kernelRelease
        self.kernelVersion = kernelVersion
        self.osName = osName
        self.osVersion = osVersion
        self.architecture = architecture
        self.bootID = bootID
    }
}

// MARK: - Threads and frames

/// One thread of the process, with its registers and stack.
public struct ThreadRecord: Codable, Sendable, Equatable {
    /// The thread id (the kernel's tid; the main thread's equals the pid).
    public var tid: Int32
    /// The thread name (`/proc/PID/task/TID/comm`), when readable.
    public var name: String?
    /// Whether this is the thread that took the fatal signal (known from the signal-delivery-stop, not guessed).
    public var crashed: Bool
    /// The general-purpose registers, in the architecture's order (`rip`, `rsp`, … or `x0`…`x30`, `sp`, `pc`, `pstate`).
    public var registers: [RegisterValue]
    /// The stack, innermost frame first; inline expansions appear as frames of their own.
    public var frames: [FrameRecord]
    /// Why unwinding stopped, when known: `end of stack`, `frame limit reached`, `stack pointer did not advance`,
    /// `unwinding failed: …`, `stack capture limit (N bytes) reached`, `registers unreadable`,
    /// `processing deadline passed`, `not unwound: minimal report`, `frames dropped: report size limit`… (text).
    public var unwindStopReason: String?

    /// Creates a thread record.
    public init(tid: Int32, name: String?, crashed: Bool, registers: [RegisterValue], frames: [FrameRecord],
                unwindStopReason: String? = nil) {
        self.tid = tid
        self.name = name
        self.crashed = crashed
        self.registers = registers
        self.frames = frames
        self.unwindStopReason = unwindStopReason
    }
}

/// One register of a thread: its architectural name and value.
public struct RegisterValue: Codable, Sendable, Equatable {
    /// The register's name as the architecture manuals spell it, lower case (`rip`, `x29`).
    public var name: String
    /// The register's value.
    public var value: Address

    /// Pairs a register name with its value.
    public init(_ name: String, _ value: Address) {
        self.name = name
        self.value = value
    }
}

/// One frame of a stack.
public struct FrameRecord: Codable, Sendable, Equatable {
    /// The frame's position in its stack, 0 for the innermost.
    public var index: Int
    /// The instruction address: the pc for frame 0, the return address for callers (PAC bits stripped).
    public var address: Address
    /// The index in `CrashReport.images` of the image containing `address`, nil when none does.
    public var imageIndex: Int?
    /// `address` as an offset into the image file (relative to its load address, as `addr2line` wants it).
    public var imageOffset: Address?
    /// The symbol as found in the binary (mangled), when symbolized.
    public var symbol: String?
    /// The function name, demangled (C++ and Swift), or the raw symbol when it is not mangled.
    public var function: String?
    /// `address` minus the start of the symbol, when symbolized.
    public var symbolOffset: Address?
    /// Which table the symbol came from: `symtab`, `dynsym` or `debuginfo` (a separate debug file, or DWARF).
    public var symbolSource: String?
    /// The source file, from DWARF line info.
    public var file: String?
    /// The source line, from DWARF line info.
    public var line: Int?
    /// The source column, from DWARF line info (0 and unknown are both nil).
    public var column: Int?
    /// Whether this frame is an inline expansion inside the next (outer) frame at the same address.
    public var inlined: Bool
    /// How the unwinder found this frame.
    public var how: FrameTrust

    /// Creates a frame; everything but the address and how it was found may be unknown.
    public init(index: Int, address: Address, imageIndex: Int? = nil, imageOffset: Address? = nil, symbol: String? = nil,
                function: String? = nil, symbolOffset: Address? = nil, symbolSource: String? = nil, file: String? = nil,
                line: Int? = nil, column: Int? = nil, inlined: Bool = false, how: FrameTrust) {
        self.index = index
        self.address = address
        self.imageIndex = imageIndex
        self.imageOffset = imageOffset
        self.symbol = symbol
        self.function = function
        self.symbolOffset = symbolOffset
        self.symbolSource = symbolSource
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
        self.how = how
    }
}

/// How a frame was found, most to least trustworthy; an open set of strings so later additions still decode.
public struct FrameTrust: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The JSON value.
    public var rawValue: String
    /// Wraps a JSON value; unknown values are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Taken from the thread's registers (frame 0).
    public static let context = FrameTrust(rawValue: "context")
    /// Unwound with call-frame information (`.eh_frame` / `.debug_frame`).
    public static let cfi = FrameTrust(rawValue: "cfi")
    /// Found through the caller's `.debug_frame` unwind table (Go; code built without `.eh_frame`).
    public static let debugFrame = FrameTrust(rawValue: "debugFrame")
    /// Unwound by following the frame-pointer chain.
    public static let framePointer = FrameTrust(rawValue: "framePointer")
    /// Found by scanning the stack for plausible return addresses.
    public static let scan = FrameTrust(rawValue: "scan")
    /// The return address at `[sp]` when the pc was outside every mapping (a call through a bad function pointer).
    public static let returnAddressAtSP = FrameTrust(rawValue: "returnAddressAtSP")
    /// An inline expansion found by the symbolizer at the same address as the next frame.
    public static let inline = FrameTrust(rawValue: "inline")
    /// Every value crashwatch writes in schema version 1, in the order above.
    public static let allKnown: [FrameTrust] = [.context, .cfi, .debugFrame, .framePointer, .scan, .returnAddressAtSP, .inline]

    /// The JSON value, for messages.
    public var description: String { rawValue }
}

// MARK: - Images

/// A loaded ELF image (executable or shared object) the report refers to.
public struct ImageRecord: Codable, Sendable, Equatable {
    /// The mapping's path with ` (deleted)` removed, or a pseudo-path such as `[vdso]`.
    public var path: String
    /// The last path component (`libc.so.6`).
    public var name: String
    /// The GNU build-id as lower-case hex, when the image has one.
    public var buildID: String?
    /// Where the image's first mapping (file offset 0) starts in the process.
    public var loadAddress: Address
    /// Bytes from the start of the first mapping to the end of the last one.
    public var size: Int
    /// The file offset of the first mapping (0 for ordinary ELF files).
    public var fileOffset: Address
    /// Whether the image ships with the app (see `InAppRule`).
    public var inApp: Bool
    /// The ELF machine (`x86_64`, `aarch64`), when read.
    public var architecture: String?
    /// Whether the file was deleted or replaced after it was mapped (its maps path ended in ` (deleted)`).
    public var deleted: Bool
    /// Whether this is the process's main executable.
    public var isMainExecutable: Bool
    /// The package the image belongs to, from its `.note.package` ELF note (systemd's packaging metadata).
    public var package: PackageRecord?

    /// Creates an image record; `name` defaults to the last component of `path`.
    public init(path: String, name: String? = nil, buildID: String?, loadAddress: Address, size: Int,
                fileOffset: Address = 0, inApp: Bool, architecture: String?, deleted: Bool = false,
                isMainExecutable: Bool = false, package: PackageRecord? = nil) {
        self.path = path
        self.name = name ?? ImageRecord.basename(path)
        self.buildID = buildID
        self.loadAddress = loadAddress
        self.size = size
        self.fileOffset = fileOffset
        self.inApp = inApp
        self.architecture = architecture
        self.deleted = deleted
        self.isMainExecutable = isMainExecutable
        self.package = package
    }

    /// The last non-empty component of a path (`/usr/lib/libc.so.6` → `libc.so.6`); the path itself when it has none.
    public static func basename(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// An image's packaging metadata (the FDO `.note.package` note: https://systemd.io/ELF_PACKAGE_METADATA/).
public struct PackageRecord: Codable, Sendable, Equatable {
    /// The packaging format (`deb`, `rpm`, …).
    public var type: String?
    /// The package name.
    public var name: String?
    /// The package version.
    public var version: String?
    /// The package architecture.
    public var architecture: String?

    public init(type: String? = nil, name: String? = nil, version: String? = nil, architecture: String? = nil) {
        self.type = type
        self.name = name
        self.version = version
        self.architecture = architecture
    }
}

// MARK: - Diagnostics

/// crashwatch's view of the conditions it captured under, to explain gaps in a report.
public struct Diagnostics: Codable, Sendable, Equatable {
    /// `/proc/sys/kernel/yama/ptrace_scope` (0 to 3), nil when Yama is absent.
    public var ptraceScope: Int?
    /// The crashed process's seccomp mode from `/proc/PID/status` (0 none, 1 strict, 2 filter), when read.
    public var seccompMode: Int?
    /// How many capture steps failed (the soft errors, plus failures too numerous to list).
    public var captureErrors: Int
    /// Whether the capture deadline passed, so the report holds what existed by then.
    public var deadlineExceeded: Bool
    /// How far the report got: `complete` (unwound and symbolized by the worker), `unwound` (processing
    /// stopped before symbols) or `minimal` (what the raw capture gave: registers and each thread's pc;
    /// processing did not finish) — the soft errors say why.
    public var processing: ProcessingState?

    /// Creates the diagnostics record.
    public init(ptraceScope: Int?, seccompMode: Int?, captureErrors: Int = 0, deadlineExceeded: Bool = false) {
        self.ptraceScope = ptraceScope
        self.seccompMode = seccompMode
        self.captureErrors = captureErrors
        self.deadlineExceeded = deadlineExceeded
    }
}

/// How far a report's processing got.
public enum ProcessingState: String, Codable, Sendable, Equatable {
    /// Unwound and symbolized.
    case complete
    /// Unwound, but symbols were not looked up (processing stopped after unwinding).
    case unwound
    /// Only what the raw capture gave: registers, the pcs, images and build-ids.
    case minimal
}

// MARK: - Addresses

/// A 64-bit address, offset or register value; written in JSON as a lower-case hex string, `"0x7f3a…"`.
public struct Address: Hashable, Comparable, Sendable, Codable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The numeric value.
    public var value: UInt64

    /// Wraps a numeric value.
    public init(_ value: UInt64) { self.value = value }

    /// Wraps an integer literal.
    public init(integerLiteral value: UInt64) { self.value = value }

    /// Parses `0x` followed by 1 to 16 hex digits (either case); nil otherwise.
    public init?(hex text: String) {
        guard text.hasPrefix("0x"), text.utf8.count > 2, text.utf8.count <= 18,
              let value = UInt64(text.dropFirst(2), radix: 16), text.dropFirst(2).allSatisfy(\.isHexDigit)
        else { return nil }
        self.value = value
    }

    /// The hex form, as `hex(_:)` writes it.
    public var description: String { hex(value) }

    /// Orders addresses numerically.
    public static func < (lhs: Address, rhs: Address) -> Bool { lhs.value < rhs.value }

    /// Decodes a hex string, refusing numbers and anything `init(hex:)` refuses.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = Address(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a hex string like 0x7f00, got '\(text)'")
        }
        self = address
    }

    /// Encodes the hex string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex(value))
    }
}
