// ReportBuilder.swift — the one report builder: turns a raw capture (from any source) into a CrashReport.
// Without a processor it builds the minimal report the supervisor makes durable before releasing the
// process (registers, the pc of every thread, images and build-ids); with one (the worker's unwinder and
// symbolizer) the full report. Both share every record but the frames.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem

/// A frame before symbolization: where, how it was found, and whether its pc is exact.
public struct UnsymbolizedFrame: Sendable, Equatable {
    public let pc: UInt64
    /// The frame's stack pointer (0 when unknown).
    public let sp: UInt64
    public let how: FrameTrust
    /// The interrupted frame (or one a signal interrupted, or the signal trampoline): its pc is the
    /// instruction itself, not a return address.
    public let isExact: Bool

    public init(pc: UInt64, sp: UInt64 = 0, how: FrameTrust, isExact: Bool) {
        self.pc = pc
        self.sp = sp
        self.how = how
        self.isExact = isExact
    }
}

/// What turns registers into frames and frames into names: the worker's unwinder and symbolizer.
public protocol FrameProcessor {
    /// The frames of a thread (or of an original fault) from its registers, and why unwinding stopped.
    mutating func frames(registers: RegisterSet, words: [UInt64], thread: RawThread?) -> (frames: [UnsymbolizedFrame], stop: String)
    /// Called once every thread is unwound, with the images the frames are in, before any lookup.
    mutating func prepareLookups(in images: [LoadedImage])
    /// What libdw knows of `address` (already `pc - 1` for a return address); nil when nothing.
    mutating func lookup(_ address: UInt64) -> SymbolLookup?
    /// An image's build-id read from its file, for images whose memory did not give one (the file being
    /// the very inode the process mapped).
    func fileBuildID(ofImageAt start: UInt64) -> String?
    /// Soft errors found while processing.
    var softErrors: [SoftError] { get }
}

/// Builds reports from raw captures.
public struct ReportBuilder<Processor: FrameProcessor> {
    let capture: RawCapture
    let table: ImageTable
    var processor: Processor?
    var softErrors: [SoftError]
    private var images: ImageReferences
    private let names = NameCache()
    /// Whether frames are looked up (off for the checkpoint before symbols).
    private var lookups = true
    /// Whether only crashed threads keep their registers in the report (every thread keeps its pc frame).
    var crashedThreadRegistersOnly = false
    /// The root fault and the active chain, once the threads are unwound.
    private var rootFault: RawFault?
    private var activeChain: [RawFault] = []
    /// The active chain as found by a worker whose frames are accepted (`WorkerReport`), instead of one
    /// found from frames here.
    var acceptedChain: [RawFault]?
    /// The app's own annotations and breadcrumbs, decoded from the capture's tables (`AnnotationDecoder`); nil
    /// for the minimal report, which has the operator's annotations only.
    public var appAnnotations: AppAnnotations?

    /// A builder over `capture`; `processor` nil builds the minimal report.
    public init(capture: RawCapture, processor: Processor?, table: ImageTable? = nil) {
        self.capture = capture
        self.table = table ?? ImageTable(mapsText: capture.maps)
        self.processor = processor
        self.softErrors = capture.softErrors
        self.images = ImageReferences(capture: capture, table: self.table)
    }

