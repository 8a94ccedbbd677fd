// LiveCapture.swift — the raw capture of a crashed process while it is held stopped (DESIGN.md "Capture
// and processing"): registers, the used part of every stack, maps, auxv, names, build-ids and notes from
// memory, and the bytes of images whose file is gone or is not a file at all. Nothing here unwinds,
// symbolizes or opens a path the process named: it reads /proc and the process's memory with code we
// trust, checks every length read from the process before use, and stays under byte caps. Runs on the
// tracer thread; what needs no tracer (/proc reads) on a helper thread meanwhile.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem
import FoundationEssentials

/// What a capture records and how hard processing tries.
public struct CaptureOptions: Sendable {
    /// Frames per thread at most (`--max-frames`).
    public var maxFrames: Int = 256
    /// What processing adds to frames (`--symbolicate`).
    public var symbolication: Symbolication = .full
    /// Directories searched for separate debug info before /usr/lib/debug (`--debug-dir`).
    public var debugDirectories: [String] = []
    /// debuginfod servers processing may ask (`--debuginfod`); none by default, whatever the environment says.
    public var debuginfodURLs: [String] = []
    /// Directories whose images are in-app (`--app-root`); empty means the executable's directory rule.
    public var appRoots: [String] = []
    /// Environment variables recorded by name (`--env-allow`); none by default.
    public var environmentAllowList: [String] = []
    /// Replace every argument after argv[0] with `<redacted>` (`--redact-args`).
    public var redactArguments: Bool = false
    /// App identity given on the command line; unset fields fall back to the crashed process's
    /// `CRASHWATCH_APP_NAME`, `CRASHWATCH_APP_VERSION` and `CRASHWATCH_APP_RELEASE`.
    public var app: AppRecord = AppRecord()
    /// Stack bytes captured per thread at most, from the stack pointer up (`--max-stack-bytes`).
    public var stackBytesPerThread: Int = 1 << 20
    /// Stack and image bytes captured per crash at most (`--max-capture-bytes`).
    public var captureBytes: Int = 64 << 20
    /// The full report's size limit in bytes: readers quarantine reports over 64 MiB.
    public var reportByteLimit: Int = 16 << 20
    /// The crashwatch version recorded in the report.
    public var crashwatchVersion: String
    /// The supervising run's id, recorded in every report of the run (`CrashReport.runID`).
    public var runID: String?

    public init(crashwatchVersion: String) { self.crashwatchVersion = crashwatchVersion }
}

/// How much symbol information processing adds to frames.
public enum Symbolication: String, Sendable, CaseIterable {
    /// Functions, source file:line:column and inline frames.
    case full
    /// Function names and offsets only.
    case functions
    /// Addresses and images only (`crashwatch symbolicate` can add the rest later).
    case none
}

/// A raw capture written to an in-memory file, with the image files opened while the process was held.
public struct CapturedCrash: Sendable {
    public let capture: RawCapture
    /// The capture file (a memfd), to hand to the worker: its memory regions, written while the process
    /// was held; `complete()` appends the metadata once it has been released.
    public let file: OwnedDescriptor
    let regionBytes: UInt64
    /// Image files opened through /proc (`RawImage.descriptor` indexes these).
    public let imageFiles: [OwnedDescriptor]
    /// The maps as parsed during the capture (the minimal report is built from them, not parsed again).
    public let table: ImageTable
}

/// The process's own record, its seccomp mode and the machine's ptrace scope: /proc reads that need no
/// stopped thread, made on the helper thread while the supervisor stops the threads (`LiveCapture.readAhead`).
struct ProcessFacts: Sendable {
    var process: ProcessRecord
    var ptraceScope: Int?
    var seccompMode: Int?
    /// Its credentials and dumpability: who its worker reads files as, and who may read its capture.
    var credentials: ProcessCredentials?
    var softErrors: [SoftError] = []

    /// `unreadable`: what of the process's memory is never read (`UnreadableFiles`).
    static func read(pid: Int32, through: Int32, options: CaptureOptions, unreadable: UnreadableFiles) -> ProcessFacts {
        let status = (try? ProcFS.threadStatus(pid)) ?? (try? ProcFS.threadStatus(through))
        let readable = unreadable.argumentsReadable(pid: pid, through: through)
        var facts = ProcessFacts(process: LiveCapture.processRecord(pid: pid, through: through, options: options, status: status,
                                                                    argumentsReadable: readable),
                                 ptraceScope: ProcFS.setting("/proc/sys/kernel/yama/ptrace_scope").flatMap { Int($0) },
                                 seccompMode: status?.seccompMode)
        facts.credentials = status.flatMap { ProcessCredentials.of(pid, status: $0) }
        if !readable {
            facts.softErrors.append(SoftError(stage: "process", message:
                "the command line and environment were not read: their area holds a page of a file on a FUSE file system, whose server could stall the read for ever"))
        }
        return facts
    }
}

/// What a capture reads from /proc before the threads are stopped, on the helper thread (`LiveCapture.readAhead`).
public struct CaptureReadAhead: Sendable {
    let pid: Int32
    /// What of the memory is never read: as detection found it (`known`), else read here.
    let unreadable: UnreadableFiles
    /// The process facts, read on `helper`.
    let facts: HelperComputation<ProcessFacts>

    init(pid: Int32, through: Int32, options: CaptureOptions, helper: HelperThread?, known: UnreadableFiles? = nil) {
        self.pid = pid
        let unreadable = known ?? UnreadableFiles(pid: through)
        self.unreadable = unreadable
        facts = HelperComputation(on: helper) { ProcessFacts.read(pid: pid, through: through, options: options, unreadable: unreadable) }
    }
}

