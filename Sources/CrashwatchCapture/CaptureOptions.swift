// CaptureOptions.swift — what a capture records and how hard processing tries: the options every capture
// source shares (`run`'s flags, `analyze-core`'s, `core-handler`'s).
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
    /// The operator's annotations (`--annotate KEY=VALUE`, settings `annotate`), each checked by
    /// `AnnotationRules.operatorAnnotation`; the report carries them, merged with the app's (theirs win).
    public var annotations: [String: String] = [:]
    /// The words that make an annotation key redacted (`--annotation-deny`, settings `annotation-deny`).
    public var annotationDeny: [String] = AnnotationRules.defaultDeny
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

extension ProcessingOptions {
    /// What a worker is asked to do for a capture taken with `options`, done by `deadlineNanoseconds`.
    init(_ options: CaptureOptions, deadlineNanoseconds: Int64) {
        self.init(maxFrames: options.maxFrames, symbolication: options.symbolication.rawValue,
                  debugDirectories: options.debugDirectories, appRoots: options.appRoots,
                  debuginfodURLs: options.debuginfodURLs, deadlineNanoseconds: deadlineNanoseconds,
                  reportByteLimit: options.reportByteLimit)
    }
}

extension RawCapture {
    /// Records the operator's annotations of `options` (redacted now: the capture never holds a denied value)
    /// and the deny list the app's are redacted with.
    mutating func annotate(_ options: CaptureOptions) {
        operatorAnnotations = AnnotationRules.merged(app: [], operator: options.annotations, deny: options.annotationDeny)
        annotationDeny = options.annotationDeny
    }
}