    /// The report; `extraSoftErrors` are added (e.g. why processing failed), `finishedNanoseconds` ends
    /// the capture duration (CLOCK_MONOTONIC).
    public mutating func build(extraSoftErrors: [SoftError] = [], finishedNanoseconds: Int64? = nil,
                               unwound checkpoint: ((CrashReport) -> Void)? = nil) -> CrashReport {
        // Unwind everything first: the symbolizer is told once which images the frames are in.
        var unwound = capture.threads.map { unwindThread($0) }
        let chain = activeFaults(in: unwound)
        // The oldest fault whose handler still ran, or that the final signal retries (README); unwound stacks only.
        let root = acceptedChain != nil || processor != nil
            ? chain.first ?? capture.originalFault.flatMap { isRetried($0) ? $0 : nil } : capture.originalFault
        rootFault = root
        moveCrashed(to: root, in: &unwound)
        activeChain = chain
        let faultUnwound = root.map { unwindFault($0) }
        if let checkpoint, processor != nil {
            // What exists before symbols: kept should symbolization not finish.
            var interim = self
            interim.lookups = false
            checkpoint(interim.assemble(unwound, faultUnwound, extraSoftErrors: extraSoftErrors + [SoftError(
                stage: "symbols", message: "symbols were not looked up: processing stopped after unwinding")],
                finishedNanoseconds: Clock.monotonicNanoseconds(), state: .unwound))
        }
        if var processor {
            var touched: [UInt64: LoadedImage] = [:]
            let pcs = unwound.flatMap { $0.frames.map(\.pc) } + (faultUnwound?.frames.map(\.pc) ?? [])
            for pc in pcs { if let image = table.image(containing: pc) { touched[image.start] = image } }
            processor.prepareLookups(in: touched.values.sorted { $0.start < $1.start })
            self.processor = processor
        }
        return assemble(unwound, faultUnwound, extraSoftErrors: extraSoftErrors, finishedNanoseconds: finishedNanoseconds,
                        state: processor == nil ? .minimal : .complete)
    }

    private mutating func assemble(_ unwound: [Unwound], _ faultUnwound: (registers: [RegisterValue], frames: [UnsymbolizedFrame])?,
                                   extraSoftErrors: [SoftError], finishedNanoseconds: Int64?, state: ProcessingState) -> CrashReport {
        let threads = unwound.map { item in
            var thread = ThreadRecord(tid: item.raw.tid, name: item.raw.name, crashed: item.raw.crashed, registers: item.registers,
                                      frames: records(item.frames), unwindStopReason: item.stop)
            thread.state = item.raw.state
            thread.syscall = item.raw.syscall.map { SyscallRecord(number: $0, name: SyscallNames.name(of: $0, architecture: capture.architecture)) }
            return thread
        }
        let original = rootFault.map { fault in
            OriginalFault(fault.signal, tid: fault.tid, time: RFC3339.format(nanosecondsSinceEpoch: fault.timeNanoseconds),
                          registers: faultUnwound?.registers ?? [], frames: records(faultUnwound?.frames ?? []))
        }
        let chainRecords = activeChain.map { fault in
            OriginalFault(fault.signal, tid: fault.tid, time: RFC3339.format(nanosecondsSinceEpoch: fault.timeNanoseconds),
                          registers: registerValues(fault.registers))
        }
        let processor = self.processor
        let images = self.images.records(fileBuildID: { processor?.fileBuildID(ofImageAt: $0) })
        let errors = Self.bounded(softErrors + (processor?.softErrors ?? []) + names.softErrors + (appAnnotations?.softErrors ?? [])
            + extraSoftErrors)
        let deadlineExceeded = errors.contains { $0.stage == "deadline" }
        let diagnostics = Diagnostics(ptraceScope: capture.ptraceScope, seccompMode: capture.seccompMode,
                                      captureErrors: errors.count, deadlineExceeded: deadlineExceeded)
        var report = CrashReport(
            id: capture.reportID, kind: capture.kind,
            captureTime: RFC3339.format(nanosecondsSinceEpoch: capture.timeNanoseconds),
            captureDurationMs: Double(max((finishedNanoseconds ?? Clock.monotonicNanoseconds()) - capture.startedNanoseconds, 0) / 1_000) / 1_000,
            crashwatchVersion: "",
            signal: capture.kind.isLiveProcess ? .none
                : capture.seenAtExit ? .seenAtExit(capture.signal.signal, sentByKernel: capture.signal.code.rawValue == 0x80)
                : SignalRecord(capture.signal, originalFault: original, activeFaults: chainRecords),
            process: capture.process, host: capture.host, threads: threads, images: images,
            diagnostics: diagnostics, softErrors: errors)
        report.holdDurationMs = capture.holdDurationMs
        report.hang = capture.hang
        report.hangReportID = capture.hangReportID
        report.runID = capture.runID
        report.source = capture.source
        report.coreFile = capture.coreFile
        report.exit = capture.exit
        report.diagnostics.processing = state
        report.annotations = AnnotationRules.merged(app: (appAnnotations?.annotations ?? []).map { ($0.key, $0.value) },
                                                    operator: capture.operatorAnnotations ?? [:], deny: capture.annotationDeny)
        report.breadcrumbs = appAnnotations?.breadcrumbs
        report.diagnostics.annotationBytes = capture.annotationTables.map { $0.reduce(0) { $0 + $1.bytes } }
        return report
    }

