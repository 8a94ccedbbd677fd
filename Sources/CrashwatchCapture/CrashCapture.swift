// CrashCapture.swift — turns a stopped, crashed process into a CrashReport: registers of every thread,
// remote unwinding, the images the frames touch (with build-ids read from memory), function names,
// in_app, and the process, host and signal records. Every part that fails becomes a soft error;
// the report is always produced. Runs on the tracer thread while the process is held stopped.
import CrashwatchModel
import CrashwatchSystem
import FoundationEssentials

/// What a capture records and how hard it tries.
public struct CaptureOptions: Sendable {
    /// Frames per thread at most (`--max-frames`).
    public var maxFrames: Int = 256
    /// What capture adds to frames (`--symbolicate`).
    public var symbolication: Symbolication = .full
    /// Directories searched for separate debug info after the standard places (`--debug-dir`).
    public var debugDirectories: [String] = []
    /// Directories whose images are in-app (`--app-root`); empty means the executable's directory rule.
    public var appRoots: [String] = []
    /// Environment variables recorded by name (`--env-allow`); none by default.
    public var environmentAllowList: [String] = []
    /// Replace every argument after argv[0] with `<redacted>` (`--redact-args`).
    public var redactArguments: Bool = false
    /// App identity given on the command line; unset fields fall back to the crashed process's
    /// `CRASHWATCH_APP_NAME`, `CRASHWATCH_APP_VERSION` and `CRASHWATCH_APP_RELEASE`.
    public var app: AppRecord = AppRecord()
    /// The crashwatch version recorded in the report.
    public var crashwatchVersion: String

    public init(crashwatchVersion: String) { self.crashwatchVersion = crashwatchVersion }
}

/// How much symbol information a capture adds to frames.
public enum Symbolication: String, Sendable, CaseIterable {
    /// Functions, source file:line:column and inline frames.
    case full
    /// Function names and offsets only.
    case functions
    /// Addresses and images only (`crashwatch symbolicate` can add the rest later).
    case none
}

/// Builds crash reports from live, stopped processes.
public enum CrashCapture {
    /// Captures `crash` (whose threads `stopped` holds) into a report; never fails, records shortfalls.
    public static func report(for crash: DetectedCrash, stopped: StoppedProcess, options: CaptureOptions) -> CrashReport {
        let started = Clock.monotonicNanoseconds()
        var capture = LiveCapture(pid: crash.pid, deadline: stopped.deadlineNanoseconds, options: options)
        let threads = capture.threads(stopped: stopped)
        for tid in stopped.unstopped {
            capture.softErrors.append(SoftError(stage: "stop", tid: tid, message: "thread did not stop before the capture deadline"))
        }
        let original = crash.originalFault.map { fault in
            let (registers, frames) = capture.snapshot(registers: fault.registers, tid: fault.tid)
            return OriginalFault(fault.signal, tid: fault.tid, time: RFC3339.format(nanosecondsSinceEpoch: fault.timeNanoseconds),
                                 registers: registers, frames: frames)
        }
        let process = capture.processRecord()
        let images = capture.imageRecords(mainExecutable: process.executable)
        let signal = SignalRecord(crash.signal, originalFault: original)
        let status = try? ProcFS.threadStatus(crash.pid)
        let diagnostics = Diagnostics(
            ptraceScope: ProcFS.setting("/proc/sys/kernel/yama/ptrace_scope").flatMap { Int($0) },
            seccompMode: status?.seccompMode,
            captureErrors: capture.softErrors.count,
            deadlineExceeded: capture.deadlineExceeded)
        let elapsed = Double((Clock.monotonicNanoseconds() - started) / 1_000) / 1_000
        return CrashReport(
            id: CrashReport.newID(), kind: .crash,
            captureTime: RFC3339.format(nanosecondsSinceEpoch: crash.timeNanoseconds),
            captureDurationMs: elapsed, crashwatchVersion: options.crashwatchVersion,
            signal: signal, process: process, host: hostRecord(), threads: threads, images: images,
            diagnostics: diagnostics, softErrors: capture.softErrors)
    }

    /// This machine, as a report records it.
    public static func hostRecord() -> HostRecord {
        let uname = UnameInfo.current()
        let os = OSRelease.current()
        return HostRecord(
            hostname: uname.nodename, kernelRelease: uname.release, kernelVersion: uname.version,
            osName: os.name, osVersion: os.version, architecture: Architecture.host.rawValue,
            bootID: ProcFS.setting("/proc/sys/kernel/random/boot_id"))
    }
}