/// The maps and auxv of a stopped process, parsed: read on the helper thread while the tracer thread reads
/// registers (the stacks are planned from them after).
struct MapsReading: Sendable {
    var text = ""
    var auxv: [UInt8] = []
    var table = ImageTable(mapsText: "")
    var softErrors: [SoftError] = []

    /// At most this many maps lines are read (a hostile process can map millions of pages).
    static let byteLimit = 64 << 20

    init() {}

    /// Reads through thread `through` (a zombie leader's maps read as empty).
    init(through: Int32) {
        do {
            let bytes = try ProcFS.readBytes("/proc/\(through)/maps", limit: Self.byteLimit)
            if bytes.count >= Self.byteLimit {
                softErrors.append(SoftError(stage: "images", message: "/proc/\(through)/maps is longer than \(Self.byteLimit) bytes; the rest was not read"))
            }
            text = String(decoding: bytes, as: UTF8.self)
        } catch {
            softErrors.append(SoftError(stage: "images", message: "\(error)"))
        }
        auxv = (try? ProcFS.readBytes("/proc/\(through)/auxv", limit: 4096)) ?? []
        table = ImageTable(mapsText: text)
    }
}

/// Raw captures of live, stopped processes.
public enum LiveCapture {
    /// Handled faults whose stacks are captured besides the threads' own (the newest).
    static let maximumFaultStacks = 16
    /// How long the tracer thread waits for one of the helper's /proc reads before doing it itself (it cannot
    /// block on /proc, but the hold never waits on a hunch).
    static let helperWait: Int64 = 100_000_000

    /// The thread a capture hands work to that needs no tracer (/proc reads; the caller's minimal report),
    /// so that it runs while the tracer thread — the only one ptrace answers — stops threads and reads
    /// registers and stacks. Nil when none could be started.
    public static let helper: HelperThread? = HelperThread.start()

    /// Starts reading what a capture of `crash` needs and its threads need not be stopped for (the process
    /// record), on the helper thread: call before stopping them, and pass the result to `begin`.
    public static func readAhead(_ crash: DetectedCrash, options: CaptureOptions) -> CaptureReadAhead {
        CaptureReadAhead(pid: crash.pid, through: crash.tid, options: options, helper: helper, known: crash.unreadableFiles)
    }

    /// A stopped thread's registers (its name and stack are read apart); a soft error when they cannot be read.
    static func readRegisters(_ tid: Int32, crashed: Bool, errors: inout [SoftError]) -> RawThread {
        do {
            return RawThread(tid: tid, name: nil, crashed: crashed, registers: try Ptrace.registerSet(tid))
        } catch {
            errors.append(SoftError(stage: "registers", tid: tid, message: "\(error)"))
            return RawThread(tid: tid, name: nil, crashed: crashed, registers: [], missingReason: "registers unreadable")
        }
    }

    /// Captures `crash` (whose threads `stopped` holds) whole: `begin` and `copyMemory()` in a row.
    public static func capture(_ crash: DetectedCrash, stopped: StoppedProcess, options: CaptureOptions,
                               deadlineNanoseconds: Int64, hangReportID: String? = nil, exit: ExitRecord? = nil)
        throws(SystemError) -> CapturedCrash {
        try begin(crash, stopped: stopped, options: options, deadlineNanoseconds: deadlineNanoseconds,
                  hangReportID: hangReportID, exit: exit).copyMemory()
    }

