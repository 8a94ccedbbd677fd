// HTMLExport.swift — `crashwatch export --format html`: one report as one self-contained page a person opens in a
// browser or attaches to a ticket. Top to bottom: the headline (the journal's one line), the key facts, the
// crashed thread (in-app frames highlighted, each frame's source file:line:column, its registers), the original
// fault and every other fault whose handler was still running, the fingerprint when the report has one, the other
// threads folded (`<details>`), the images with their build-ids, the soft errors, then the process, host and
// capture facts. The facts are the show page's (ShowRenderer), laid out for a browser. Every string from the
// report is escaped (HTML.swift); the page loads nothing (HTMLAssets.swift).
import CrashwatchModel

/// Renders a report as a self-contained HTML page.
public enum HTMLExport {
    /// The whole page, UTF-8 text ending in a newline.
    public static func render(_ report: CrashReport) -> String {
        var page = HTMLBuilder()
        page.markup("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        page.markup("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        page.markup("<meta http-equiv=\"Content-Security-Policy\" content=\"")
        page.markup(HTMLAssets.contentSecurityPolicy)
        page.markup("\">\n<meta name=\"generator\" content=\"crashwatch\">\n")
        page.element("title", title(of: report))
        page.markup("\n<style>")
        page.markup(HTMLAssets.style)
        page.markup("</style>\n</head>\n<body>\n")

        header(of: report, into: &page)
        page.markup("<main>\n")
        crashedThread(of: report, into: &page)
        faults(of: report, into: &page)
        HTMLFacts.fingerprint(report, into: &page)
        otherThreads(of: report, into: &page)
        HTMLFacts.images(report, into: &page)
        HTMLFacts.softErrors(report, into: &page)
        HTMLFacts.facts(report, into: &page)
        page.markup("</main>\n<footer>")
        page.text("Report \(report.id), schema version \(report.schemaVersion), written by crashwatch \(report.crashwatchVersion).")
        page.markup(" Exported by crashwatch export --format html.</footer>\n<script>")
        page.markup(HTMLAssets.script)
        page.markup("</script>\n</body>\n</html>\n")
        return page.html
    }

    /// `checkout: SIGSEGV in handle_request`: what a browser tab shows.
    static func title(of report: CrashReport) -> String {
        var title = report.process.comm + ": "
        title += report.kind == .crash || report.kind == .abnormalExit ? report.signal.name : Headline.verb(report.kind)
        if let frame = Headline.frame(of: report), let function = frame.function, !function.isEmpty {
            title += " in " + function
        }
        return title
    }

    // MARK: Header

    /// The headline and the facts a reader needs first: signal, original fault, process, executable, time, app.
    static func header(of report: CrashReport, into page: inout HTMLBuilder) {
        let process = report.process
        let signal = report.signal
        page.markup("<header>\n")
        page.element("p", ["class": "kicker"], kindTitle(report.kind) + " · " + report.id)
        page.newline()
        page.element("h1", ["id": "headline"], Headline.text(report))
        page.newline()
        page.markup("<p id=\"toolbar\" hidden><button type=\"button\" id=\"expand\">Unfold all</button> ")
        page.markup("<button type=\"button\" id=\"collapse\">Fold all</button></p>\n")
        page.open("dl", ["class": "facts", "id": "summary"])
        page.newline()
        if !report.kind.isLiveProcess {
            var text = "\(signal.name) (\(signal.codeName)), signal \(signal.number), code \(signal.code)"
            if let address = signal.faultAddress { text += ", fault address \(address)" }
            page.fact("Signal", text, class: "alarm")
            page.fact("Description", signal.description)
        }
        if let fault = signal.originalFault {
            page.fact("Original fault", faultLine(name: fault.name, codeName: fault.codeName, address: fault.faultAddress,
                                                  tid: fault.tid, time: fault.time), class: "alarm")
        }
        page.fact("Process", "\(process.pid) (\(process.comm)), parent \(process.ppid)")
        page.fact("Executable", process.executable + (report.mainExecutable?.deleted == true ? " (deleted)" : ""))
        page.fact("Command", ShowRenderer.commandLine(of: process))
        page.fact("Time", TextFormatting.utcStamp(report.captureTime))
        page.fact("App", process.app.flatMap(ShowRenderer.appText))
        page.fact("Unit", process.systemdUnit)
        page.markup("</dl>\n</header>\n")
    }

    /// `Crash report`, `Hang report`, …: the kicker line's first words.
    static func kindTitle(_ kind: ReportKind) -> String {
        switch kind.rawValue {
        case ReportKind.crash.rawValue: "Crash report"
        case ReportKind.hang.rawValue: "Hang report"
        case ReportKind.snapshot.rawValue: "Snapshot"
        case ReportKind.abnormalExit.rawValue: "Abnormal exit report"
        default: "Report (\(kind.rawValue))"
        }
    }

    /// `SIGSEGV (SEGV_MAPERR) at 0x10 on thread 4242 at 2026-11-30 09:01:57.120 UTC`.
    static func faultLine(name: String, codeName: String, address: Address?, tid: Int32, time: String) -> String {
        var text = "\(name) (\(codeName))"
        if let address { text += " at \(address)" }
        return text + " on thread \(tid) at \(TextFormatting.utcStamp(time))"
    }

    // MARK: Threads

    /// The crashed thread, open: its frames, why unwinding stopped, its registers.
    static func crashedThread(of report: CrashReport, into page: inout HTMLBuilder) {
        guard let crashed = report.crashedThread else { return }
        page.markup("<section id=\"crashed-thread\">\n")
        page.element("h2", "Crashed thread " + ShowRenderer.threadTitle(crashed))
        page.newline()
        let handlerFrames = report.signal.originalFault == nil ? 0 : FrameText.handlerFrameCount(crashed.frames)
        frames(crashed.frames, in: report, into: &page, handlerFrames: handlerFrames)
        stopReason(crashed.unwindStopReason, into: &page)
        registers(crashed.registers, open: true, into: &page)
        page.markup("</section>\n")
    }

    /// The original fault and the other faults whose handlers were still running, each with its stack.
    static func faults(of report: CrashReport, into page: inout HTMLBuilder) {
        let signal = report.signal
        let faults = signal.activeFaults.isEmpty ? signal.originalFault.map { [$0] } ?? [] : signal.activeFaults
        guard !faults.isEmpty else { return }
        page.markup("<section id=\"faults\">\n")
        page.element("h2", faults.count == 1 ? "Original fault" : "Original fault and active faults (\(faults.count))")
        page.newline()
        for (position, fault) in faults.enumerated() {
            page.markup("<div class=\"fault\">\n")
            let title = (position == 0 ? "Original fault: " : "Active fault \(position + 1): ")
            page.element("h3", title + faultLine(name: fault.name, codeName: fault.codeName, address: fault.faultAddress,
                                                 tid: fault.tid, time: fault.time))
            page.newline()
            page.element("p", ["class": "muted"], fault.description)
            page.newline()
            if !fault.frames.isEmpty { frames(fault.frames, in: report, into: &page) }
            registers(fault.registers, open: false, into: &page)
            page.markup("</div>\n")
        }
        page.markup("</section>\n")
    }

    /// Every thread but the crashed one, each folded under a line naming it and its top frame.
    static func otherThreads(of report: CrashReport, into page: inout HTMLBuilder) {
        let others = report.threads.filter { !$0.crashed }
        guard !others.isEmpty else { return }
        page.markup("<section id=\"threads\">\n")
        page.element("h2", (report.crashedThread == nil ? "Threads" : "Other threads") + " (\(others.count))")
        page.newline()
        for thread in others {
            page.open("details", ["class": "thread", "id": "thread-\(thread.tid)"])
            page.open("summary")
            page.text("Thread " + ShowRenderer.threadTitle(thread))
            if let top = thread.frames.first {
                page.markup(" <span class=\"mono\">")
                page.text(FrameText.brief(top, in: report))
                page.markup("</span>")
            }
            page.close("summary")
            page.newline()
            frames(thread.frames, in: report, into: &page)
            stopReason(thread.unwindStopReason, into: &page)
            registers(thread.registers, open: false, into: &page)
            page.markup("</details>\n")
        }
        page.markup("</section>\n")
    }

    /// A stack as a table: index, address, function (raw symbol as its tooltip) with notes, source, image.
    static func frames(_ frames: [FrameRecord], in report: CrashReport, into page: inout HTMLBuilder, handlerFrames: Int = 0) {
        guard !frames.isEmpty else {
            page.element("p", ["class": "muted"], "No frames.")
            page.newline()
            return
        }
        page.markup("<table class=\"frames\">\n<thead><tr><th>#</th><th>address</th><th>function</th>")
        page.markup("<th>source</th><th>image</th></tr></thead>\n<tbody>\n")
        for (position, frame) in frames.enumerated() {
            let image = FrameText.image(of: frame, in: report)
            page.open("tr", ["class": image?.inApp == true ? "app" : nil])
            page.element("td", ["class": "index"], "#\(frame.index)")
            page.element("td", ["class": "address"], frame.address.description)
            let function = frame.function.flatMap { $0.isEmpty ? nil : $0 }
            let symbol = frame.symbol.flatMap { $0 == function ? nil : $0 }
            page.open("td", ["class": "function", "title": symbol])
            page.text(function ?? "?")
            if let offset = frame.symbolOffset, function != nil, offset.value != 0 { page.text(" + \(offset)") }
            for note in FrameText.notes(of: frame) { page.element("span", ["class": "note"], note) }
            if position < handlerFrames { page.element("span", ["class": "note handler"], "[signal handler]") }
            page.close("td")
            page.element("td", ["class": "source"], sourceText(of: frame) ?? "")
            page.element("td", ["class": "image"], image == nil ? "?" : FrameText.imageOffset(of: frame, in: report))
            page.close("tr")
            page.newline()
        }
        page.markup("</tbody>\n</table>\n")
    }

    /// `/src/shop/parse.c:12:9`: the whole path, line and column when known; nil without a file.
    static func sourceText(of frame: FrameRecord) -> String? {
        guard let file = frame.file, !file.isEmpty else { return nil }
        guard let line = frame.line else { return file }
        return frame.column.map { "\(file):\(line):\($0)" } ?? "\(file):\(line)"
    }

    /// `Unwinding stopped: …`, when the reason is known.
    static func stopReason(_ reason: String?, into page: inout HTMLBuilder) {
        guard let reason else { return }
        page.element("p", ["class": "stop"], "Unwinding stopped: " + reason)
        page.newline()
    }

    /// The registers, name and value, in a grid under a fold (open for the crashed thread).
    static func registers(_ registers: [RegisterValue], open: Bool, into page: inout HTMLBuilder) {
        guard !registers.isEmpty else { return }
        page.open("details", ["class": "registers", "open": open ? "" : nil])
        page.element("summary", "Registers (\(registers.count))")
        page.markup("\n<dl class=\"registers\">\n")
        for register in registers {
            page.markup("<div>")
            page.element("dt", register.name)
            page.element("dd", register.value.description)
            page.markup("</div>\n")
        }
        page.markup("</dl>\n</details>\n")
    }
}
