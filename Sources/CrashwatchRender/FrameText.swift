// FrameText.swift — how one stack frame reads as text, shared by list lines (`crash_here (main.c:21)`) and show
// pages (`#0 0x55d0… crash_here (main.c:21) in app`). The text is raw report text: displays sanitize it
// (`TextFormatting.sanitized`), JSON escapes it.
import CrashwatchModel

/// Text forms of a stack frame.
enum FrameText {
    /// The image a frame's `imageIndex` names, or nil when it names none (or an index out of range).
    static func image(of frame: FrameRecord, in report: CrashReport) -> ImageRecord? {
        guard let index = frame.imageIndex, report.images.indices.contains(index) else { return nil }
        return report.images[index]
    }

    /// `(main.c:21)`, `(main.c)`, or nil without a file: the source position, file by basename.
    static func source(of frame: FrameRecord) -> String? {
        guard let file = frame.file, !file.isEmpty else { return nil }
        let name = TextFormatting.basename(file)
        return frame.line.map { "(\(name):\($0))" } ?? "(\(name))"
    }

    /// `image+0x1189` for a frame without a function, or the bare address when no image holds it.
    static func imageOffset(of frame: FrameRecord, in report: CrashReport) -> String {
        guard let image = image(of: frame, in: report) else { return frame.address.description }
        let offset = frame.imageOffset ?? Address(frame.address.value &- image.loadAddress.value)
        return image.name + "+" + offset.description
    }

    /// The one-line form for summaries: `function (file:line)`, `function`, or `image+0xoffset`.
    static func brief(_ frame: FrameRecord, in report: CrashReport) -> String {
        guard let function = frame.function, !function.isEmpty else { return imageOffset(of: frame, in: report) }
        return source(of: frame).map { function + " " + $0 } ?? function
    }

    /// How many frames at the top of a crashed thread's stack ran in a signal handler: those above the frame the
    /// signal interrupted (restored from the signal frame's context, at another address than the crashed frame and
    /// its inline levels). Meaningful when a handler ran, i.e. the report has an original fault.
    static func handlerFrameCount(_ frames: [FrameRecord]) -> Int {
        let first = frames.first?.address
        return frames.firstIndex { $0.how == .context && $0.address != first } ?? 0
    }

    /// Bracketed notes after a show line: `[inlined]`, and how a frame was found when that was less than reliable.
    static func notes(of frame: FrameRecord) -> [String] {
        var notes: [String] = []
        if frame.inlined { notes.append("[inlined]") }
        switch frame.how {
        case .context, .cfi, .inline: break
        case .framePointer: notes.append("[via frame pointer]")
        case .scan: notes.append("[via stack scan]")
        case .returnAddressAtSP: notes.append("[via return address at sp]")
        default: notes.append("[via \(frame.how.rawValue)]")
        }
        return notes
    }
}
