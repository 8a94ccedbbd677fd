// RawCapture.swift — what a capture source yields: everything only the live (or dumped) process had —
// registers, stack bytes, maps, build-ids and the bytes of images whose files are gone — with no
// unwinding or symbols yet. The supervisor makes one while the crashed process is held and hands it to
// the processing worker as one in-memory file; a core file will be read into the same shape.
//
// The container: memory regions first (`u64 address, u64 length, bytes`, each padded to 8), then the
// metadata as JSON, then a 24-byte trailer (`u64 metadata offset, u64 metadata length, "CWRAWEND"`), so
// the writer streams stack bytes straight from the process and never holds them all. The metadata is the one
// JSON crashwatch writes without `JSONWriter`: it is Codable (JSONEncoder here, JSONDecoder in the worker), an
// internal format between the supervisor and its own worker binary, so one declaration of each type gives both
// its writer and its reader and they cannot drift; it is encoded after the release, off the hold.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem
import FoundationEssentials

/// One thread as captured.
public struct RawThread: Codable, Sendable, Equatable {
    public var tid: Int32
    public var name: String?
    public var crashed: Bool
    /// NT_PRSTATUS bytes; empty when they could not be read (or the thread did not stop in time). Stored in
    /// the capture's metadata as hex (`registersHex`: JSONEncoder writes byte arrays as slow arrays of
    /// numbers), encoded only then, after the release.
    public var registers: [UInt8]
    /// Why the thread has no registers, when it has none.
    public var missingReason: String?
    /// The stack bytes captured for it: [start, end) in the process, and whether a cap cut them.
    public var stackStart: UInt64?
    public var stackEnd: UInt64?
    public var stackCapped: Bool
    /// What the thread was doing when stopped, for a capture of a process stopped from outside (a snapshot, a
    /// hang); nil otherwise.
    public var state: ThreadState?
    /// The system call it was in (`state` is `syscall`): the architecture's number.
    public var syscall: Int?

    public init(tid: Int32, name: String?, crashed: Bool, registers: [UInt8], missingReason: String? = nil) {
        self.tid = tid
        self.name = name
        self.crashed = crashed
        self.registers = registers
        self.missingReason = missingReason
        self.stackCapped = false
    }

    private enum CodingKeys: String, CodingKey {
        case tid, name, crashed, registersHex, missingReason, stackStart, stackEnd, stackCapped, state, syscall
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tid = try container.decode(Int32.self, forKey: .tid)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        crashed = try container.decode(Bool.self, forKey: .crashed)
        let hex = try container.decode(String.self, forKey: .registersHex)
        guard let bytes = Hex.bytes(hex) else {
            throw DecodingError.dataCorruptedError(forKey: .registersHex, in: container, debugDescription: "not hex")
        }
        registers = bytes
        missingReason = try container.decodeIfPresent(String.self, forKey: .missingReason)
        stackStart = try container.decodeIfPresent(UInt64.self, forKey: .stackStart)
        stackEnd = try container.decodeIfPresent(UInt64.self, forKey: .stackEnd)
        stackCapped = try container.decode(Bool.self, forKey: .stackCapped)
        state = try container.decodeIfPresent(ThreadState.self, forKey: .state)
        syscall = try container.decodeIfPresent(Int.self, forKey: .syscall)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tid, forKey: .tid)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encode(crashed, forKey: .crashed)
        try container.encode(Hex.string(registers), forKey: .registersHex)
        try container.encodeIfPresent(missingReason, forKey: .missingReason)
        try container.encodeIfPresent(stackStart, forKey: .stackStart)
        try container.encodeIfPresent(stackEnd, forKey: .stackEnd)
        try container.encode(stackCapped, forKey: .stackCapped)
        try container.encodeIfPresent(state, forKey: .state)
        try container.encodeIfPresent(syscall, forKey: .syscall)
    }
}

