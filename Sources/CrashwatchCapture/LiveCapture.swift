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

/// A raw capture written to an in-memory file, with the image files opened while the process was held.
public struct CapturedCrash: Sendable {
    public private(set) var capture: RawCapture
    /// The capture file (a memfd), to hand to the worker: its memory regions, written while the process
    /// was held; `complete()` appends the metadata once it has been released.
    public let file: OwnedDescriptor
    let regionBytes: UInt64
    /// Image files opened through /proc (`RawImage.descriptor` indexes these).
    public let imageFiles: [OwnedDescriptor]
    /// The maps as parsed during the capture (the minimal report is built from them, not parsed again).
    public let table: ImageTable

    /// Reads the names of the threads that have none yet: a crash's, which `begin` leaves for after the release
    /// (`namesAfterRelease`). Its threads, killed from the stops they were held in without running another
    /// instruction, stay in /proc — zombies, their names as they were — until their tracer reaps them: call
    /// right after the release, before the supervisor waits for them.
    public mutating func nameThreads() {
        LiveCapture.name(&capture.threads, reader: ProcFS.ThreadNames(pid: capture.pid))
    }
}

/// Raw captures of live, stopped processes.
public enum LiveCapture {
    /// Handled faults whose stacks are captured besides the threads' own (the newest).
    static let maximumFaultStacks = 16

    /// The thread a capture hands work to that needs no tracer (`HelperThread.capture`).
    public static var helper: HelperThread? { HelperThread.capture }

    /// Starts reading what a capture of `crash` needs and its threads need not be stopped for (the process
    /// record), on the helper thread: call before stopping them, and pass the result to `begin`.
    public static func readAhead(_ crash: DetectedCrash, options: CaptureOptions) -> CaptureReadAhead {
        CaptureReadAhead(pid: crash.pid, through: crash.tid, options: options, helper: helper, known: crash.unreadableFiles)
    }