    static var maximumSoftErrors: Int { 1000 }

    /// `errors` cut to `maximumSoftErrors`, with one more saying how many were dropped.
    static func bounded(_ errors: [SoftError]) -> [SoftError] {
        guard errors.count > maximumSoftErrors else { return errors }
        return Array(errors.prefix(maximumSoftErrors))
            + [SoftError(stage: "report", message: "\(errors.count - maximumSoftErrors) more soft errors were dropped")]
    }

    // MARK: Threads

    private struct Unwound {
        var raw: RawThread
        let registers: [RegisterValue]
        let frames: [UnsymbolizedFrame]
        let stop: String
    }

    /// The handled faults whose signal frame is still on their thread's stack — the handler was running
    /// when the process died — oldest first. A frame a signal interrupted is restored with exactly the
    /// pc and stack pointer the fault was delivered with. Without unwinding (the minimal report) none.
    private func activeFaults(in unwound: [Unwound]) -> [RawFault] {
        if let acceptedChain { return acceptedChain }
        guard processor != nil else { return [] }
        var interrupted: [Int32: [(pc: UInt64, sp: UInt64)]] = [:]
        for thread in unwound {
            for (index, frame) in thread.frames.enumerated() where index > 0 && frame.how == .context {
                // A frame at a fault's exact pc and stack pointer is that fault's interrupted frame: restored
                // from a signal frame, or left by a runtime that turned the fault into a call (Go's sigpanic).
                interrupted[thread.raw.tid, default: []].append((frame.pc, frame.sp))
            }
        }
        return capture.handledFaults.filter { fault in
            guard let registers = try? RegisterDecoder.decode(fault.registers, architecture: capture.architecture) else { return false }
            let pc = strip(registers.pc), sp = registers.sp
            return interrupted[fault.tid]?.contains { $0.pc == pc && $0.sp == sp } == true
        }.sorted { $0.timeNanoseconds < $1.timeNanoseconds }
    }

    /// Whether the final signal is `fault` retried (same thread, signal, pc and sp): its handler restored the default
    /// action and returned (Rust's std), so the instruction faulted again, fatally.
    private func isRetried(_ fault: RawFault) -> Bool {
        guard fault.signal.signal == capture.signal.signal,
              let crashed = capture.threads.first(where: { $0.crashed && $0.tid == fault.tid }),
              let now = try? RegisterDecoder.decode(crashed.registers, architecture: capture.architecture),
              let then = try? RegisterDecoder.decode(fault.registers, architecture: capture.architecture) else { return false }
        return strip(now.pc) == strip(then.pc) && now.sp == then.sp
    }

    /// A handler that re-raised with `kill(getpid())` or `raise` from another thread, or whose signal the
    /// kernel gave to another thread, did not crash that thread: the thread of the root fault crashed.
    private func moveCrashed(to root: RawFault?, in unwound: inout [Unwound]) {
        guard let root, capture.signal.senderPID == capture.pid,
              let from = unwound.firstIndex(where: { $0.raw.crashed }), unwound[from].raw.tid != root.tid,
              let to = unwound.firstIndex(where: { $0.raw.tid == root.tid }) else { return }
        unwound[from].raw.crashed = false
        unwound[to].raw.crashed = true
        let moved = unwound.remove(at: to)
        unwound.insert(moved, at: 0)
    }

    private func registerValues(_ bytes: [UInt8]) -> [RegisterValue] {
        guard let registers = try? RegisterDecoder.decode(bytes, architecture: capture.architecture) else { return [] }
        return registers.values.map { RegisterValue($0.name, Address($0.value)) }
    }