/// One capture's working state: the process's images, the unwinder and symbolizer, and what failed.
struct LiveCapture {
    let pid: Int32
    let deadline: Int64
    let options: CaptureOptions
    var softErrors: [SoftError] = []
    var deadlineExceeded = false
    /// Images in the order frames first referred to them.
    private(set) var usedImages: [LoadedImage] = []
    private var imageIndex: [UInt64: Int] = [:]
    private let table: ImageTable
    private let unwinder: RemoteUnwinder?
    private var symbolizer: Symbolizer?
    private var symbolizerFailed = false

    init(pid: Int32, deadline: Int64, options: CaptureOptions) {
        self.pid = pid
        self.deadline = deadline
        self.options = options
        var errors: [SoftError] = []
        do {
            table = ImageTable(mapsText: try ProcFS.readText("/proc/\(pid)/maps"))
        } catch {
            table = ImageTable(mappings: [])
            errors.append(SoftError(stage: "images", message: "\(error)"))
        }
        do {
            let unwinder = try RemoteUnwinder(pid: pid)
            // Images are sorted by start; ranges of one image may interleave another's gap, so clamp.
            var ranges: [Range<UInt64>] = []
            for image in table.images where image.kind == .file || image.kind == .memfd {
                let start = max(image.start, ranges.last?.upperBound ?? 0)
                if start < image.end { ranges.append(start..<image.end) }
            }
            unwinder.setImageRanges(ranges)
            self.unwinder = unwinder
        } catch {
            unwinder = nil
            errors.append(SoftError(stage: "unwind", message: "\(error)"))
        }
        softErrors = errors
    }

    // MARK: Threads

    mutating func threads(stopped: StoppedProcess) -> [ThreadRecord] {
        stopped.threads.map { tid in thread(tid, crashed: tid == stopped.crashedTID) }
    }

    /// The registers and frames of an original fault, unwound from the registers saved when the handled
    /// signal was delivered; the frames above the fault are still on the stack under a re-raising handler.
    mutating func snapshot(registers bytes: [UInt8], tid: Int32) -> ([RegisterValue], [FrameRecord]) {
        guard !bytes.isEmpty else { return ([], []) }
        do {
            let registers = try RegisterDecoder.decode(bytes, architecture: .host)
            let words = bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
            let (frames, _) = unwind(registers: registers, words: words)
            var records: [FrameRecord] = []
            for frame in frames { records += frameRecords(frame, startingAt: records.count) }
            return (registers.values.map { RegisterValue($0.name, Address($0.value)) }, records)
        } catch {
            softErrors.append(SoftError(stage: "registers", tid: tid, message: "original fault: \(error)"))
            return ([], [])
        }
    }

    private mutating func thread(_ tid: Int32, crashed: Bool) -> ThreadRecord {
        let name = ProcFS.threadName(pid: pid, tid: tid)
        if Clock.monotonicNanoseconds() >= deadline {
            deadlineExceeded = true
            softErrors.append(SoftError(stage: "deadline", tid: tid, message: "capture deadline passed before this thread was inspected"))
            return ThreadRecord(tid: tid, name: name, crashed: crashed, registers: [], frames: [], unwindStopReason: "capture deadline passed")
        }
        let registers: RegisterSet
        let words: [UInt64]
        do {
            let bytes = try Ptrace.registerSet(tid)
            registers = try RegisterDecoder.decode(bytes, architecture: .host)
            words = bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
        } catch {
            softErrors.append(SoftError(stage: "registers", tid: tid, message: "\(error)"))
            return ThreadRecord(tid: tid, name: name, crashed: crashed, registers: [], frames: [], unwindStopReason: "registers unreadable")
        }
        let (frames, stop) = unwind(registers: registers, words: words)
        var records: [FrameRecord] = []
        for frame in frames { records += frameRecords(frame, startingAt: records.count) }
        return ThreadRecord(tid: tid, name: name, crashed: crashed,
                            registers: registers.values.map { RegisterValue($0.name, Address($0.value)) },
                            frames: records, unwindStopReason: stop)
    }

    /// A frame before symbolization: where, how it was found, and whether its pc is exact.
    struct Frame {
        let pc: UInt64
        let how: FrameTrust
        /// The interrupted frame (or one interrupted by a signal): its pc is the faulting instruction.
        let isExact: Bool
    }