    /// The first part of a capture of `crash` (whose threads `stopped` holds): every thread's registers, the
    /// maps, the images' identities and the process record — what the minimal report is made of
    /// (`CaptureInProgress.capture`). `copyMemory` reads the rest — the threads' names (but the crashed
    /// thread's), the stacks, the bytes of deleted images — and the caller may run it on the helper thread
    /// while this one writes the minimal report: 65 names and stacks are ~0.8 ms, the report about 1 ms.
    /// Never fails as a whole: what could not be read becomes a soft error; only a failure to create the
    /// capture file itself is thrown. `hangReportID` links a crash to the hang report taken of the same
    /// process before (a watchdog's kill); `exit` makes the capture an abnormal exit's (a SIGKILL death seen
    /// at the threads' exit stops).
    public static func begin(_ crash: DetectedCrash, stopped: StoppedProcess, options: CaptureOptions,
                             deadlineNanoseconds: Int64, hangReportID: String? = nil, exit: ExitRecord? = nil,
                             readAhead: CaptureReadAhead? = nil) throws(SystemError) -> CaptureInProgress {
        let started = Clock.monotonicNanoseconds()
        let helperDeadline = { min(Clock.monotonicNanoseconds() + helperWait, stopped.deadlineNanoseconds) }
        let ahead = readAhead.flatMap { $0.pid == crash.pid ? $0 : nil }
            ?? CaptureReadAhead(pid: crash.pid, through: crash.tid, options: options, helper: helper, known: crash.unreadableFiles)
        // The maps on the helper thread, the registers here meanwhile; then the stacks are planned.
        let maps = HelperComputation(on: helper) { [through = crash.tid] in MapsReading(through: through) }
        let file = try MemoryFile.create(name: "crashwatch-capture-\(crash.pid)")
        var threads: [RawThread] = []
        var stackPointers: [(index: Int, sp: UInt64)] = []
        var registerErrors: [SoftError] = []
        for tid in stopped.threads {
            // A hang and a SIGKILL have no crashed thread: every thread was stopped from outside.
            let thread = readRegisters(tid, crashed: crash.hang == nil && exit == nil && tid == stopped.crashedTID, errors: &registerErrors)
            if let sp = RegisterDecoder.stackPointer(thread.registers, architecture: .host) { stackPointers.append((threads.count, sp)) }
            threads.append(thread)
        }
        let (mapsRead, mapsFromHelper) = maps.value(until: helperDeadline())
        var reader = Reader(pid: crash.pid, through: crash.tid, options: options, deadline: stopped.deadlineNanoseconds, maps: mapsRead,
                            unreadable: ahead.unreadable)
        reader.softErrors += registerErrors
        var plans: [StackPlan] = []
        for (index, sp) in stackPointers {
            if let plan = reader.planStack(near: sp, tid: threads[index].tid) {
                plans.append(StackPlan(index: index, tid: plan.tid, low: plan.low, length: plan.length, wanted: plan.wanted))
            }
        }
        let images = reader.identifyImages()
        let (read, factsFromHelper) = ahead.facts.value(until: helperDeadline())
        for index in threads.indices where threads[index].tid == crash.crashedThreadID {
            threads[index].name = crash.crashedThreadName.map(capped)
        }
        let notStopped = [(stopped.unstopped, "the thread did not stop within a quarter of the capture's time (a sleep no signal ends): not stopped"),
                          (stopped.inVfork, "the thread was in vfork(), which it leaves only when its child execs or exits: not stopped")]
        for (tids, why) in notStopped {
            for tid in tids {
                threads.append(RawThread(tid: tid, name: ProcFS.threadName(pid: crash.pid, tid: tid), crashed: false, registers: [], missingReason: why))
                reader.softErrors.append(SoftError(stage: "stop", tid: tid, message: why))
            }
        }
        let fromHelper = mapsFromHelper && factsFromHelper
        reader.softErrors += read.softErrors
        var capture = RawCapture(
            reportID: CrashReport.newID(), pid: crash.pid, signal: RawSignal(crash.signal),
            originalFault: crash.originalFault.map(RawFault.init), handledFaults: crash.handledFaults.map(RawFault.init),
            timeNanoseconds: crash.timeNanoseconds, startedNanoseconds: started, holdDurationMs: 0,
            architecture: .host, maps: reader.mapsText, auxv: Hex.string(reader.auxv),
            pointerAuthenticationMask: reader.pointerAuthenticationMask(tid: stopped.crashedTID),
            threads: threads, images: images, process: read.process, host: CaptureHost.record(),
            ptraceScope: read.ptraceScope, seccompMode: read.seccompMode,
            capturedBytes: 0, stackByteLimitPerThread: options.stackBytesPerThread,
            captureByteLimit: options.captureBytes, softErrors: reader.softErrors,
            options: ProcessingOptions(
                maxFrames: options.maxFrames, symbolication: options.symbolication.rawValue,
                debugDirectories: options.debugDirectories, appRoots: options.appRoots,
                debuginfodURLs: options.debuginfodURLs, deadlineNanoseconds: deadlineNanoseconds,
                reportByteLimit: options.reportByteLimit))
        if let hang = crash.hang {
            capture.kind = .hang
            capture.hang = HangRecord(
                source: "watchdog", startTime: RFC3339.format(nanosecondsSinceEpoch: hang.lastPingNanoseconds),
                durationMs: Double(max(hang.silenceNanoseconds, 0) / 1_000) / 1_000,
                watchdogTimeoutMs: hang.watchdogTimeoutNanoseconds.map { Double($0 / 1_000) / 1_000 })
        }
        capture.credentials = read.credentials
        capture.hangReportID = hangReportID
        capture.runID = options.runID
        capture.seenAtExit = crash.seenAtExit
        var laterErrors: [SoftError] = []
        if let exit {
            capture.kind = .abnormalExit
            capture.exit = exit
        } else if crash.seenAtExit {
            laterErrors.append(SoftError(stage: "signal", tid: crash.tid, message:
                "\(crash.signal.signal.name) reached no signal-delivery stop: the kernel forced it (a seccomp filter's kill, or a signal frame it could not set up); captured at the threads' exit, its siginfo is not known"))
        }
        capture.softErrors += laterErrors
        capture.holdDurationMs = Double((Clock.monotonicNanoseconds() - started) / 1_000) / 1_000
        return CaptureInProgress(capture: capture, reader: reader, writer: RawCaptureWriter(file: file), file: file,
                                 plans: plans, faults: crash.handledFaults.suffix(maximumFaultStacks).map { ($0.tid, $0.registers) },
                                 laterErrors: laterErrors, helper: fromHelper ? helper : nil)
    }
}

/// A capture in progress on its way to the helper thread, which takes it (once: nil after).
private final class Handover: @unchecked Sendable {
    private var capture: CaptureInProgress?

    init(_ capture: consuming CaptureInProgress) { self.capture = .some(capture) }

    func take() -> CaptureInProgress? { capture.take() }
}

/// A capture whose registers, maps, image identities and process record are read (`capture`: all a minimal
/// report needs) and whose thread names and memory are not yet: `copyMemory()` completes it, on the helper
/// thread while the tracer thread writes the minimal report.
public struct CaptureInProgress: ~Copyable {
    /// The capture so far: no thread names but the crashed thread's, no stack ranges, image copies or image
    /// files yet, nor their soft errors.
    public let capture: RawCapture
    fileprivate var reader: Reader
    fileprivate var writer: RawCaptureWriter
    fileprivate let file: OwnedDescriptor
    fileprivate let plans: [StackPlan]
    /// Each handled fault's thread and registers: its stack is copied too (a handler on an alternate stack).
    fileprivate let faults: [(tid: Int32, registers: [UInt8])]
    /// Soft errors that come after the reader's in the capture.
    fileprivate let laterErrors: [SoftError]
    /// The helper thread, when it answered in time during `begin` (nil: do its work on this thread).
    public let helper: HelperThread?