    private mutating func unwindThread(_ raw: RawThread) -> Unwound {
        guard !raw.registers.isEmpty else {
            return Unwound(raw: raw, registers: [], frames: [], stop: raw.missingReason ?? "registers unreadable")
        }
        let registers: RegisterSet
        do {
            registers = try RegisterDecoder.decode(raw.registers, architecture: capture.architecture)
        } catch {
            softErrors.append(SoftError(stage: "registers", tid: raw.tid, message: "\(error)"))
            return Unwound(raw: raw, registers: [], frames: [], stop: "registers unreadable")
        }
        let (frames, stop) = unwind(registers, bytes: raw.registers, thread: raw)
        let kept = crashedThreadRegistersOnly && !raw.crashed ? [] : registers.values.map { RegisterValue($0.name, Address($0.value)) }
        return Unwound(raw: raw, registers: kept, frames: frames, stop: stop)
    }

    /// An original fault, unwound from the registers saved when the handled signal was delivered; the
    /// frames above the fault are still on the stack under a re-raising handler.
    private mutating func unwindFault(_ fault: RawFault) -> (registers: [RegisterValue], frames: [UnsymbolizedFrame]) {
        guard !fault.registers.isEmpty else { return ([], []) }
        do {
            let registers = try RegisterDecoder.decode(fault.registers, architecture: capture.architecture)
            let (frames, _) = unwind(registers, bytes: fault.registers, thread: nil)
            return (registers.values.map { RegisterValue($0.name, Address($0.value)) }, frames)
        } catch {
            softErrors.append(SoftError(stage: "registers", tid: fault.tid, message: "original fault: \(error)"))
            return ([], [])
        }
    }

    private mutating func unwind(_ registers: RegisterSet, bytes: [UInt8], thread: RawThread?) -> ([UnsymbolizedFrame], String) {
        // aarch64 return addresses carry pointer-authentication bits above the address: cleared.
        let mask = capture.codeAddressMask
        guard processor != nil else {
            return ([UnsymbolizedFrame(pc: RegisterDecoder.stripPointerAuthentication(registers.pc, mask: mask), how: .context, isExact: true)],
                    "not unwound: minimal report")
        }
        let words = bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
        // In place (`processor!`): a copy would copy its tables on the first change.
        let (frames, stop) = processor!.frames(registers: registers, words: words, thread: thread)
        return (frames.map { UnsymbolizedFrame(pc: RegisterDecoder.stripPointerAuthentication($0.pc, mask: mask), sp: $0.sp,
                                               how: $0.how, isExact: $0.isExact) }, stop)
    }

    /// aarch64 return addresses carry pointer-authentication bits above the address: clear them.
    private func strip(_ pc: UInt64) -> UInt64 {
        RegisterDecoder.stripPointerAuthentication(pc, mask: capture.codeAddressMask)
    }

    private mutating func records(_ frames: [UnsymbolizedFrame]) -> [FrameRecord] {
        var records: [FrameRecord] = []
        for frame in frames { records += frameRecords(frame, startingAt: records.count) }
        return records
    }

    /// The records of one physical frame: one per inlined call at its pc (innermost first, marked
    /// `inlined`), then the concrete function.
    private mutating func frameRecords(_ frame: UnsymbolizedFrame, startingAt index: Int) -> [FrameRecord] {
        var record = FrameRecord(index: index, address: Address(frame.pc), how: frame.how)
        guard images.place(&record) else { return [record] }
        guard lookups, processor != nil else { return [record] }
        // A return address points after the call: look up the call instruction itself.
        guard let found = processor!.lookup(frame.isExact ? frame.pc : frame.pc &- 1) else { return [record] }
        return SymbolizedFrame.records(for: record, found: found, exact: frame.isExact, names: names)
    }

}

/// The minimal processor's stand-in: builds no frames beyond the pc.
public struct NoProcessing: FrameProcessor {
    public mutating func frames(registers: RegisterSet, words: [UInt64], thread: RawThread?) -> (frames: [UnsymbolizedFrame], stop: String) {
        ([UnsymbolizedFrame(pc: registers.pc, sp: registers.sp, how: .context, isExact: true)], "not unwound: minimal report")
    }
    public mutating func prepareLookups(in images: [LoadedImage]) {}
    public func fileBuildID(ofImageAt start: UInt64) -> String? { nil }
    public mutating func lookup(_ address: UInt64) -> SymbolLookup? { nil }
    public var softErrors: [SoftError] { [] }
}

