// ShowRenderer.swift — `crashwatch show`: one report as a page for a person, laid out like `coredumpctl info`.
// A header block of right-aligned labels (what died, when, which signal, where), then the crashed thread's
// frames, stop reason and registers, the original fault's snapshot when a handler ran first, the other
// threads (their stop reason only when unusual), and the images. In-app frames and images carry a `*` marker (and are bold with colour), so the
// page reads the same without colour. Every string from the report is sanitized before it is shown.
import CrashwatchModel

/// Renders one report as a human-readable page.
public enum ShowRenderer {
    /// The width labels are right-aligned to: the longest label, `Original fault`.
    static let labelWidth = 14

    /// The page text, each line ending in a newline; `style.width` is not used (pages are not shortened).
    public static func render(_ report: CrashReport, style: Style) -> String {
        var page = Page(style: style)
        header(of: report, into: &page)

        let crashed = report.crashedThread
        if let crashed {
            page.blank()
            page.heading("Crashed thread " + threadTitle(crashed))
            // Above the frame a signal interrupted, a handler was running: say so.
            let handlerFrames = report.signal.originalFault == nil ? 0 : FrameText.handlerFrameCount(crashed.frames)
            frames(crashed.frames, in: report, into: &page, handlerFrames: handlerFrames)
            stopReason(crashed.unwindStopReason, into: &page)
            registers(crashed.registers, into: &page)
        }

        if let fault = report.signal.originalFault, !(fault.frames.isEmpty && fault.registers.isEmpty) {
            page.blank()
            page.heading("Original fault on thread \(fault.tid) at \(TextFormatting.utcStamp(fault.time))")
            frames(fault.frames, in: report, into: &page)
            registers(fault.registers, into: &page)
        }

        let others = report.threads.filter { !$0.crashed }
        if !others.isEmpty {
            page.blank()
            page.heading((crashed == nil ? "Threads" : "Other threads") + " (\(others.count))")
            for (offset, thread) in others.enumerated() {
                if offset > 0 { page.blank() }
                page.line("Thread " + threadTitle(thread))
                frames(thread.frames, in: report, into: &page)
                // A normal end is said once, for the crashed thread; other threads mention only unusual stops.
                if thread.unwindStopReason != "end of stack" { stopReason(thread.unwindStopReason, into: &page) }
            }
        }

        if !report.images.isEmpty {
            page.blank()
            page.heading("Images (* = in-app)")
            page.lines.append(contentsOf: imageTable(report.images, style: style))
        }
        return page.lines.map { $0 + "\n" }.joined()
    }

    // MARK: Header block

    /// Appends the labelled header lines: report, time, process, command, app, signal, host, unit, soft errors.
    static func header(of report: CrashReport, into page: inout Page) {
        let clean = TextFormatting.sanitized
        let process = report.process
        let signal = report.signal

        page.field("Report", clean(report.id))
        if report.kind != .crash { page.field("Kind", clean(report.kind.rawValue)) }
        var time = TextFormatting.utcStamp(report.captureTime) + " (capture took "
        time += TextFormatting.milliseconds(report.captureDurationMs)
        time += report.diagnostics.deadlineExceeded ? ", deadline exceeded)" : ")"
        page.field("Time", time)
        page.field("Process", "\(process.pid) (\(clean(process.comm))), parent \(process.ppid)")
        let deleted = report.mainExecutable?.deleted == true ? " (deleted)" : ""
        let resolved = process.resolvedExecutable == process.executable ? "" : " -> " + clean(process.resolvedExecutable)
        page.field("Executable", clean(process.executable) + resolved + deleted)
        page.field("Command", commandLine(of: process))
        if let cwd = process.cwd { page.field("Directory", clean(cwd)) }
        if let app = process.app.flatMap(appText) { page.field("App", app) }

        let name = page.style.paint(clean(signal.name), .alarm)
        page.field("Signal", "\(signal.number) (\(name)), code \(signal.code) (\(clean(signal.codeName))), \(clean(signal.description))")
        if let address = signal.faultAddress { page.field("Fault addr.", address.description) }
        if let fault = signal.originalFault {
            var text = "\(clean(fault.name)) (\(clean(fault.codeName)))"
            if let address = fault.faultAddress { text += " at \(address)" }
            text += " on thread \(fault.tid) at \(TextFormatting.utcStamp(fault.time))"
            page.field("Original fault", text)
        }

        let host = report.host
        let os = [host.osName, host.osVersion].compactMap { $0 }.joined(separator: " ")
        page.field("Host", clean("\(host.hostname), \(os), kernel \(host.kernelRelease), \(host.architecture)"))
        if let unit = process.systemdUnit { page.field("Unit", clean(unit)) }
        if let states = ThreadStates.summary(of: report) {
            page.field("Threads", states)
            if let held = report.holdDurationMs { page.field("Held", "stopped for " + TextFormatting.milliseconds(held)) }
        }

        let environment = process.environment.sorted { $0.key < $1.key }.map { clean("\($0.key)=\($0.value)") }
        if let first = environment.first {
            page.field("Environment", first)
            environment.dropFirst().forEach { page.continuation($0) }
        }

        let softErrors = report.softErrors
        let captureErrors = report.diagnostics.captureErrors
        if !softErrors.isEmpty || captureErrors > 0 {
            let extra = captureErrors > softErrors.count ? " (\(captureErrors) capture errors in all)" : ""
            page.field("Soft errors", "\(softErrors.count)\(extra)")
            for error in softErrors { page.continuation(softErrorText(error)) }
        }
    }