    fileprivate init(capture: RawCapture, reader: consuming Reader, writer: consuming RawCaptureWriter, file: OwnedDescriptor,
                     plans: [StackPlan], faults: [(tid: Int32, registers: [UInt8])], laterErrors: [SoftError], helper: HelperThread?) {
        self.capture = capture
        self.reader = reader
        self.writer = writer
        self.file = file
        self.plans = plans
        self.faults = faults
        self.laterErrors = laterErrors
        self.helper = helper
    }

    /// The maps as parsed during the capture (the minimal report is built from them, not parsed again).
    public var table: ImageTable { reader.table }

    /// `copyMemory()` on `helper` (nothing in it needs the tracer), or at once without one: wait for it with
    /// `wait(until:)` (its value is never nil).
    public consuming func copyMemory(on helper: HelperThread?) -> HelperComputation<CapturedCrash?> {
        let handover = Handover(self)
        return HelperComputation(on: helper) { handover.take()?.copyMemory() }
    }

    /// Reads the threads' names and copies the memory — every stack in few system calls (a read each
    /// and one write per batch), the stacks of handled faults, the non-writable bytes of
    /// images whose file is gone — and opens the files of deleted and memfd images: the complete capture.
    public consuming func copyMemory() -> CapturedCrash {
        var capture = self.capture
        let names = ProcFS.ThreadNames(pid: capture.pid)
        for index in capture.threads.indices where capture.threads[index].name == nil {
            capture.threads[index].name = names.name(of: capture.threads[index].tid).map(capped)
        }
        for (index, range, cut) in reader.copyStacks(plans, writer: &writer) {
            capture.threads[index].stackStart = range.lowerBound
            capture.threads[index].stackEnd = range.upperBound
            capture.threads[index].stackCapped = cut
        }
        // Handlers on an alternate stack: each fault's own stack is elsewhere.
        for fault in faults {
            if let sp = RegisterDecoder.stackPointer(fault.registers, architecture: .host) {
                reader.captureStack(near: sp, tid: fault.tid, writer: &writer)
            }
        }
        let files = reader.copyImages(&capture.images, writer: &writer)
        capture.capturedBytes = reader.capturedBytes
        capture.softErrors = reader.softErrors + laterErrors
        capture.holdDurationMs = Double((Clock.monotonicNanoseconds() - capture.startedNanoseconds) / 1_000) / 1_000
        return CapturedCrash(capture: capture, file: file, regionBytes: writer.regionBytes, imageFiles: files, table: reader.table)
    }
}
extension LiveCapture {
    /// The process record of a live (or stopped, or exiting) process, read from /proc through thread `through`.
    public static func processRecord(pid: Int32, through: Int32, options: CaptureOptions) -> ProcessRecord {
        processRecord(pid: pid, through: through, options: options,
                      status: (try? ProcFS.threadStatus(pid)) ?? (try? ProcFS.threadStatus(through)))
    }

    /// The process record, with the process's status read already (`/proc/PID/status`, else the thread's).
    /// `argumentsReadable` false: the command line and environment are not read (a page of a FUSE file is in
    /// their area: `UnreadableFiles`); the record has neither.
    static func processRecord(pid: Int32, through: Int32, options: CaptureOptions, status: ProcStatus?,
                              argumentsReadable: Bool? = nil) -> ProcessRecord {
        let readable = argumentsReadable ?? UnreadableFiles(pid: pid).argumentsReadable(pid: pid, through: through)
        let exeLink = ProcFS.readLink("/proc/\(through)/exe") ?? ""
        let executable = capped(InAppRule.deletedSuffixRemoved(exeLink).path)
        var arguments = (readable ? ProcFS.commandLineBytes(through) : []).prefix(Reader.maximumArguments)
        // A program that rewrote its title leaves the rest of its argument area as empty arguments.
        var trimmed = 0
        while arguments.count > 1, arguments.last?.isEmpty == true {
            arguments.removeLast()
            trimmed += 1
        }
        var commandLine = arguments.map { capped(String(decoding: $0, as: UTF8.self)) }
        // Bytes that are not UTF-8 read as U+FFFD in `commandLine`; the exact bytes go beside it.
        let exact = options.redactArguments || arguments.allSatisfy { String(validating: $0, as: UTF8.self) != nil }
            ? nil : arguments.map { Hex.string(Array($0.prefix(maximumNameBytes))) }
        if options.redactArguments { commandLine = CommandLineRedaction.redacted(commandLine) }
        let environment = readable ? ProcFS.environment(through) : []
        func variable(_ name: String) -> String? { environment.last(where: { $0.name == name }).map { capped($0.value) } }
        var allowed: [String: String] = [:]
        for name in options.environmentAllowList { if let value = variable(name) { allowed[name] = value } }
        let app = AppRecord(
            name: options.app.name ?? variable("CRASHWATCH_APP_NAME"),
            version: options.app.version ?? variable("CRASHWATCH_APP_VERSION"),
            release: options.app.release ?? variable("CRASHWATCH_APP_RELEASE"))
        let cgroup = CgroupInfo.of(through)
        var record = ProcessRecord(
            pid: pid, ppid: status?.ppid ?? 0, executable: executable, commandLine: Array(commandLine),
            redacted: options.redactArguments, cwd: ProcFS.readLink("/proc/\(through)/cwd").map(capped),
            uid: status?.uids.first ?? 0, gid: status?.gids.first ?? 0,
            startTime: ProcessClock.startTimeNanoseconds(pid: pid).map { RFC3339.format(nanosecondsSinceEpoch: $0) },
            comm: status?.name ?? "", cgroup: cgroup?.path.map(capped), systemdUnit: cgroup?.unit.map(capped),
            systemdInvocationID: variable("INVOCATION_ID"),
            app: app.name == nil && app.version == nil && app.release == nil ? nil : app,
            environment: allowed)
        record.commandLineTrimmed = trimmed
        record.commandLineHex = exact
        return record
    }
}

