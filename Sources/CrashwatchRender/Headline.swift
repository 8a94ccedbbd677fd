// Headline.swift — a report in one line for a log, worded like systemd-coredump's journal message:
// `Process 1234 (null_deref) of unit x.service crashed: SIGSEGV (SEGV_MAPERR) at 0x0 in crash_here (null_deref.c:12)`.
// The frame named is the one `list` shows (ReportSummary.topFrame), else the first frame of the same stack that
// has a function; it reads as in `list` (FrameText.brief). Every string from the report is sanitized: a log
// line must stay one line whatever the crashed program named itself.
import CrashwatchModel

/// One-line accounts of reports, for logs (the journal's `MESSAGE`).
public enum Headline {
    /// The frame a headline names: the top in-app frame where the fault happened (as `list` shows it), else
    /// the first frame of that stack with a function; nil when neither exists.
    public static func frame(of report: CrashReport) -> FrameRecord? {
        ReportSummary.topFrame(of: report)
            ?? ReportSummary.faultFrames(of: report).first { !($0.function ?? "").isEmpty }
    }

    /// `Process PID (COMM)[ of unit UNIT] crashed: SIGNAL (CODE)[ at ADDR][ from pid N][; the OOM killer: …][; original
    /// fault: …][ in FRAME]`;
    /// for a hang, `… hung: no watchdog ping for N ms[ in FRAME]`; for a snapshot, `… snapshot: N threads: … [ in FRAME]`.
    public static func text(_ report: CrashReport) -> String {
        let clean = TextFormatting.sanitized
        let process = report.process
        var line = "Process \(process.pid) (\(clean(process.comm)))"
        if let unit = process.systemdUnit, !unit.isEmpty { line += " of unit \(clean(unit))" }
        if report.kind == .hang, let hang = report.hang {
            // A hang has no signal: how long the process had gone without a sign of progress instead.
            let milliseconds = Int(min(max(hang.durationMs.isNaN ? 0 : hang.durationMs, 0), 1e15))  // a hostile file's number
            line += " \(verb(report.kind)): no \(clean(hang.source)) ping for \(milliseconds) ms"
        } else if report.kind == .snapshot {
            // A snapshot has no signal either: what the threads were doing.
            line += " \(verb(report.kind)): " + (ThreadStates.summary(of: report) ?? "\(report.threads.count) threads")
        } else {
            line += " \(verb(report.kind)): " + fault(name: report.signal.name, code: report.signal.codeName,
                                                     address: report.signal.faultAddress, sender: report.signal.senderPID)
        }
        if report.kind == .abnormalExit, let exit = report.exit, exit.reason == "memory" {
            // The report names the OOM kill; so does its line (the stderr line says it the same way).
            line += "; the OOM killer: " + clean(exit.evidence ?? "memory")
        }
        if let original = report.signal.originalFault {
            line += "; original fault: " + fault(name: original.name, code: original.codeName, address: original.faultAddress,
                                                 sender: original.senderPID)
        }
        if let frame = frame(of: report) { line += " in " + clean(FrameText.brief(frame, in: report)) }
        return line
    }

    /// How the process ended, as a verb: `crashed`, `was killed` (an abnormal exit), `hung`; `snapshot` for a look at a live one.
    static func verb(_ kind: ReportKind) -> String {
        switch kind.rawValue {
        case ReportKind.crash.rawValue: "crashed"
        case ReportKind.abnormalExit.rawValue: "was killed"
        case ReportKind.hang.rawValue: "hung"
        case ReportKind.snapshot.rawValue: "snapshot"
        default: "ended (\(TextFormatting.sanitized(kind.rawValue)))"
        }
    }

    /// `SIGSEGV (SEGV_MAPERR) at 0x0`, `SIGABRT (SI_TKILL) from pid 42`: a signal as the crash line shows it.
    static func fault(name: String, code: String, address: Address?, sender: Int32?) -> String {
        var text = "\(TextFormatting.sanitized(name)) (\(TextFormatting.sanitized(code)))"
        if let address { text += " at \(address)" }
        if let sender { text += " from pid \(sender)" }
        return text
    }
}