    /// The command line as a shell would take it, `<redacted>` placeholders kept bare; `<redacted>` or `<unknown>` when empty.
    static func commandLine(of process: ProcessRecord) -> String {
        if process.commandLine.isEmpty { return process.redacted ? "<redacted>" : "<unknown>" }
        if process.commandLineHex != nil && !process.redacted {
            // Bytes that are not UTF-8 are shown as the `\xHH` escapes a shell would take.
            return process.commandLineBytes.map(TextFormatting.shellQuoted(bytes:)).joined(separator: " ")
        }
        return process.commandLine.enumerated().map { index, argument in
            process.redacted && index > 0 && argument == "<redacted>" ? argument : TextFormatting.shellQuoted(argument)
        }.joined(separator: " ")
    }

    /// `name version (release)` with the known parts, sanitized; nil when the record is empty.
    static func appText(_ app: AppRecord) -> String? {
        var text = [app.name, app.version].compactMap { $0 }.joined(separator: " ")
        if let release = app.release { text += text.isEmpty ? release : " (\(release))" }
        return text.isEmpty ? nil : TextFormatting.sanitized(text)
    }

    /// `unwind (thread 4243): message`, naming the thread and image a soft error concerns.
    static func softErrorText(_ error: SoftError) -> String {
        var about: [String] = []
        if let tid = error.tid { about.append("thread \(tid)") }
        if let image = error.image { about.append("image \(image)") }
        let context = about.isEmpty ? "" : " (" + about.joined(separator: ", ") + ")"
        return TextFormatting.sanitized("\(error.stage)\(context): \(error.message)")
    }

    // MARK: Threads

    /// `4242 "main"`, or just the tid when the thread has no name; with what it was doing when it was stopped
    /// from outside (a snapshot, a hang): `4243 "reader", in read (system call 0)`.
    static func threadTitle(_ thread: ThreadRecord) -> String {
        let title = thread.name.map { "\(thread.tid) \"\(TextFormatting.sanitized($0))\"" } ?? String(thread.tid)
        return ThreadStates.text(of: thread).map { title + ", " + $0 } ?? title
    }