    private mutating func unwind(registers: RegisterSet, words: [UInt64]) -> ([Frame], String) {
        guard let unwinder else { return ([Frame(pc: registers.pc, how: .context, isExact: true)], "no unwinder") }
        var seed = words
        var prefix: [Frame] = []
        // A call through a NULL or wild function pointer leaves the pc outside every executable mapping,
        // where libunwind finds no unwind info. The caller's return address is still where the call put
        // it: at [sp] on x86-64, in lr on ARM64. Start the unwind there.
        if table.mapping(containing: registers.pc)?.permissions.isExecutable != true,
           let reseeded = reseedFromReturnAddress(registers: registers, words: words, unwinder: unwinder)
        {
            prefix = [Frame(pc: registers.pc, how: .context, isExact: true)]
            seed = reseeded
        }
        let budget = max(options.maxFrames - prefix.count, 1)
        let (unwound, stop) = unwinder.unwind(registers: seed, maxFrames: budget)
        var frames = prefix
        for (index, frame) in unwound.enumerated() {
            // A frame a signal interrupted is restored from the signal frame's saved context, like the
            // crashed frame from the thread's registers: `context` marks both, and both pcs are exact.
            // The frame just inside it is the signal trampoline (`__restore_rt`), which the handler
            // "returns" to at its first instruction: exact as well.
            let how: FrameTrust
            if index == 0 {
                how = prefix.isEmpty ? .context : .returnAddressAtSP
            } else if frame.isSignalFrame {
                how = .context
            } else {
                how = unwound[index - 1].hasUnwindInfo ? .cfi : .framePointer
            }
            let isTrampoline = index + 1 < unwound.count && unwound[index + 1].isSignalFrame
            frames.append(Frame(pc: frame.pc, how: how, isExact: how == .context || isTrampoline))
        }
        return (frames, stop.text)
    }

    private func reseedFromReturnAddress(registers: RegisterSet, words: [UInt64], unwinder: RemoteUnwinder) -> [UInt64]? {
        let layout = registers.architecture.registerLayout
        guard let pcIndex = layout.kernelOrder.firstIndex(of: layout.pcName),
              let spIndex = layout.kernelOrder.firstIndex(of: layout.spName) else { return nil }
        var seeded = words
        switch registers.architecture {
        case .x86_64:
            guard let returnAddress = unwinder.readWord(registers.sp),
                  table.mapping(containing: returnAddress)?.permissions.isExecutable == true else { return nil }
            seeded[pcIndex] = returnAddress
            seeded[spIndex] = registers.sp &+ 8
        case .aarch64:
            guard let lr = registers.lr, table.mapping(containing: lr)?.permissions.isExecutable == true else { return nil }
            seeded[pcIndex] = lr
        }
        return seeded
    }

    // MARK: Frames and symbols

    /// The records of one physical frame: one per inlined call at its pc (innermost first, marked
    /// `inlined`), then the concrete function.
    private mutating func frameRecords(_ frame: Frame, startingAt index: Int) -> [FrameRecord] {
        var record = FrameRecord(index: index, address: Address(frame.pc), how: frame.how)
        guard let image = table.image(containing: frame.pc) else { return [record] }
        let base = image.baseAddress ?? image.start
        record.imageIndex = indexOf(image)
        record.imageOffset = Address(frame.pc &- base)
        guard options.symbolication != .none, let symbolizer = symbolizerForCapture() else { return [record] }
        // A return address points after the call: look up the call instruction itself.
        let lookupAddress = frame.isExact ? frame.pc : frame.pc &- 1
        guard let found = symbolizer.lookup(lookupAddress, withSource: options.symbolication == .full) else { return [record] }
        return SymbolizedFrame.records(for: record, found: found, exact: frame.isExact)
    }

    private mutating func symbolizerForCapture() -> Symbolizer? {
        if let symbolizer { return symbolizer }
        if symbolizerFailed { return nil }
        // libdw asks debuginfod servers when DEBUGINFOD_URLS is set, by default for up to 90 s per
        // request: keep that inside the capture deadline.
        let remainingSeconds = max((deadline - Clock.monotonicNanoseconds()) / 1_000_000_000, 1)
        ProcessEnvironment.setDefault("DEBUGINFOD_TIMEOUT", String(min(remainingSeconds, 5)))
        do {
            symbolizer = try Symbolizer(pid: pid, debugDirectories: options.debugDirectories)
        } catch {
            symbolizerFailed = true
            softErrors.append(SoftError(stage: "symbols", message: "\(error)"))
        }
        return symbolizer
    }

    private mutating func indexOf(_ image: LoadedImage) -> Int {
        if let index = imageIndex[image.start] { return index }
        usedImages.append(image)
        imageIndex[image.start] = usedImages.count - 1
        return usedImages.count - 1
    }

    // MARK: Images

    /// The images frames referred to (in that order, so frame indices stay valid), then the main
    /// executable when no frame touched it.
    mutating func imageRecords(mainExecutable: String) -> [ImageRecord] {
        if let main = table.images.first(where: { $0.path == mainExecutable }) { _ = indexOf(main) }
        let rule = InAppRule(appRoots: options.appRoots, executablePath: mainExecutable)
        return usedImages.map { image in
            let identity = identify(image)
            return ImageRecord(
                path: image.path, buildID: identity.buildID.map(ELFNotes.hexString),
                loadAddress: Address(image.baseAddress ?? image.start), size: Int(image.size),
                fileOffset: Address(image.mappings.first?.offset ?? 0),
                inApp: image.kind == .file && rule.isInApp(image.path),
                architecture: identity.architecture?.rawValue, deleted: image.isDeleted,
                isMainExecutable: image.path == mainExecutable, package: identity.package)
        }
    }

