// ShowViews.swift — the shorter pages of `crashwatch show`: `--brief` (the headline and the stack where the
// fault happened, as coredumpctl's one-screen summary) and `--thread TID` (the header and one thread, with
// its registers). Both reuse ShowRenderer's frame, stop-reason and register lines.
import CrashwatchModel

extension ShowRenderer {
    /// `--brief`: the one-line headline, then the crashed thread's frames and why its unwinding stopped (for a
    /// hang or a SIGKILL death, the main thread's); no registers, no other threads, no images.
    public static func renderBrief(_ report: CrashReport, style: Style) -> String {
        var page = Page(style: style)
        page.line(TextFormatting.sanitized(Headline.text(report)))
        page.line("Report \(TextFormatting.sanitized(report.id)), \(TextFormatting.utcStamp(report.captureTime))")
        let stoppedFromOutside = report.kind.isLiveProcess || report.kind == .abnormalExit
        let thread = report.crashedThread ?? (stoppedFromOutside ? report.threads.first { $0.tid == report.process.pid } : nil)
        if let thread {
            page.blank()
            page.heading((thread.crashed ? "Crashed thread " : "Thread ") + threadTitle(thread))
            frames(thread.frames, in: report, into: &page)
            stopReason(thread.unwindStopReason, into: &page)
        }
        if let fault = report.signal.originalFault, !fault.frames.isEmpty {
            page.blank()
            page.heading("Original fault on thread \(fault.tid) at \(TextFormatting.utcStamp(fault.time))")
            frames(fault.frames, in: report, into: &page)
        }
        return page.lines.map { $0 + "\n" }.joined()
    }

    /// `--thread TID`: the header block, then thread `tid`'s frames, stop reason and registers; nil when the
    /// report has no such thread.
    public static func renderThread(_ tid: Int32, of report: CrashReport, style: Style) -> String? {
        guard let thread = report.threads.first(where: { $0.tid == tid }) else { return nil }
        var page = Page(style: style)
        header(of: report, into: &page)
        page.blank()
        page.heading((thread.crashed ? "Crashed thread " : "Thread ") + threadTitle(thread))
        frames(thread.frames, in: report, into: &page)
        stopReason(thread.unwindStopReason, into: &page)
        registers(thread.registers, into: &page)
        return page.lines.map { $0 + "\n" }.joined()
    }
}