extension ReportBuilder where Processor == NoProcessing {
    /// The minimal report of a capture: registers, each thread's pc, the images those are in, build-ids.
    /// `crashedThreadRegistersOnly`: the other threads' registers are left out (the report written while the process
    /// is held, which the full report replaces: 65 threads' registers are half a millisecond of the hold).
    public static func minimal(_ capture: RawCapture, crashwatchVersion: String, extraSoftErrors: [SoftError] = [],
                               finishedNanoseconds: Int64? = nil, table: ImageTable? = nil,
                               crashedThreadRegistersOnly: Bool = false) -> CrashReport {
        var builder = ReportBuilder<NoProcessing>(capture: capture, processor: nil, table: table)
        builder.crashedThreadRegistersOnly = crashedThreadRegistersOnly
        var report = builder.build(extraSoftErrors: extraSoftErrors, finishedNanoseconds: finishedNanoseconds)
        report.crashwatchVersion = crashwatchVersion
        return report
    }
}

/// Encodes a report as it is written (to the spool, or by `analyze-core`): its fingerprint computed from its
/// frames first (`CrashReport.fingerprinted`: every source's report gets one here, on the writer's side, never
/// taken from a worker's bytes), then kept under a byte limit: frames of other threads go first (the thread
/// with the most frames first), then the crashed thread's outermost frames; what was dropped is a soft error.
public enum ReportSizeLimit {
    public static func encode(_ report: CrashReport, limit: Int) throws -> [UInt8] {
        let report = report.fingerprinted()
        var bytes = try report.encodedJSON()
        guard bytes.count > limit else { return bytes }
        var trimmed = report
        var droppedFrames = 0
        for _ in 0..<64 where bytes.count > limit {
            let candidates = trimmed.threads.indices.filter { !trimmed.threads[$0].frames.isEmpty }
            let others = candidates.filter { !trimmed.threads[$0].crashed }
            if let index = others.max(by: { trimmed.threads[$0].frames.count < trimmed.threads[$1].frames.count }) {
                droppedFrames += trimmed.threads[index].frames.count
                trimmed.threads[index].frames = []
                trimmed.threads[index].unwindStopReason = "frames dropped: report size limit"
            } else if let index = candidates.first, trimmed.threads[index].frames.count > 1 {
                let keep = trimmed.threads[index].frames.count / 2
                droppedFrames += trimmed.threads[index].frames.count - keep
                trimmed.threads[index].frames.removeSubrange(keep...)
                trimmed.threads[index].unwindStopReason = "frames dropped: report size limit"
            } else {
                break
            }
            bytes = try trimmed.encodedJSON()
        }
        trimmed.softErrors.append(SoftError(stage: "report", message:
            "the report was over \(limit) bytes: \(droppedFrames) frames were dropped"))
        trimmed.diagnostics.captureErrors = trimmed.softErrors.count
        return try trimmed.encodedJSON()
    }
}

/// The report of a process killed by SIGKILL (the OOM killer, or anyone's `kill -9`) whose threads were not
/// captured — the kernel gave no exit stop, or the OOM killer did it and nothing more is read — with no
/// threads or images, but who it was, when, and why as far as is known.
public enum AbnormalExitReport {
    public static func build(pid: Int32, timeNanoseconds: Int64, signal: Signal, process: ProcessRecord, exit: ExitRecord,
                             crashwatchVersion: String, runID: String?) -> CrashReport {
        var report = CrashReport(
            id: CrashReport.newID(), kind: .abnormalExit,
            captureTime: RFC3339.format(nanosecondsSinceEpoch: timeNanoseconds),
            captureDurationMs: Double(max(Clock.realtimeNanoseconds() - timeNanoseconds, 0) / 1_000) / 1_000,
            crashwatchVersion: crashwatchVersion,
            signal: .seenAtExit(signal, sentByKernel: exit.reason == "memory"),
            process: process, host: CaptureHost.record(), threads: [], images: [],
            diagnostics: Diagnostics(ptraceScope: ProcFS.setting("/proc/sys/kernel/yama/ptrace_scope").flatMap { Int($0) },
                                     seccompMode: nil))
        report.exit = exit
        report.runID = runID
        report.diagnostics.processing = .minimal
        return report
    }
}
