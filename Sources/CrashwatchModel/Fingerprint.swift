// Fingerprint.swift — what identifies the bug behind a report, not the run: a versioned hash of the crash kind,
// the signal, the program's file name and the top in-app frames of the crashed thread (by name; without one,
// image name + offset), crash machinery skipped (FingerprintRules.swift). Never addresses, build-ids, pids, tids,
// hosts or paths beyond a file name, so the same bug keeps its fingerprint across ASLR, rebuilds, inputs,
// threads, hosts and crashwatch runs. The rules, with examples, are in the README ("Fingerprints"); a change of
// them is a new `Fingerprint.algorithm` name, so a report never silently joins another group.
import FoundationEssentials

/// A report's fingerprint and what it was computed from.
public struct FingerprintRecord: Codable, Sendable, Equatable {
    /// The versioned algorithm that computed `value` (`crashwatch-1`): values of different algorithms never compare.
    public var algorithm: String
    /// The fingerprint: 32 lower-case hex digits (the first 128 bits of a SHA-256).
    public var value: String
    /// The report kind as hashed: `crash`, `hang`, `snapshot`, or `abnormalExit/REASON` (`abnormalExit/memory`).
    public var kind: String
    /// The signal name as hashed: the original fault's for a handled-then-fatal crash, `none` for a hang or a snapshot.
    public var signal: String
    /// The program as hashed: the file name of the crashed process's executable (two programs whose crashes
    /// have the same function names are two bugs).
    public var program: String
    /// The frames hashed, innermost first: normalized function names, or `IMAGE+0xOFFSET` for a frame without one.
    public var frames: [String]

    /// Creates a record from its parts as they are (see `Fingerprint.of` for how they are made).
    public init(algorithm: String, value: String, kind: String, signal: String, program: String, frames: [String]) {
        self.algorithm = algorithm
        self.value = value
        self.kind = kind
        self.signal = signal
        self.program = program
        self.frames = frames
    }
}

/// Computes fingerprints: one pure function of a report's kind, signal, program and frames.
public enum Fingerprint {
    /// The algorithm's versioned name; any change to what `of` computes must change it.
    public static let algorithm = "crashwatch-1"
    /// How many frames are hashed.
    public static let frameCount = 3
    /// How many frames of a stack are looked at, at most (a hostile report may have any number).
    static let framesScanned = 512

    /// The fingerprint of `report`, from its crashed thread (or its original fault, when the crash began as a
    /// handled fault; a hang's or a snapshot's main thread), whatever the report already says its fingerprint is.
    /// A snapshot is no bug: its fingerprint groups the snapshots of one program whose main thread was at the same
    /// place (`kind` `snapshot` keeps them apart from crashes and hangs there).
    public static func of(_ report: CrashReport) -> FingerprintRecord {
        var kind = report.kind.rawValue
        if report.kind == .abnormalExit, let reason = report.exit?.reason { kind += "/" + reason }
        let (signal, frames) = stack(of: report)
        // The top in-app non-machinery frames, else the top non-machinery ones, else the top ones; each frame's
        // key is made once, and no more frames are looked at than the first choice needs.
        var inApp: [String] = [], others: [String] = [], top: [String] = []
        for frame in frames.prefix(framesScanned) {
            guard let keyed = keyedFrame(frame, images: report.images) else { continue }
            if top.count < frameCount { top.append(keyed.key) }
            guard !keyed.machinery else { continue }
            if keyed.inApp {
                inApp.append(keyed.key)
                if inApp.count == frameCount { break }
            } else if others.count < frameCount {
                others.append(keyed.key)
            }
        }
        let chosen = !inApp.isEmpty ? inApp : !others.isEmpty ? others : top
        let program = FingerprintRules.capped(ImageRecord.basename(report.process.executable))
        return FingerprintRecord(algorithm: algorithm, value: value(kind: kind, signal: signal, program: program, frames: chosen),
                                 kind: kind, signal: signal, program: program, frames: chosen)
    }

    /// The hash of the parts: SHA-256 over the algorithm name and each part, each preceded by its length in
    /// bytes (so no name can be made to look like two), cut to its first 16 bytes, in hex.
    public static func value(kind: String, signal: String, program: String, frames: [String]) -> String {
        var input: [UInt8] = []
        for part in [algorithm, kind, signal, program] + frames {
            input += Array("\(part.utf8.count):".utf8) + Array(part.utf8)
        }
        return Hex.string(Array(SHA256.digest(input).prefix(16)))
    }

    /// The signal name and the frames the fingerprint is taken from.
    static func stack(of report: CrashReport) -> (signal: String, frames: [FrameRecord]) {
        if let original = report.signal.originalFault, !original.frames.isEmpty { return (original.name, original.frames) }
        let thread = report.crashedThread ?? report.threads.first { $0.tid == report.process.pid } ?? report.threads.first
        return (report.signal.name, thread?.frames ?? [])
    }

    /// One frame as the fingerprint sees it.
    struct KeyedFrame {
        /// The normalized name, or `IMAGE+0xOFFSET`.
        let key: String
        /// Whether its image is in-app.
        let inApp: Bool
        /// Whether it is crash machinery every crash of its kind shares.
        let machinery: Bool
    }

    /// A frame's key (its normalized name, or its image and the offset in it), or nil when it has neither.
    static func keyedFrame(_ frame: FrameRecord, images: [ImageRecord]) -> KeyedFrame? {
        let image = frame.imageIndex.flatMap { images.indices.contains($0) ? images[$0] : nil }
        let inApp = image?.inApp ?? false
        if let function = frame.function.map(FingerprintRules.normalizedName), !function.isEmpty {
            return KeyedFrame(key: function, inApp: inApp, machinery: FingerprintRules.isMachinery(function))
        }
        guard let image, let offset = frame.imageOffset, !image.name.isEmpty else { return nil }
        return KeyedFrame(key: FingerprintRules.capped(image.name) + "+" + hex(offset.value), inApp: inApp, machinery: false)
    }
}