    /// Appends one line per frame: `* #0 0x… function (file:line) in image [notes]`, `*` and bold for in-app.
    static func frames(_ frames: [FrameRecord], in report: CrashReport, into page: inout Page, handlerFrames: Int = 0) {
        if frames.isEmpty {
            page.line("    (no frames)")
            return
        }
        let indexWidth = frames.map { "#\($0.index)".count }.max() ?? 0
        let addressWidth = frames.map { $0.address.description.count }.max() ?? 0
        for (position, frame) in frames.enumerated() {
            let image = FrameText.image(of: frame, in: report)
            let inApp = image?.inApp ?? false
            var text = (inApp ? "* " : "  ") + TextFormatting.padded("#\(frame.index)", to: indexWidth) + " "
            text += TextFormatting.padded(frame.address.description, to: addressWidth) + " "
            var description = frame.function.map { $0.isEmpty ? "?" : $0 } ?? "?"
            if let source = FrameText.source(of: frame) { description += " " + source }
            if frame.function?.isEmpty ?? true {
                description += " in " + (image == nil ? "?" : FrameText.imageOffset(of: frame, in: report))
            } else {
                description += " in " + (image?.name ?? "?")
            }
            description += FrameText.notes(of: frame).map { " " + $0 }.joined()
            if position < handlerFrames { description += " [signal handler]" }
            text += TextFormatting.sanitized(description)
            page.line("  " + page.style.paint(text, inApp ? .bold : nil))
        }
    }

    /// Appends `Unwinding stopped: <reason>` when the reason is known.
    static func stopReason(_ reason: String?, into page: inout Page) {
        guard let reason else { return }
        page.line("    Unwinding stopped: " + TextFormatting.sanitized(reason))
    }

    /// Appends the registers three to a line, names right-aligned and values left-aligned in shared columns.
    static func registers(_ registers: [RegisterValue], into page: inout Page) {
        guard !registers.isEmpty else { return }
        let names = registers.map { TextFormatting.sanitized($0.name) }
        let nameWidth = names.map(TextFormatting.width).max() ?? 0
        let valueWidth = registers.map { $0.value.description.count }.max() ?? 0
        page.line("    Registers:")
        for start in stride(from: 0, to: registers.count, by: 3) {
            let end = min(start + 3, registers.count)
            let cells = (start..<end).map { index in
                let value = registers[index].value.description
                let cell = TextFormatting.padded(names[index], to: nameWidth, rightAligned: true) + " " + value
                return index == end - 1 ? cell : cell + String(repeating: " ", count: valueWidth - value.count)
            }
            page.line("      " + cells.joined(separator: "  "))
        }
    }

    // MARK: Images

    /// The image lines: in-app marker and name, load address, build-id (`-` when none), path with deleted and package notes.
    static func imageTable(_ images: [ImageRecord], style: Style) -> [String] {
        let rows = images.map { image in
            var path = TextFormatting.sanitized(image.path)
            if image.deleted { path += " (deleted)" }
            if let package = image.package {
                let parts = [package.type, package.name, package.version, package.architecture].compactMap { $0 }
                if !parts.isEmpty { path += " [package " + TextFormatting.sanitized(parts.joined(separator: " ")) + "]" }
            }
            return [
                Cell((image.inApp ? "* " : "  ") + TextFormatting.sanitized(image.name), image.inApp ? .bold : nil),
                Cell(image.loadAddress.description),
                Cell(image.buildID.map(TextFormatting.sanitized) ?? "-"),
                Cell(path),
            ]
        }
        let columns = ["name", "load address", "build-id", "path"].map { Column(title: $0) }
        let table = Table(columns: columns, rows: rows, showsHeader: false, indent: "  ")
        return table.render(style: style).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

/// The lines of a page being built, with the helpers that keep its labels and indents consistent.
struct Page {
    /// Whether and how to colour.
    let style: Style
    /// The lines so far, without newlines.
    var lines: [String] = []

    /// Appends a line as it is.
    mutating func line(_ text: String) { lines.append(text) }

    /// Appends an empty line.
    mutating func blank() { lines.append("") }

    /// Appends a section heading, bold when colour is on.
    mutating func heading(_ text: String) { lines.append(style.paint(text, .bold)) }

    /// Appends `      Label: value`, the label right-aligned to `ShowRenderer.labelWidth`.
    mutating func field(_ label: String, _ value: String) {
        lines.append(TextFormatting.padded(label, to: ShowRenderer.labelWidth, rightAligned: true) + ": " + value)
    }

    /// Appends a further value of the previous field, aligned under its value.
    mutating func continuation(_ value: String) {
        lines.append(String(repeating: " ", count: ShowRenderer.labelWidth + 2) + value)
    }
}
