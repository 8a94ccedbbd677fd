// TextExport.swift — `crashwatch export --format text`: the show page without colour, for files, tickets and mail.
import CrashwatchModel

/// Renders a report as plain text for export.
public enum TextExport {
    /// The show page with no escape codes and no width limit, each line ending in a newline.
    public static func render(_ report: CrashReport) -> String {
        ShowRenderer.render(report, style: .plain)
    }
}