/// An image's identity as read from the process's memory, and where its bytes can be found.
public struct RawImage: Codable, Sendable, Equatable {
    /// The image's first mapping's start (the key into the maps).
    public var start: UInt64
    public var buildID: String?
    public var architecture: Architecture?
    public var package: PackageRecord?
    /// Its non-writable mappings were copied into the capture (deleted, memfd or replaced file, vdso).
    public var copied: Bool
    /// The position, among the descriptors passed with the capture, of the image file opened through
    /// /proc while the process was held (for deleted and memfd images); nil when none.
    public var descriptor: Int?

    public init(start: UInt64) {
        self.start = start
        self.copied = false
    }
}

/// The original fault of a handled-then-re-raised crash.
public struct RawFault: Codable, Sendable, Equatable {
    public var tid: Int32
    public var signal: SignalInfo
    public var timeNanoseconds: Int64
    private var registersHex: String
    public var registers: [UInt8] { Hex.bytes(registersHex) ?? [] }

    public init(_ fault: HandledFault) {
        self.init(tid: fault.tid, signal: fault.signal, timeNanoseconds: fault.timeNanoseconds, registers: fault.registers)
    }

    public init(tid: Int32, signal: SignalInfo, timeNanoseconds: Int64, registers: [UInt8]) {
        self.tid = tid
        self.signal = signal
        self.timeNanoseconds = timeNanoseconds
        self.registersHex = Hex.string(registers)
    }
}

/// What a processing worker is asked to do with a capture.
public struct ProcessingOptions: Codable, Sendable, Equatable {
    public var maxFrames: Int
    public var symbolication: String
    public var debugDirectories: [String]
    public var appRoots: [String]
    /// debuginfod servers the worker may ask (`--debuginfod`); none means no network.
    public var debuginfodURLs: [String]
    /// CLOCK_MONOTONIC nanoseconds by which the full report must be done.
    public var deadlineNanoseconds: Int64
    /// The full report's size limit in bytes: past it, frames are dropped (and say so).
    public var reportByteLimit: Int
    /// A directory the image files are found under (`analyze-core --sysroot`: the crashed machine's files
    /// copied elsewhere); their paths in the report stay the process's own.
    public var sysroot: String?
}

/// Everything captured from one crashed process.
public struct RawCapture: Codable, Sendable {
    public static let formatVersion = 1

    public var formatVersion = RawCapture.formatVersion
    public var reportID: String
    /// `crash`, `abnormalExit`, or `hang` / `snapshot` for a process left running.
    public var kind: ReportKind = .crash
    /// For a hang: when it began and how long it had lasted.
    public var hang: HangRecord?
    /// For a crash that ended a reported hang: the hang report's id.
    public var hangReportID: String?
    /// The supervising run's id (`CaptureOptions.runID`).
    public var runID: String?
    /// `core` for a capture read from a core dump; nil for a live one.
    public var source: String?
    /// Where the core dump was kept (`CrashReport.coreFile`).
    public var coreFile: String?
    /// Whether the death was seen only at the threads' exit stops: `signal` has no siginfo.
    public var seenAtExit = false
    /// For an abnormal exit (kind `abnormalExit`): why the process was killed.
    public var exit: ExitRecord?
    public var pid: Int32
    public var signal: SignalInfo
    /// The supervisor's view of the original fault (see `DetectedCrash.originalFault`).
    public var originalFault: RawFault?
    /// Every handled fault of the process whose handler may still be running, oldest first: processing
    /// keeps those whose signal frame is still on their thread's stack.
    public var handledFaults: [RawFault] = []
    /// When the fatal signal was seen (CLOCK_REALTIME nanoseconds).
    public var timeNanoseconds: Int64
    /// When the capture began (CLOCK_MONOTONIC nanoseconds): capture durations count from here.
    public var startedNanoseconds: Int64
    public var holdDurationMs: Double
    public var architecture: Architecture
    public var maps: String
    /// /proc/PID/auxv, hex.
    public var auxv: String
    /// aarch64 NT_ARM_PAC_MASK insn_mask of the crashed thread, when pointer authentication is on.
    public var pointerAuthenticationMask: UInt64?