    /// Names the threads that have no name yet: from `read` (names read before), else through `reader` now.
    static func name(_ threads: inout [RawThread], read: [Int32: String] = [:], reader: ProcFS.ThreadNames) {
        for index in threads.indices where threads[index].name == nil {
            let tid = threads[index].tid
            threads[index].name = (read[tid] ?? reader.name(of: tid)).map(capped)
        }
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
    /// (`CaptureInProgress.capture`). The helper thread reads the maps meanwhile, then copies the stacks from
    /// the moment they are planned, while this thread identifies the images and the caller writes the minimal
    /// report (65 stacks are ~0.4 ms, the report ~0.7 ms); `copyMemory` reads the rest — the bytes of deleted
    /// images, the annotation tables — and the caller may run it on the helper thread too.
    /// `namesAfterRelease`: the threads' names are not read while they are held (64 names are ~0.5 ms of the
    /// helper's, which is the longer part of the hold): the caller has `CapturedCrash.nameThreads` read them
    /// after the release — only for a process that dies then, whose threads stay as they were until reaped.
    /// Never fails as a whole: what could not be read becomes a soft error; only a failure to create the
    /// capture file itself is thrown. `hangReportID` links a crash to the hang report taken of the same
    /// process before (a watchdog's kill); `exit` makes the capture an abnormal exit's (a SIGKILL death seen
    /// at the threads' exit stops).
    public static func begin(_ crash: DetectedCrash, stopped: StoppedProcess, options: CaptureOptions,
                             deadlineNanoseconds: Int64, hangReportID: String? = nil, exit: ExitRecord? = nil,
                             readAhead: CaptureReadAhead? = nil, namesAfterRelease: Bool = false) throws(SystemError) -> CaptureInProgress {
        let started = Clock.monotonicNanoseconds()
        let helperDeadline = { min(Clock.monotonicNanoseconds() + HelperThread.captureWait, stopped.deadlineNanoseconds) }
        let ahead = readAhead.flatMap { $0.pid == crash.pid ? $0 : nil }
            ?? CaptureReadAhead(pid: crash.pid, through: crash.tid, options: options, helper: helper, known: crash.unreadableFiles)
        // The maps on the helper thread, the registers here meanwhile; then the stacks are planned. The helper
        // reads the threads' names next (a snapshot's, a hang's), then copies the stacks.
        let maps = MapsReading.start(through: crash.tid, on: helper)
        let names = namesAfterRelease ? nil : HelperComputation(on: helper) { [pid = crash.pid, tids = stopped.threads, crashed = crash.crashedThreadID] in
            let reader = ProcFS.ThreadNames(pid: pid)
            var names: [Int32: String] = [:]
            for tid in tids where tid != crashed { names[tid] = reader.name(of: tid) }
            return names
        }
        let file = try MemoryFile.create(name: "crashwatch-capture-\(crash.pid)")
        var (threads, stackPointers, registerErrors) = readThreads(stopped, crashed: !crash.isLiveLook && exit == nil,
                                                                   states: crash.isLiveLook)
        let (mapsRead, mapsFromHelper) = maps.value(until: helperDeadline())
        var reader = CaptureReader(pid: crash.pid, through: crash.tid, options: options, deadline: stopped.deadlineNanoseconds, maps: mapsRead,
                            unreadable: ahead.unreadable)
        reader.softErrors += registerErrors
        let plans = reader.planStacks(of: threads, stackPointers: stackPointers)
        // The stacks are copied on the helper from here, while this thread identifies the images and the caller
        // writes the minimal report.
        let stacks = reader.startCopyingStacks(plans, into: file, on: helper)
        let images = reader.identifyImages()
        let (read, factsFromHelper) = ahead.facts.value(until: helperDeadline())
        for index in threads.indices where threads[index].tid == crash.crashedThreadID {
            threads[index].name = crash.crashedThreadName.map(capped)
        }
        let (missing, missingErrors) = notStoppedThreads(stopped, pid: crash.pid, states: crash.isLiveLook, snapshot: crash.isSnapshot)
        threads += missing
        reader.softErrors += missingErrors
        let fromHelper = mapsFromHelper && factsFromHelper
        reader.softErrors += read.softErrors
        var capture = RawCapture(
            reportID: CrashReport.newID(), pid: crash.pid, signal: crash.signal,
            originalFault: crash.originalFault.map(RawFault.init), handledFaults: crash.handledFaults.map(RawFault.init),
            timeNanoseconds: crash.timeNanoseconds, startedNanoseconds: started, holdDurationMs: 0,
            architecture: .host, maps: reader.mapsText, auxv: Hex.string(reader.auxv),
            pointerAuthenticationMask: reader.pointerAuthenticationMask(tid: stopped.crashedTID),
            threads: threads, images: images, process: read.process, host: CaptureHost.record(),
            ptraceScope: read.ptraceScope, seccompMode: read.seccompMode,
            capturedBytes: 0, stackByteLimitPerThread: options.stackBytesPerThread,
            captureByteLimit: options.captureBytes, softErrors: reader.softErrors,
            options: ProcessingOptions(options, deadlineNanoseconds: deadlineNanoseconds))
        let laterErrors = describe(&capture, crash: crash, hangReportID: hangReportID, exit: exit, runID: options.runID,
                                   credentials: read.credentials)
        capture.softErrors += laterErrors
        capture.annotate(options)
        capture.holdDurationMs = Double((Clock.monotonicNanoseconds() - started) / 1_000) / 1_000
        return CaptureInProgress(capture: capture, reader: reader, file: file, stacks: stacks, faults: crash.handledFaults.suffix(maximumFaultStacks).map { ($0.tid, $0.registers) },
                                 laterErrors: laterErrors, helper: fromHelper ? helper : nil, names: names)
    }

    /// Every stopped thread's registers (the crashed one marked when `crashed`: a hang, a snapshot and a SIGKILL
    /// have no crashed thread, every thread was stopped from outside), with the stack pointers to plan stacks from.
    /// With `states`, a thread in a job-control stop is marked `stopped` (the others' states are read with their names).
    private static func readThreads(_ stopped: StoppedProcess, crashed: Bool, states: Bool)
        -> (threads: [RawThread], stackPointers: [(index: Int, sp: UInt64)], errors: [SoftError])
    {
        var threads: [RawThread] = []
        var stackPointers: [(index: Int, sp: UInt64)] = []
        var errors: [SoftError] = []
        for tid in stopped.threads {
            var thread = readRegisters(tid, crashed: crashed && tid == stopped.crashedTID, errors: &errors)
            if states, stopped.stops[tid] == .groupStop { thread.state = .stopped }
            if let sp = RegisterDecoder.stackPointer(thread.registers, architecture: .host) { stackPointers.append((threads.count, sp)) }
            threads.append(thread)
        }
        return (threads, stackPointers, errors)
    }

    /// The threads that could not be stopped (a sleep no signal ends, or vfork()), listed without registers.
    /// The stop reason of a thread-group leader that exited before the crash.
    static let exitedLeaderReason = "exited: the thread-group leader ended (pthread_exit) and waits as a zombie for the other threads"

    /// Threads left out of a snapshot (`--threads`): stopped with the others, listed by name and state alone.
    static let leftOutReason = "left out (--threads): stopped with the others, its registers and stack not captured"

    private static func notStoppedThreads(_ stopped: StoppedProcess, pid: Int32, states: Bool, snapshot: Bool) -> (threads: [RawThread], errors: [SoftError]) {
        // A crash's threads get a quarter of the capture's time to stop, a snapshot's a fixed wait after their interrupts.
        let allowed = snapshot ? "the second a snapshot waits" : "a quarter of the capture's time"
        var threads: [RawThread] = []
        var errors: [SoftError] = []
        func notStopped(_ tids: [Int32], _ why: @autoclosure () -> String) {
            for tid in tids {
                threads.append(RawThread(tid: tid, name: ProcFS.threadName(pid: pid, tid: tid), crashed: false, registers: [], missingReason: why()))
                errors.append(SoftError(stage: "stop", tid: tid, message: why()))
            }
        }
        notStopped(stopped.unstopped, "the thread did not stop within \(allowed) (a sleep no signal ends): not stopped")
        notStopped(stopped.inVfork, "the thread was in vfork(), which it leaves only when its child execs or exits: not stopped")
        for tid in stopped.leftOut {
            var thread = RawThread(tid: tid, name: nil, crashed: false, registers: [], missingReason: leftOutReason)
            if states, stopped.stops[tid] == .groupStop { thread.state = .stopped }
            threads.append(thread)
        }
        // A thread-group leader that ended (pthread_exit) while the others run on stays a zombie until they end:
        // no stop, no registers, but the process's first thread all the same — listed as exited, no error.
        let stoppedLeader = stopped.threads.contains(pid) || threads.contains { $0.tid == pid }
        if !stoppedLeader, let stat = try? ProcFS.readText("/proc/\(pid)/task/\(pid)/stat"),
           let state = ProcStat(text: stat)?.state, state == UInt8(ascii: "Z") || state == UInt8(ascii: "X") {
            threads.insert(RawThread(tid: pid, name: ProcFS.threadName(pid: pid, tid: pid), crashed: false, registers: [],
                                     missingReason: exitedLeaderReason), at: 0)
        }
        return (threads, errors)
    }

    /// What kind of capture it is (crash, hang, abnormal exit) and what links it to others; the soft errors
    /// the memory copy must keep (`laterErrors`).
    private static func describe(_ capture: inout RawCapture, crash: DetectedCrash, hangReportID: String?, exit: ExitRecord?,
                                 runID: String?, credentials: ProcessCredentials?) -> [SoftError] {
        if crash.isSnapshot { capture.kind = .snapshot }
        if let hang = crash.hang {
            capture.kind = .hang
            capture.hang = HangRecord(
                source: "watchdog", startTime: RFC3339.format(nanosecondsSinceEpoch: hang.lastPingNanoseconds),
                durationMs: Double(max(hang.silenceNanoseconds, 0) / 1_000) / 1_000,
                watchdogTimeoutMs: hang.watchdogTimeoutNanoseconds.map { Double($0 / 1_000) / 1_000 })
        }
        capture.credentials = credentials
        capture.hangReportID = hangReportID
        capture.runID = runID
        capture.seenAtExit = crash.seenAtExit
        var laterErrors: [SoftError] = []
        if let exit {
            capture.kind = .abnormalExit
            capture.exit = exit
        } else if crash.seenAtExit {
            laterErrors.append(SoftError(stage: "signal", tid: crash.tid, message:
                "\(crash.signal.signal.name) reached no signal-delivery stop: the kernel forced it (a seccomp filter's kill, or a signal frame it could not set up); captured at the threads' exit, its siginfo is not known"))
        }
        return laterErrors
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
    /// The capture so far: no thread names but the crashed thread's, no stack ranges (the stacks may still be
    /// being copied), image copies or image files yet, nor their soft errors.
    public let capture: RawCapture
    var reader: CaptureReader
    fileprivate let file: OwnedDescriptor
    /// The stacks, copied on the helper thread from the moment they were planned (`begin`); the file's first regions.
    fileprivate let stacks: HelperComputation<CopiedStacks>
    /// Each handled fault's thread and registers: its stack is copied too (a handler on an alternate stack).
    fileprivate let faults: [(tid: Int32, registers: [UInt8])]
    /// Soft errors that come after the reader's in the capture.
    fileprivate let laterErrors: [SoftError]
    /// The helper thread, when it answered in time during `begin` (nil: do its work on this thread).
    public let helper: HelperThread?
    /// The held threads' names (but the crashed thread's), read on the helper during `begin`; nil when they are
    /// read after the release (`namesAfterRelease`).
    fileprivate let names: HelperComputation<[Int32: String]>?

    fileprivate init(capture: RawCapture, reader: consuming CaptureReader, file: OwnedDescriptor, stacks: HelperComputation<CopiedStacks>,
                     faults: [(tid: Int32, registers: [UInt8])], laterErrors: [SoftError], helper: HelperThread?,
                     names: HelperComputation<[Int32: String]>?) {
        self.names = names
        self.capture = capture
        self.reader = reader
        self.file = file
        self.stacks = stacks
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

    /// Takes the threads' names (read during `begin`) and the stacks (copied since), copies the rest of the
    /// memory — the stacks of handled faults, the annotation tables, the non-writable bytes of images whose
    /// file is gone — and opens the files of deleted and memfd images: the complete capture.
    public consuming func copyMemory() -> CapturedCrash {
        var capture = self.capture
        let names = ProcFS.ThreadNames(pid: capture.pid)
        // Read during `begin` on this same helper thread (queued before this work), else now — unless they are
        // read after the release.
        if let pending = self.names {
            LiveCapture.name(&capture.threads, read: pending.wait(until: reader.deadline) ?? [:], reader: names)
        }
        if capture.kind.isLiveProcess { Self.readStates(&capture.threads, names: names) }
        // Copied on this same helper thread (queued before this work), or on this thread now: work that cannot
        // stall (no FUSE page is planned, and /proc/TID/mem refuses a page a userfaultfd handler would fill).
        let stacks = self.stacks.value()
        reader.take(stacks)
        var writer = RawCaptureWriter(file: file, regionBytes: stacks.regionBytes)
        for (index, range, cut) in stacks.copied where index >= 0 {
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
        capture.annotationTables = reader.copyAnnotationTables(reader.annotationRoots, executable: capture.process.resolvedExecutable, writer: &writer)
        let files = reader.copyImages(&capture.images, writer: &writer)
        capture.capturedBytes = reader.capturedBytes
        capture.softErrors = reader.softErrors + laterErrors
        capture.holdDurationMs = Double((Clock.monotonicNanoseconds() - capture.startedNanoseconds) / 1_000) / 1_000
        return CapturedCrash(capture: capture, file: file, regionBytes: writer.regionBytes, imageFiles: files, table: reader.table)
    }
}

extension CaptureInProgress {
    /// What each thread held stopped (and not in a job-control stop, already marked) was doing: in a system
    /// call (`/proc/TID/syscall`, read while it is stopped: it names the call the stop interrupted) or running
    /// its own code. A thread that never stopped (no registers, not left out) has no state.
    fileprivate static func readStates(_ threads: inout [RawThread], names: ProcFS.ThreadNames) {
        for index in threads.indices where threads[index].state == nil
            && (!threads[index].registers.isEmpty || threads[index].missingReason == LiveCapture.leftOutReason)
        {
            guard let number = ProcFS.syscall(of: threads[index].tid, in: names) else { continue }
            threads[index].state = number >= 0 ? .syscall : .running
            threads[index].syscall = number >= 0 ? number : nil
        }
    }
}

extension CapturedCrash {
    /// Appends the metadata and the trailer to the capture file, making it a complete capture — after the
    /// release: encoding it needs nothing from the process.
    public func complete() throws(SystemError) {
        try RawCaptureWriter(file: file, regionBytes: regionBytes).finish(capture)
    }
}

extension LiveCapture {
    /// Gets the capture path ready before the first crash, so a held process does not wait for one-time
    /// costs: what cannot change until the next boot is read, and a capture of this process is rehearsed
    /// (`rehearse`). Call once, on the tracer thread before the command starts: it starts no thread.
    public static func prepare() {
        CaptureHost.prepare()
        rehearse()
    }

    /// Starts `helper` and warms it up with a capture of this process (`rehearse`), so that no crash pays for
    /// creating the thread or its stack's first pages. Call once the command runs: see
    /// `SupervisorObserver.supervisorStarted`.
    public static func startHelper() {
        _ = HelperComputation(on: helper) { rehearse() }
    }

    /// Captures this process — all a crash's capture does but stop threads and read their registers, which
    /// takes a tracer: the process record, the maps, a thread's name, the calling thread's stack planned and
    /// copied into an in-memory file, the images identified from memory, and a minimal report built from that
    /// and encoded. The first use of a generic type instantiates its metadata and looks up its conformances,
    /// scanning every conformance record in the binary (the Swift runtime is linked in): about 0.3–0.6 ms of a
    /// first crash's hold otherwise, which is every crash of a `run` that crashes once (BENCHMARKS.md).
    /// The work is of the caller's thread: the metadata and conformances it leaves serve every thread.
    static func rehearse() {
        let pid = SelfProcess.pid
        let options = CaptureOptions(crashwatchVersion: "")
        let unreadable = UnreadableFiles(pid: pid)
        let ahead = CaptureReadAhead(pid: pid, through: pid, options: options, helper: nil, known: unreadable)
        let maps = MapsReading.start(through: pid, on: nil)
        let name = ProcFS.ThreadNames(pid: pid).name(of: pid)
        var reader = CaptureReader(pid: pid, through: pid, options: options, deadline: Clock.monotonicNanoseconds() + 1_000_000_000,
                                   maps: maps.value(), unreadable: unreadable)
        var anchor = 0
        let sp = withUnsafeMutablePointer(to: &anchor) { UInt64(UInt(bitPattern: $0)) }
        let threads = [RawThread(tid: pid, name: name, crashed: true, registers: [UInt8](repeating: 0, count: Architecture.host.prstatusSize))]
        let plans = reader.planStacks(of: threads, stackPointers: [(index: 0, sp: sp)])
        if let file = try? MemoryFile.create(name: "crashwatch-rehearsal") {
            reader.take(reader.startCopyingStacks(plans, into: file, on: nil).value())
        }
        let images = reader.identifyImages()
        let facts = ahead.facts.value()
        let capture = RawCapture(
            reportID: CrashReport.newID(), pid: pid, signal: SignalInfo(signo: 11, code: 1, address: 0),
            originalFault: nil, timeNanoseconds: Clock.realtimeNanoseconds(), startedNanoseconds: Clock.monotonicNanoseconds(),
            holdDurationMs: 0, architecture: .host, maps: reader.mapsText, auxv: Hex.string(reader.auxv), pointerAuthenticationMask: nil,
            threads: threads, images: images, process: facts.process, host: CaptureHost.record(), ptraceScope: facts.ptraceScope,
            seccompMode: facts.seccompMode, capturedBytes: reader.capturedBytes, stackByteLimitPerThread: options.stackBytesPerThread,
            captureByteLimit: options.captureBytes, softErrors: reader.softErrors,
            options: ProcessingOptions(options, deadlineNanoseconds: 0))
        // Encoded as the spool's writer encodes it: fingerprinted, within the size limit.
        _ = try? ReportSizeLimit.encode(ReportBuilder.minimal(capture, crashwatchVersion: "", table: reader.table, crashedThreadRegistersOnly: true),
                                        limit: options.reportByteLimit)
    }
}