extension CapturedCrash {
    /// Appends the metadata and the trailer to the capture file, making it a complete capture — after the
    /// release: encoding it needs nothing from the process.
    public func complete() throws(SystemError) {
        try RawCaptureWriter(file: file, regionBytes: regionBytes).finish(capture)
    }
}

/// `--redact-args`: everything the kernel shows after the program's name goes, whatever its shape.
public enum CommandLineRedaction {
    /// argv[0] and `<redacted>` for each later argument; a program that rewrote its title into one
    /// string (setproctitle: `redis-server *:6379 --requirepass x`, or a name given with `exec -a`) keeps
    /// only its first word.
    public static func redacted(_ commandLine: [String]) -> [String] {
        guard let first = commandLine.first else { return [] }
        if commandLine.count > 1 {
            return [first] + Array(repeating: "<redacted>", count: commandLine.count - 1)
        }
        guard let blank = first.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return commandLine }
        return [String(first[..<blank]) + " <redacted>"]
    }
}

/// A stack to copy: which thread (its index among the capture's threads), where, and how much of how much.
struct StackPlan {
    let index: Int
    let tid: Int32
    let low: UInt64
    let length: UInt64
    let wanted: UInt64
}

extension LiveCapture {
    /// Gets the capture path ready before the first crash, so a held process does not wait for one-time
    /// costs: what cannot change until the next boot is read, and a minimal report of a made-up crash of
    /// this process is built and encoded once, as the tracer thread builds one while a process is held
    /// (Swift instantiates type metadata and looks up conformances on first use: about 0.2 ms of the first
    /// report otherwise). Call once, on the tracer thread before the command starts: it starts no thread.
    public static func prepare() {
        CaptureHost.prepare()
        let registers = [UInt8](repeating: 0, count: Architecture.host.prstatusSize)
        let process = ProcessRecord(pid: 1, ppid: 0, executable: "", commandLine: [], uid: 0, gid: 0, comm: "")
        let maps = (try? ProcFS.readBytes("/proc/self/maps", limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let capture = RawCapture(
            reportID: CrashReport.newID(), pid: 1, signal: RawSignal(SignalInfo(signo: 11, code: 1, address: 0)),
            originalFault: nil, timeNanoseconds: Clock.realtimeNanoseconds(), startedNanoseconds: Clock.monotonicNanoseconds(),
            holdDurationMs: 0, architecture: .host, maps: maps, auxv: "", pointerAuthenticationMask: nil,
            threads: [RawThread(tid: 1, name: "prepare", crashed: true, registers: registers)],
            images: [], process: process, host: CaptureHost.record(), ptraceScope: nil, seccompMode: nil,
            capturedBytes: 0, stackByteLimitPerThread: 0, captureByteLimit: 0, softErrors: [],
            options: ProcessingOptions(maxFrames: 1, symbolication: "functions", debugDirectories: [], appRoots: [],
                                       debuginfodURLs: [], deadlineNanoseconds: 0, reportByteLimit: 1 << 20))
        _ = try? ReportBuilder.minimal(capture, crashwatchVersion: "", table: ImageTable(mapsText: maps)).encodedJSON()
    }

    /// Starts `helper` and warms it up with the reads it makes while a process is held, of this process
    /// (the process record, the maps, the threads' names), so that no crash pays for creating the thread,
    /// its stack's first pages or first-use costs. Call once the command runs: see
    /// `SupervisorObserver.supervisorStarted`.
    public static func startHelper() {
        _ = HelperComputation(on: helper) {
            let pid = SelfProcess.pid
            let facts = ProcessFacts.read(pid: pid, through: pid, options: CaptureOptions(crashwatchVersion: ""), unreadable: UnreadableFiles(pid: pid))
            let maps = MapsReading(through: pid)
            let names = ProcFS.ThreadNames(pid: pid)
            return (facts.process.pid, maps.table.count, names.name(of: pid))
        }
    }
}

/// This machine, as a report records it.
public enum CaptureHost {
    public static func record() -> HostRecord {
        let uname = UnameInfo.current()
        return HostRecord(
            hostname: uname.nodename, kernelRelease: uname.release, kernelVersion: uname.version,
            osName: sameForThisBoot.os.name, osVersion: sameForThisBoot.os.version, architecture: Architecture.host.rawValue,
            bootID: sameForThisBoot.bootID)
    }

    /// Reads what cannot change until the next boot (os-release, boot id, boot time) now, so that no
    /// capture pays for it while a process is held. Call once before the first crash can happen.
    public static func prepare() {
        _ = sameForThisBoot
        _ = ProcessClock.bootTimeSeconds
    }

    /// What cannot change while crashwatch runs, read once rather than while a process is held.
    private static let sameForThisBoot = (os: OSRelease.current(), bootID: ProcFS.setting("/proc/sys/kernel/random/boot_id"))
}

/// One capture's reading state.
private struct Reader {
    let pid: Int32
    /// A live thread of the process (the crashed one) through which its memory and /proc files are read:
    /// the thread-group leader may have exited (pthread_exit) and a zombie leader reads as empty.
    let through: Int32
    /// Its memory (nil when it could not be opened: nothing is read then).
    let memory: ProcessMemory?
    let options: CaptureOptions
    let deadline: Int64
    let mapsText: String
    let auxv: [UInt8]
    let table: ImageTable
    var softErrors: [SoftError] = []
    var capturedBytes = 0
    /// Captured [start, end) ranges, so a stack shared by two records is copied once.
    var captured: [Range<UInt64>] = []
    /// A reusable read buffer: regions are copied through it into the capture file.
    var buffer = [UInt8](repeating: 0, count: 64 << 10)

    /// Bytes below the stack pointer a leaf function may use without moving it (x86-64's red zone).
    static let redZone: UInt64 = Architecture.host == .x86_64 ? 128 : 0

    init(pid: Int32, through: Int32, options: CaptureOptions, deadline: Int64, maps: MapsReading, unreadable: UnreadableFiles) {
        self.pid = pid
        self.through = through
        memory = ProcessMemory(through: through)
        self.options = options
        self.deadline = deadline
        mapsText = maps.text
        auxv = maps.auxv
        table = maps.table
        softErrors = maps.softErrors
        self.unreadable = unreadable
        imageCandidates = maps.table.images.prefix(Self.maximumImages).filter { image in
            (image.kind == .file || image.kind == .memfd || image.kind == .vdso)
                && !image.path.hasPrefix("/dev/") && !image.path.hasPrefix("/SYSV")
        }
    }

    /// Mappings never read: pages of files on FUSE file systems (see `UnreadableFiles`).
    let unreadable: UnreadableFiles

    /// Whether `mapping` is no such page.
    func mayRead(_ mapping: MemoryMapping) -> Bool { !unreadable.contains(mapsDevice: mapping.device) }

    /// Whether none of `image`'s mappings is such a page.
    func mayRead(_ image: LoadedImage) -> Bool { image.mappings.allSatisfy(mayRead) }

    /// Whether `mapping` may be read; a soft error (in `stage`) naming it when not.
    mutating func mayRead(_ mapping: MemoryMapping, what: String, stage: String = "images", tid: Int32? = nil) -> Bool {
        guard !mayRead(mapping) else { return true }
        softErrors.append(SoftError(stage: stage, tid: tid, image: mapping.path.isEmpty ? nil : mapping.path, message:
            "\(what) not read: a file on a FUSE file system, whose server could stall the read for ever"))
        return false
    }

    var remainingBytes: Int { max(options.captureBytes - capturedBytes, 0) }

    // MARK: Stacks

    /// What to copy of the stack `sp` is in: from below the red zone up to the end of its mapping, at most
    /// the per-thread cap (reserved against the total cap now). A stack pointer in a guard page (a stack
    /// overflow) or just below a mapping starts at the next readable mapping above it.
    mutating func planStack(near sp: UInt64, tid: Int32) -> StackPlan? {
        guard let mapping = table.mappings.first(where: { $0.end > sp && $0.permissions.isReadable && $0.start <= sp &+ 65536 }) else {
            softErrors.append(SoftError(stage: "stack", tid: tid, message: "stack pointer \(hex(sp)) is not in readable memory"))
            return nil
        }
        guard mayRead(mapping, what: "the stack at \(hex(sp))", stage: "stack", tid: tid) else { return nil }
        let low = max(mapping.start, sp >= Self.redZone ? sp - Self.redZone : 0)
        if captured.contains(where: { $0.contains(low) }) { return nil }
        let wanted = mapping.end - low
        let allowed = UInt64(min(options.stackBytesPerThread, remainingBytes - plannedBytes))
        let length = min(wanted, allowed)
        if length == 0 {
            softErrors.append(SoftError(stage: "stack", tid: tid, message: "capture byte limit (\(options.captureBytes)) reached: stack not captured"))
            return nil
        }
        captured.append(low..<(low + length))
        plannedBytes += Int(length)
        return StackPlan(index: -1, tid: tid, low: low, length: length, wanted: wanted)
    }

    /// Copies planned stacks in batches — a read per stack and one write each — falling back to a
    /// range at a time where a stack cannot be read whole. Returns, per plan copied, its thread's index,
    /// the range captured and whether a cap cut it.
    mutating func copyStacks(_ plans: [StackPlan], writer: inout RawCaptureWriter) -> [(Int, Range<UInt64>, Bool)] {
        var results: [(Int, Range<UInt64>, Bool)] = []
        var start = 0
        while start < plans.count {
            // A batch: up to 512 stacks and 8 MiB, each behind a 16-byte region header and padded to 8.
            var end = start, size = 0
            while end < plans.count, end - start < 512, size + 16 + Int(plans[end].length) + 8 <= Self.batchBytes || end == start {
                size += 16 + Int(plans[end].length) + 8
                end += 1
            }
            let batch = Array(plans[start..<end])
            start = end
            if batch.count == 1 && Int(batch[0].length) + 24 > Self.batchBytes {
                plannedBytes -= Int(batch[0].length)
                let got = copy(batch[0].low, length: batch[0].length, writer: &writer)
                if got > 0 { results.append((batch[0].index, batch[0].low..<(batch[0].low + got), batch[0].length < batch[0].wanted)) }
                continue
            }
            var bytes = [UInt8](repeating: 0, count: size)
            var offsets: [Int] = []
            var complete = 0
            bytes.withUnsafeMutableBytes { raw in
                var ranges: [(address: UInt64, buffer: UnsafeMutableRawBufferPointer)] = []
                var at = 0
                for plan in batch {
                    offsets.append(at)
                    ranges.append((plan.low, UnsafeMutableRawBufferPointer(rebasing: raw[at + 16..<at + 16 + Int(plan.length)])))
                    at += 16 + Int(plan.length) + (8 - Int(plan.length) % 8) % 8
                }
                var left = memory?.read(ranges: ranges) ?? 0
                for plan in batch where left >= Int(plan.length) {
                    left -= Int(plan.length)
                    complete += 1
                }
                for (number, plan) in batch.prefix(complete).enumerated() {
                    raw.storeBytes(of: plan.low.littleEndian, toByteOffset: offsets[number], as: UInt64.self)
                    raw.storeBytes(of: plan.length.littleEndian, toByteOffset: offsets[number] + 8, as: UInt64.self)
                }
            }
            if complete > 0 {
                let last = batch[complete - 1]
                let used = offsets[complete - 1] + 16 + Int(last.length) + (8 - Int(last.length) % 8) % 8
                do {
                    try writer.appendRegions(bytes[..<used], regionCount: complete)
                    for plan in batch.prefix(complete) {
                        plannedBytes -= Int(plan.length)
                        capturedBytes += Int(plan.length)
                        results.append((plan.index, plan.low..<(plan.low + plan.length), plan.length < plan.wanted))
                    }
                } catch {
                    softErrors.append(SoftError(stage: "capture", message: "cannot write the capture file"))
                }
            }
            // The rest of the batch one range at a time: a stack that runs into unreadable memory keeps
            // what could be read.
            for plan in batch.dropFirst(complete) {
                plannedBytes -= Int(plan.length)
                let got = copy(plan.low, length: plan.length, writer: &writer)
                if got > 0 {
                    results.append((plan.index, plan.low..<(plan.low + got), plan.length < plan.wanted || got < plan.length))
                } else {
                    softErrors.append(SoftError(stage: "stack", tid: plan.tid, message: "stack at \(hex(plan.low)) is not readable"))
                }
            }
        }
        return results
    }

    static let batchBytes = 8 << 20
    /// Stack bytes planned but not yet copied (reserved against the total cap).
    var plannedBytes = 0

    /// Copies the used part of the stack `sp` is in right away (a fault's own stack).
    @discardableResult
    mutating func captureStack(near sp: UInt64, tid: Int32, writer: inout RawCaptureWriter) -> (Range<UInt64>, Bool)? {
        guard let plan = planStack(near: sp, tid: tid) else { return nil }
        plannedBytes -= Int(plan.length)
        let low = plan.low, length = plan.length, wanted = plan.wanted
        let got = copy(low, length: length, writer: &writer)
        if got == 0 {
            softErrors.append(SoftError(stage: "stack", tid: tid, message: "stack at \(hex(low)) is not readable"))
            return nil
        }
        let range = low..<(low + got)
        return (range, length < wanted)
    }

    /// Copies [address, address + length) of the process into the capture; returns the bytes copied
    /// (fewer when memory ends early).
    mutating func copy(_ address: UInt64, length: UInt64, writer: inout RawCaptureWriter) -> UInt64 {
        var done: UInt64 = 0
        let chunk = UInt64(buffer.count - 24)
        while done < length {
            if Clock.monotonicNanoseconds() >= deadline {
                softErrors.append(SoftError(stage: "deadline", message: "capture deadline passed while copying memory at \(hex(address &+ done))"))
                break
            }
            let want = Int(min(chunk, length - done))
            var failed = false
            let got = buffer.withUnsafeMutableBytes { raw -> Int in
                // Read after a 16-byte gap for the region header, so the region goes out in one write.
                let got = memory?.read(address: address &+ done, into: UnsafeMutableRawBufferPointer(rebasing: raw[16..<16 + want])) ?? 0
                guard got > 0 else { return 0 }
                do {
                    try writer.appendRegion(address: address &+ done, inPlace: raw, count: got)
                } catch {
                    failed = true
                    return 0
                }
                return got
            }
            if failed {
                softErrors.append(SoftError(stage: "capture", message: "cannot write the capture file"))
                break
            }
            if got == 0 { break }
            done += UInt64(got)
            capturedBytes += got
            if got < want { break }
        }
        return done
    }

    // MARK: Images

    /// The images a capture identifies: file-backed, memfd and the vdso (shared anonymous memory, System V
    /// segments and device mappings are file-backed but never ELF images).
    let imageCandidates: [LoadedImage]

    /// Every image's identity (build-id, architecture, package) from the process's memory, one record per
    /// `imageCandidates` entry.
    mutating func identifyImages() -> [RawImage] {
        var records: [RawImage] = []
        // Headers and notes are nearly always in an image's first page: those of every image in one read.
        let firstPages = memory?.read(addresses: imageCandidates.filter(mayRead).compactMap(\.baseAddress),
                                      count: Self.pageSize) ?? [:]
        for image in imageCandidates {
            var record = RawImage(start: image.start)
            if let unreadableMapping = image.mappings.first(where: { !mayRead($0) }) {
                _ = mayRead(unreadableMapping, what: "the image's memory")
            } else if let base = image.baseAddress, let identity = identify(base: base, firstPage: firstPages[base]) {
                record.buildID = identity.buildID.map(Hex.string)
                record.architecture = identity.architecture
                record.package = identity.package
            } else if image.kind != .vdso {
                softErrors.append(SoftError(stage: "images", image: image.path, message: "no ELF build-id in the process's memory"))
            }
            records.append(record)
        }
        if table.images.count > Self.maximumImages {
            softErrors.append(SoftError(stage: "images", message: "\(table.images.count) images mapped; only the first \(Self.maximumImages) were identified"))
        }
        return records
    }

    /// For the images of `records` (from `identifyImages`) whose file is gone or is no file (deleted, memfd,
    /// vdso): their non-writable bytes, and for deleted and memfd images the file itself through /proc.
    /// Returns the files opened, which `RawImage.descriptor` indexes.
    mutating func copyImages(_ records: inout [RawImage], writer: inout RawCaptureWriter) -> [OwnedDescriptor] {
        var files: [OwnedDescriptor] = []
        let executable = ProcFS.readLink("/proc/\(through)/exe").map { InAppRule.deletedSuffixRemoved($0).path }
        for (index, image) in imageCandidates.enumerated() where index < records.count {
            guard mayRead(image) else { continue }
            let gone = image.isDeleted || image.kind == .memfd
            if gone || image.kind == .vdso {
                records[index].copied = copyImage(image, writer: &writer)
            }
            if gone, files.count < Self.maximumImageFiles, let file = openMappedFile(image, isExecutable: image.path == executable) {
                records[index].descriptor = files.count
                files.append(file)
            }
        }
        return files
    }

    static let maximumImages = 8192
    static let maximumImageFiles = 64

    /// Copies an image's readable, non-writable mappings (headers, code, unwind tables, dynamic symbols).
    mutating func copyImage(_ image: LoadedImage, writer: inout RawCaptureWriter) -> Bool {
        var copiedAll = true
        for mapping in image.mappings where mapping.permissions.isReadable && !mapping.permissions.isWritable {
            let length = min(mapping.size, UInt64(remainingBytes))
            if length < mapping.size {
                softErrors.append(SoftError(stage: "images", image: image.path, message: "capture byte limit (\(options.captureBytes)) reached: image bytes not copied"))
                copiedAll = false
            }
            if length == 0 { break }
            if copy(mapping.start, length: length, writer: &writer) < length { copiedAll = false }
        }
        return copiedAll
    }

    /// The file behind a deleted or memfd image, through the kernel's own link to the mapped inode:
    /// /proc/PID/exe for the executable, /proc/PID/map_files for the rest (root only). Never blocks.
    func openMappedFile(_ image: LoadedImage, isExecutable: Bool) -> OwnedDescriptor? {
        var paths: [String] = []
        if isExecutable { paths.append("/proc/\(through)/exe") }
        if let first = image.mappings.first {
            paths.append("/proc/\(through)/map_files/\(String(first.start, radix: 16))-\(String(first.end, radix: 16))")
        }
        for path in paths {
            if let file = try? UntrustedFile.open(path, followLinks: true) { return file }
        }
        return nil
    }

    /// Build-id, architecture and package note from the ELF header and notes in the process's memory.
    /// Every field read is checked: a corrupt header yields nil, never a huge read or a trap.
    /// `firstPage`, when given, is the image's first `pageSize` bytes, read already: what lies in it is not read again.
    func identify(base: UInt64, firstPage: [UInt8]?) -> ImageIdentity? {
        ImageIdentity.read(base: base) { address, count in
            if let page = firstPage, address >= base, count <= page.count, address - base <= UInt64(page.count - count) {
                let offset = Int(address - base)
                return Array(page[offset..<offset + count])
            }
            return memory?.read(address: address, count: count) ?? []
        }
    }

    static let pageSize = 4096

    /// aarch64 only: the code-pointer PAC mask, when the thread uses pointer authentication.
    func pointerAuthenticationMask(tid: Int32) -> UInt64? {
        guard Architecture.host == .aarch64,
              let bytes = try? Ptrace.registerSet(tid, noteType: Int32(PointerAuthenticationMask.noteType), capacity: 16),
              let mask = try? RegisterDecoder.decodePointerAuthenticationMask(bytes) else { return nil }
        return mask.instructionMask
    }

    static let maximumArguments = 4096
}

/// What an image's ELF header and notes say about it.
struct ImageIdentity {
    var buildID: [UInt8]?
    var architecture: Architecture?
    var package: PackageRecord?

    static let headerByteLimit = 64 << 10
    static let noteByteLimit = 64 << 10

    /// The identity of the image whose ELF header is at `base` in a process's memory, read through `read`
    /// (address, count → the bytes that could be read): nil without a build-id. Every length is bounded.
    static func read(base: UInt64, _ read: (UInt64, Int) -> [UInt8]) -> ImageIdentity? {
        var bytes = read(base, ELFHeaderInfo.fileHeaderSize)
        var header: ELFHeaderInfo
        do {
            header = try ELFHeaderInfo.parse(bytes)
        } catch .truncated(_, let needed, _) {
            guard needed > 0, needed <= headerByteLimit else { return nil }
            bytes = read(base, needed)
            guard let full = try? ELFHeaderInfo.parse(bytes) else { return nil }
            header = full
        } catch {
            return nil
        }
        guard let bias = header.loadBias(imageBase: base) else { return nil }
        var notes: [ELFNote] = []
        for segment in header.noteSegments.prefix(16) where segment.size > 0 && segment.size <= UInt64(noteByteLimit) {
            notes += ELFNotes.parseNotes(read(bias &+ segment.virtualAddress, Int(segment.size)), alignment: segment.alignment)
        }
        let identity = ImageIdentity(notes: notes, architecture: header.architecture)
        return identity.buildID == nil ? nil : identity
    }

    /// Reads the build-id and the `.note.package` metadata (JSON) from an image's notes.
    init(notes: [ELFNote], architecture: Architecture?) {
        self.buildID = ELFNotes.buildID(in: notes)
        self.architecture = architecture
        self.package = ELFNotes.packageMetadataJSON(in: notes).flatMap { json in
            try? JSONDecoder().decode(PackageRecord.self, from: Data(json.utf8))
        }
    }
}