    /// The bits cleared from code addresses (return addresses, the pc) before they are used: the
    /// NT_ARM_PAC_MASK insn_mask when known, else on aarch64 every bit a 48-bit user address cannot have
    /// (a core written without the note, by qemu or a kernel without pointer authentication); 0 on x86-64.
    public var codeAddressMask: UInt64 {
        architecture == .aarch64 ? pointerAuthenticationMask ?? 0xff7f_0000_0000_0000 : 0
    }
    public var threads: [RawThread]
    public var images: [RawImage]
    public var process: ProcessRecord
    public var host: HostRecord
    public var ptraceScope: Int?
    public var seccompMode: Int?
    /// Stack and image bytes captured, and the caps that applied.
    public var capturedBytes: Int
    public var stackByteLimitPerThread: Int
    public var captureByteLimit: Int
    public var softErrors: [SoftError]
    public var options: ProcessingOptions
    /// The crashed process's credentials as the kernel gave them while it was held (nil for a core file,
    /// whose own notes are not believed): who processes it, and who may read what is kept of it.
    public var credentials: ProcessCredentials?
    /// The annotation tables copied into the capture's regions (`AnnotationCapture`), in precedence order; nil
    /// when the process declared none.
    public var annotationTables: [RawAnnotationTable]? = nil
    /// The operator's annotations (`--annotate`), redacted already; nil when none were given.
    public var operatorAnnotations: [String: String]? = nil
    /// The words that make an annotation key redacted (`--annotation-deny`).
    public var annotationDeny: [String] = AnnotationRules.defaultDeny

    /// The crashed thread.
    public var crashedThread: RawThread? { threads.first { $0.crashed } }
}

// MARK: - The container

/// Writes a capture into a file: regions as they are read, the metadata last.
public struct RawCaptureWriter: ~Copyable {
    public let file: OwnedDescriptor
    private var offset: UInt64 = 0

    public init(file: OwnedDescriptor) { self.file = file }

    /// A writer continuing a file that already holds `regionBytes` bytes of regions (its position at their end).
    init(file: OwnedDescriptor, regionBytes: UInt64) {
        self.file = file
        self.offset = regionBytes
    }

    /// How many bytes of regions were written.
    public var regionBytes: UInt64 { offset }

    /// The bytes before a region's own: its address and length, a 64-bit word each.
    static let regionHeaderBytes = 16

    /// Appends one memory region.
    public mutating func appendRegion(address: UInt64, bytes: UnsafeRawBufferPointer) throws(SystemError) {
        guard !bytes.isEmpty else { return }
        try put(words: [address.littleEndian, UInt64(bytes.count).littleEndian])
        try file.write(bytes)
        let padding = (8 - bytes.count % 8) % 8
        if padding > 0 { try put([UInt8](repeating: 0, count: padding)) }
        offset += 16 + UInt64(bytes.count + padding)
    }

