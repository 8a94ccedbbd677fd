// AppContext.swift — what the app said about its run (the report's `annotations` and `breadcrumbs`), as every
// renderer shows or ships it: the annotations sorted by key, the newest breadcrumbs oldest first with their time
// relative to the capture, and the show page's two sections made of them. The app declared these in its own
// memory, so they are hostile input like every other string of a report: the limits here bound how much of
// them a page or a shipped record carries (a report file may hold more than the capture ever reads), and each
// renderer escapes them as it escapes the rest (TextFormatting.sanitized, HTML.escaped, JSONWriter).
import CrashwatchModel

/// The annotations and breadcrumbs of a report, bounded and ordered for showing and shipping.
enum AppContext {
    /// Annotations shown or shipped at most, the first by key: the capture reads at most 256 from the app.
    static let maxAnnotations = 256
    /// Breadcrumbs a page (show, text and HTML export) lists at most, the newest, unless `show --breadcrumbs` says.
    static let shownBreadcrumbs = 20
    /// Breadcrumbs a shipped event carries at most: the newest (the capture reads at most 256 from the ring).
    static let maxShippedBreadcrumbs = 256

    /// The report's annotations sorted by key, at most `maxAnnotations`, and how many more the report holds.
    static func annotations(of report: CrashReport) -> (entries: [(key: String, value: String)], more: Int) {
        guard let annotations = report.annotations else { return ([], 0) }
        let sorted = annotations.sorted { $0.key < $1.key }
        let entries = sorted.prefix(maxAnnotations).map { (key: $0.key, value: $0.value) }
        return (entries, sorted.count - entries.count)
    }

    /// The newest `limit` breadcrumbs of the report, oldest first, and how many earlier ones are left out.
    static func breadcrumbs(of report: CrashReport, limit: Int) -> (entries: ArraySlice<BreadcrumbRecord>, earlier: Int) {
        let all = report.breadcrumbs ?? []
        let entries = all.suffix(max(limit, 0))
        return (entries, all.count - entries.count)
    }

    /// When a breadcrumb was recorded relative to the capture, to the millisecond: `-1.204s` (before it),
    /// `+0.010s` (after it: the app's clock and the capture's disagree); `?` when either time is unknown.
    static func relativeTime(_ time: String?, to captureTime: String) -> String {
        guard let time, let at = RFC3339.parse(time), let captured = RFC3339.parse(captureTime) else { return "?" }
        let (difference, overflow) = at.subtractingReportingOverflow(captured)
        guard !overflow else { return "?" }
        // Rounded to the millisecond, half away from zero; the magnitude as seconds and three decimals.
        let milliseconds = (difference.magnitude + 500_000) / 1_000_000
        let fraction = String(milliseconds % 1000)
        let text = "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "s"
        return (difference > 0 && milliseconds > 0 ? "+" : "-") + text
    }
}

extension ShowRenderer {
    /// The widest key the annotation lines align their `=` to; longer keys push only their own value.
    static let annotationKeyWidth = 32

    /// Appends the `Annotations (N)` section (`key = value`, sorted, the `=` aligned) and the
    /// `Breadcrumbs (N)` section (the newest `limit`, oldest first: time relative to the capture, level,
    /// message; `(N earlier)` first when some are left out); nothing for a report without them, and no
    /// Breadcrumbs section for a `limit` of 0.
    static func appContext(of report: CrashReport, breadcrumbs limit: Int, into page: inout Page) {
        let annotations = AppContext.annotations(of: report)
        if !annotations.entries.isEmpty {
            page.blank()
            page.heading("Annotations (\(annotations.entries.count + annotations.more))")
            let keys = annotations.entries.map { TextFormatting.sanitized($0.key) }
            let width = min(keys.map(TextFormatting.width).max() ?? 0, annotationKeyWidth)
            for (key, entry) in zip(keys, annotations.entries) {
                page.line("  " + TextFormatting.padded(key, to: width) + " = " + TextFormatting.sanitized(entry.value))
            }
            if annotations.more > 0 { page.line("  (\(annotations.more) more)") }
        }

        let breadcrumbs = AppContext.breadcrumbs(of: report, limit: limit)
        if !breadcrumbs.entries.isEmpty {
            page.blank()
            page.heading("Breadcrumbs (\(breadcrumbs.entries.count + breadcrumbs.earlier))")
            if breadcrumbs.earlier > 0 { page.line("  (\(breadcrumbs.earlier) earlier)") }
            let times = breadcrumbs.entries.map { AppContext.relativeTime($0.time, to: report.captureTime) }
            let levels = breadcrumbs.entries.map { TextFormatting.sanitized($0.level) }
            let timeWidth = times.map(TextFormatting.width).max() ?? 0
            let levelWidth = levels.map(TextFormatting.width).max() ?? 0
            for (index, breadcrumb) in zip(times.indices, breadcrumbs.entries) {
                let time = TextFormatting.padded(times[index], to: timeWidth, rightAligned: true)
                let level = TextFormatting.padded(levels[index], to: levelWidth)
                page.line("  " + time + "  " + level + "  " + TextFormatting.sanitized(breadcrumb.message))
            }
        }
    }
}
