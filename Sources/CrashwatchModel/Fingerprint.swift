// Fingerprint.swift — what identifies the bug behind a report, not the run: a versioned hash of the crash kind,
// the signal and the top in-app frames of the crashed thread (by name; without one, image name + offset),
// crash machinery skipped (FingerprintRules.swift). Never addresses, build-ids, pids, tids, hosts or paths beyond
// an image's file name, so the same bug keeps its fingerprint across ASLR, rebuilds, inputs, threads, hosts and
// crashwatch runs. The rules, with examples, are in the README ("Fingerprints and groups"); a change of them is a
// new `Fingerprint.algorithm` name, so a report never silently joins another group.
import FoundationEssentials

/// A report's fingerprint and what it was computed from.
public struct FingerprintRecord: Codable, Sendable, Equatable {
    /// The versioned algorithm that computed `value` (`crashwatch-1`): values of different algorithms never compare.
    public var algorithm: String
    /// The fingerprint: 32 lower-case hex digits (the first 128 bits of a SHA-256).
    public var value: String
    /// The report kind as hashed: `crash`, `hang`, or `abnormalExit/REASON` (`abnormalExit/memory`).
    public var kind: String
    /// The signal name as hashed: the original fault's for a handled-then-fatal crash, `none` for a hang.
    public var signal: String
    /// The frames hashed, innermost first: normalized function names, or `IMAGE+0xOFFSET` for a frame without one.
    public var frames: [String]

    /// Creates a record from its parts as they are (see `Fingerprint.of` for how they are made).
    public init(algorithm: String, value: String, kind: String, signal: String, frames: [String]) {
        self.algorithm = algorithm
        self.value = value
        self.kind = kind
        self.signal = signal
        self.frames = frames
    }
}

/// Computes fingerprints: one pure function of a report's frames, kind and signal.
public enum Fingerprint {
    /// The algorithm's versioned name; any change to what `of` computes must change it.
    public static let algorithm = "crashwatch-1"
    /// How many frames are hashed.
    public static let frameCount = 3
    /// How many frames of a stack are looked at, at most (a hostile report may have any number).
    static let framesScanned = 512

    /// The fingerprint of `report`, from its crashed thread (or its original fault, when the crash began as a
    /// handled fault; a hang's main thread), whatever the report already says its fingerprint is.
    public static func of(_ report: CrashReport) -> FingerprintRecord {
        var kind = report.kind.rawValue
        if report.kind == .abnormalExit, let reason = report.exit?.reason { kind += "/" + reason }
        let (signal, frames) = stack(of: report)
        let keys = keyedFrames(frames, images: report.images)
        let candidates = keys.filter { !$0.machinery }
        let inApp = candidates.filter(\.inApp)
        let chosen = (!inApp.isEmpty ? inApp : !candidates.isEmpty ? candidates : keys).prefix(frameCount).map(\.key)
        return FingerprintRecord(algorithm: algorithm, value: value(kind: kind, signal: signal, frames: chosen),
                                 kind: kind, signal: signal, frames: chosen)
    }

    /// The hash of the parts: SHA-256 over the algorithm name and each part, each preceded by its length in
    /// bytes (so no name can be made to look like two), cut to its first 16 bytes, in hex.
    public static func value(kind: String, signal: String, frames: [String]) -> String {
        var input: [UInt8] = []
        for part in [algorithm, kind, signal] + frames {
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

    /// The frames that have a key (a name, or an image and an offset in it), innermost first.
    static func keyedFrames(_ frames: [FrameRecord], images: [ImageRecord]) -> [KeyedFrame] {
        frames.prefix(framesScanned).compactMap { frame in
            let image = frame.imageIndex.flatMap { images.indices.contains($0) ? images[$0] : nil }
            let inApp = image?.inApp ?? false
            if let function = frame.function.map(FingerprintRules.normalizedName), !function.isEmpty {
                return KeyedFrame(key: function, inApp: inApp, machinery: FingerprintRules.isMachinery(function))
            }
            guard let image, let offset = frame.imageOffset, !image.name.isEmpty else { return nil }
            return KeyedFrame(key: FingerprintRules.capped(image.name) + "+" + hex(offset.value), inApp: inApp, machinery: false)
        }
    }
}