    /// Appends one memory region held in an array.
    mutating func appendRegion(address: UInt64, bytes: [UInt8]) throws(SystemError) {
        var failure: SystemError?
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try appendRegion(address: address, bytes: buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Appends regions laid out (headers, data, padding: zero) by `fill` straight into the file, in at most
    /// `count` bytes (`MemoryFile.append`): `fill` returns how many bytes it laid out, whole regions.
    public mutating func appendRegions(upTo count: Int, fill: (UnsafeMutableRawBufferPointer) -> Int) throws(SystemError) {
        offset += UInt64(try MemoryFile.append(to: file, at: offset, count: count, fill: fill))
    }

    /// Appends one region whose bytes sit in `buffer` after a 16-byte gap, with room for padding
    /// after them: the header goes into the gap and the whole region out in one write.
    public mutating func appendRegion(address: UInt64, inPlace buffer: UnsafeMutableRawBufferPointer, count: Int) throws(SystemError) {
        guard count > 0 else { return }
        let padding = (8 - count % 8) % 8
        precondition(buffer.count >= 16 + count + padding)
        buffer.storeBytes(of: address.littleEndian, toByteOffset: 0, as: UInt64.self)
        buffer.storeBytes(of: UInt64(count).littleEndian, toByteOffset: 8, as: UInt64.self)
        for index in 0..<padding { buffer[16 + count + index] = 0 }
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<16 + count + padding]))
        offset += 16 + UInt64(count + padding)
    }

    private func put(_ bytes: [UInt8]) throws(SystemError) { try file.write(bytes) }

    private func put(words: [UInt64]) throws(SystemError) {
        try file.write(words.withUnsafeBytes { Array($0) })
    }

    /// Appends the metadata and the trailer; the capture is complete afterwards.
    public consuming func finish(_ capture: RawCapture) throws(SystemError) {
        let json: [UInt8]
        do {
            json = Array(try JSONEncoder().encode(capture))
        } catch {
            throw SystemError.invalidData("encode capture")
        }
        try put(json)
        try put(words: [offset.littleEndian, UInt64(json.count).littleEndian])
        try put(Array("CWRAWEND".utf8))
    }
}

/// Why a capture file cannot be read.
public struct RawCaptureError: Error, CustomStringConvertible {
    public let description: String
}

/// Where threads, registers and memory come from: the seam between sources and everything after them.
/// A live process's raw capture (`RawCaptureFile`) is one; a core file (PT_LOAD segments and notes) is the
/// next. The report builder, the unwinder and the symbolizer see only this.
public protocol CaptureSource: AnyObject {
    /// Threads, registers, maps, identities and the process records.
    var capture: RawCapture { get }
    /// The process's memory that was captured: each region's address and bytes.
    var regions: [(address: UInt64, bytes: UnsafeRawBufferPointer)] { get }
}

/// A capture file mapped read-only: the metadata decoded and the regions in place (no copies).
public final class RawCaptureFile: CaptureSource {
    public let capture: RawCapture
    /// Each captured region: its address in the process and its bytes inside the mapping.
    public let regions: [(address: UInt64, bytes: UnsafeRawBufferPointer)]
    private let mapping: MappedFile

    public init(_ descriptor: OwnedDescriptor, limit: Int) throws {
        mapping = try MappedFile(descriptor, limit: limit)
        let bytes = mapping.bytes, reader = ByteReader(bytes)
        guard bytes.count >= 24, Array(bytes[(bytes.count - 8)...]) == Array("CWRAWEND".utf8) else {
            throw RawCaptureError(description: "not a crashwatch capture (no trailer)")
        }
        guard let metaOffset = reader.u64(bytes.count - 24), let metaLength = reader.u64(bytes.count - 16),
              metaOffset <= UInt64(bytes.count - 24), metaLength == UInt64(bytes.count - 24) - metaOffset,
              let meta = reader.bytes(at: metaOffset, count: metaLength) else {
            throw RawCaptureError(description: "capture metadata out of bounds")
        }
        capture = try JSONDecoder().decode(RawCapture.self, from: Data(UnsafeRawBufferPointer(rebasing: meta)))
        guard capture.formatVersion == RawCapture.formatVersion else {
            throw RawCaptureError(description: "capture format \(capture.formatVersion), expected \(RawCapture.formatVersion)")
        }
        var found: [(UInt64, UnsafeRawBufferPointer)] = []
        var at = 0
        let end = Int(metaOffset)
        while at + 16 <= end, let address = reader.u64(at), let length = reader.u64(at + 8) {
            guard length <= UInt64(end - at - 16), let region = reader.bytes(at: at + 16, count: Int(length)) else {
                throw RawCaptureError(description: "capture region out of bounds")
            }
            found.append((address, UnsafeRawBufferPointer(rebasing: region)))
            at += 16 + Int(length) + (8 - Int(length) % 8) % 8
        }
        regions = found
    }
}
