// ReportDiagnostics.swift — the conditions a report was captured under (ptrace scope, seccomp, errors, the
// deadline) and how far its processing got.
import FoundationEssentials

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
    /// The bytes of annotation tables the capture copied from the process (README "Annotations and
    /// breadcrumbs"); nil when it declared none.
    public var annotationBytes: Int?

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