    /// Build-id and architecture from the ELF header and notes in the process's memory; from the file
    /// when memory does not hold them.
    private mutating func identify(_ image: LoadedImage) -> ImageIdentity {
        if let base = image.baseAddress, let unwinder, let found = identifyInMemory(base: base, unwinder: unwinder) {
            return found
        }
        let path = image.isDeleted || image.kind == .memfd ? "/proc/\(pid)/map_files/\(hexDigits(image.start))-\(hexDigits(image.mappings.first?.end ?? image.end))" : image.path
        guard let bytes = try? ProcFS.readBytes(path, limit: 1 << 20), let header = try? ELFHeaderInfo.parse(bytes) else {
            if image.kind == .file || image.kind == .memfd {
                softErrors.append(SoftError(stage: "images", image: image.path, message: "no ELF build-id could be read"))
            }
            return ImageIdentity(buildID: nil, architecture: nil, package: nil)
        }
        return ImageIdentity(notes: ELFNotes.notes(inFile: bytes, header: header), architecture: header.architecture)
    }

    private func identifyInMemory(base: UInt64, unwinder: RemoteUnwinder) -> ImageIdentity? {
        var bytes = unwinder.read(base, count: ELFHeaderInfo.fileHeaderSize)
        var header: ELFHeaderInfo
        do {
            header = try ELFHeaderInfo.parse(bytes)
        } catch .truncated(_, let needed, _) {
            bytes = unwinder.read(base, count: needed)
            guard let full = try? ELFHeaderInfo.parse(bytes) else { return nil }
            header = full
        } catch {
            return nil
        }
        guard let bias = header.loadBias(imageBase: base) else { return nil }
        var notes: [ELFNote] = []
        for segment in header.noteSegments {
            notes += ELFNotes.parseNotes(unwinder.read(bias &+ segment.virtualAddress, count: Int(segment.size)),
                                         alignment: segment.alignment)
        }
        let identity = ImageIdentity(notes: notes, architecture: header.architecture)
        return identity.buildID == nil ? nil : identity
    }

    // MARK: Process

    func processRecord() -> ProcessRecord {
        let status = try? ProcFS.threadStatus(pid)
        let exeLink = ProcFS.readLink("/proc/\(pid)/exe") ?? ""
        let executable = InAppRule.deletedSuffixRemoved(exeLink).path
        var commandLine = ProcFS.commandLine(pid)
        if options.redactArguments && commandLine.count > 1 {
            commandLine = [commandLine[0]] + Array(repeating: "<redacted>", count: commandLine.count - 1)
        }
        let environment = ProcFS.environment(pid)
        func variable(_ name: String) -> String? { environment.last(where: { $0.name == name })?.value }
        var allowed: [String: String] = [:]
        for name in options.environmentAllowList { if let value = variable(name) { allowed[name] = value } }
        let app = AppRecord(
            name: options.app.name ?? variable("CRASHWATCH_APP_NAME"),
            version: options.app.version ?? variable("CRASHWATCH_APP_VERSION"),
            release: options.app.release ?? variable("CRASHWATCH_APP_RELEASE"))
        let cgroup = (try? ProcFS.readText("/proc/\(pid)/cgroup")).map(CgroupInfo.init(parsing:))
        return ProcessRecord(
            pid: pid, ppid: status?.ppid ?? 0, executable: executable, commandLine: commandLine,
            redacted: options.redactArguments, cwd: ProcFS.readLink("/proc/\(pid)/cwd"),
            uid: status?.uids.first ?? 0, gid: status?.gids.first ?? 0,
            startTime: ProcessClock.startTimeNanoseconds(pid: pid).map { RFC3339.format(nanosecondsSinceEpoch: $0) },
            comm: status?.name ?? "", cgroup: cgroup?.path, systemdUnit: cgroup?.unit,
            systemdInvocationID: variable("INVOCATION_ID"),
            app: app.name == nil && app.version == nil && app.release == nil ? nil : app,
            environment: allowed)
    }
}

private func hexDigits(_ value: UInt64) -> String { String(value, radix: 16) }

/// What an image's ELF header and notes say about it.
struct ImageIdentity {
    var buildID: [UInt8]?
    var architecture: Architecture?
    var package: PackageRecord?

    init(buildID: [UInt8]?, architecture: Architecture?, package: PackageRecord?) {
        self.buildID = buildID
        self.architecture = architecture
        self.package = package
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
