// HTMLFacts.swift — the HTML export's sections of facts: the app's annotations and last breadcrumbs, the
// fingerprint, the images (in-app highlighted, with build-ids and packages), the soft errors, and the process,
// host and capture facts in description lists. Every value is escaped by HTMLBuilder.
import CrashwatchModel

/// The annotations, breadcrumbs, fingerprint, images, soft errors and facts sections of the HTML export.
enum HTMLFacts {
    /// The annotations (key and value, sorted by key) and the newest breadcrumbs (oldest first: time relative to the
    /// capture with the time itself as its tooltip, level, message), as the show page has them; nothing for a report
    /// without them.
    static func appContext(_ report: CrashReport, into page: inout HTMLBuilder) {
        let annotations = AppContext.annotations(of: report)
        if !annotations.entries.isEmpty {
            page.markup("<section id=\"annotations\">\n")
            page.element("h2", "Annotations (\(annotations.entries.count + annotations.more))")
            page.markup("\n<dl class=\"facts\">\n")
            for entry in annotations.entries {
                page.element("dt", entry.key)
                page.element("dd", ["class": "mono"], entry.value)
                page.newline()
            }
            page.markup("</dl>\n")
            if annotations.more > 0 {
                page.element("p", ["class": "muted"], "\(annotations.more) more, not shown.")
                page.newline()
            }
            page.markup("</section>\n")
        }

        let breadcrumbs = AppContext.breadcrumbs(of: report, limit: AppContext.shownBreadcrumbs)
        guard !breadcrumbs.entries.isEmpty else { return }
        page.markup("<section id=\"breadcrumbs\">\n")
        page.element("h2", "Breadcrumbs (\(breadcrumbs.entries.count + breadcrumbs.earlier))")
        page.newline()
        if breadcrumbs.earlier > 0 {
            page.element("p", ["class": "muted"], "\(breadcrumbs.earlier) earlier, not shown.")
            page.newline()
        }
        page.markup("<table class=\"breadcrumbs\">\n<thead><tr><th>time</th><th>level</th><th>message</th></tr></thead>\n<tbody>\n")
        for breadcrumb in breadcrumbs.entries {
            page.open("tr")
            page.element("td", ["class": "time", "title": breadcrumb.time.map(TextFormatting.utcStamp)],
                         AppContext.relativeTime(breadcrumb.time, to: report.captureTime))
            page.element("td", ["class": "level"], breadcrumb.level)
            page.element("td", ["class": "message"], breadcrumb.message)
            page.close("tr")
            page.newline()
        }
        page.markup("</tbody>\n</table>\n</section>\n")
    }

    /// The fingerprint, when the report has one: its value and algorithm, and the kind, signal, program and frames
    /// hashed (README "Fingerprints").
    static func fingerprint(_ report: CrashReport, into page: inout HTMLBuilder) {
        guard let fingerprint = report.fingerprint else { return }
        page.markup("<section id=\"fingerprint\">\n<h2>Fingerprint</h2>\n<dl class=\"facts\">\n")
        page.fact("Fingerprint", fingerprint.value, class: "mono")
        page.fact("Algorithm", fingerprint.algorithm)
        page.fact("Hashed", fingerprint.kind + ", " + fingerprint.signal + ", program " + fingerprint.program)
        page.fact("Frames hashed", fingerprint.frames.isEmpty ? "none" : fingerprint.frames.joined(separator: ", "), class: "mono")
        page.markup("</dl>\n</section>\n")
    }

    /// The images table: name, load address, size, build-id, architecture, path (deleted, package).
    static func images(_ report: CrashReport, into page: inout HTMLBuilder) {
        guard !report.images.isEmpty else { return }
        page.markup("<section id=\"images\">\n")
        page.element("h2", "Images (\(report.images.count); in-app highlighted)")
        page.markup("\n<table class=\"images\">\n<thead><tr><th>name</th><th>load address</th><th>size</th>")
        page.markup("<th>build-id</th><th>arch</th><th>path</th></tr></thead>\n<tbody>\n")
        for image in report.images {
            page.open("tr", ["class": image.inApp ? "app" : nil])
            page.element("td", ["class": "name"], image.name + (image.isMainExecutable ? " (executable)" : ""))
            page.element("td", ["class": "address"], image.loadAddress.description)
            page.element("td", ["class": "size"], byteCount(image.size))
            page.element("td", ["class": "build-id"], image.buildID ?? "none")
            page.element("td", ["class": "arch"], image.architecture ?? "")
            var path = image.path + (image.deleted ? " (deleted)" : "")
            if let package = image.package {
                let parts = [package.type, package.name, package.version, package.architecture].compactMap { $0 }
                if !parts.isEmpty { path += " [package " + parts.joined(separator: " ") + "]" }
            }
            page.element("td", ["class": "path"], path)
            page.close("tr")
            page.newline()
        }
        page.markup("</tbody>\n</table>\n</section>\n")
    }

    /// `1.7 MiB`, `20.0 KiB`, `512 B`: an image's mapped size.
    static func byteCount(_ bytes: Int) -> String {
        guard bytes >= 1024 else { return "\(max(bytes, 0)) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// The soft errors, one line each as on the show page, and how many capture errors there were in all.
    static func softErrors(_ report: CrashReport, into page: inout HTMLBuilder) {
        let errors = report.softErrors
        let captureErrors = report.diagnostics.captureErrors
        guard !errors.isEmpty || captureErrors > 0 else { return }
        page.markup("<section id=\"soft-errors\">\n")
        page.element("h2", "Soft errors (\(errors.count))")
        page.newline()
        if captureErrors > errors.count {
            page.element("p", ["class": "muted"], "\(captureErrors) capture errors in all; \(errors.count) are listed.")
            page.newline()
        }
        page.markup("<ul class=\"errors\">\n")
        for error in errors {
            page.element("li", ShowRenderer.softErrorText(error))
            page.newline()
        }
        page.markup("</ul>\n</section>\n")
    }

    /// The process, host and capture facts, side by side on a wide page.
    static func facts(_ report: CrashReport, into page: inout HTMLBuilder) {
        page.markup("<div class=\"columns\">\n")
        process(report, into: &page)
        page.markup("<div>\n")
        host(report.host, into: &page)
        capture(report, into: &page)
        page.markup("</div>\n</div>\n")
    }

    /// What is known of the process: ids, names, directory, cgroup and unit, app, allowed environment.
    static func process(_ report: CrashReport, into page: inout HTMLBuilder) {
        let process = report.process
        page.markup("<section id=\"process\">\n<h2>Process</h2>\n<dl class=\"facts\">\n")
        page.fact("PID", "\(process.pid) (parent \(process.ppid))")
        page.fact("Name", process.comm)
        page.fact("Executable", process.executable + (report.mainExecutable?.deleted == true ? " (deleted)" : ""))
        page.fact("Command", ShowRenderer.commandLine(of: process))
        if let trimmed = process.commandLineTrimmed, trimmed > 0 {
            page.fact("Trimmed", "\(trimmed) empty arguments removed from the end")
        }
        page.fact("Directory", process.cwd)
        page.fact("User", "uid \(process.uid), gid \(process.gid)")
        page.fact("Started", process.startTime.map(TextFormatting.utcStamp))
        page.fact("Cgroup", process.cgroup)
        page.fact("Unit", process.systemdUnit)
        page.fact("Invocation", process.systemdInvocationID)
        page.fact("App", process.app.flatMap(ShowRenderer.appText))
        let environment = process.environment.sorted { $0.key < $1.key }
        for (offset, variable) in environment.enumerated() {
            page.open("dt")
            if offset == 0 { page.markup("Environment") }
            page.close("dt")
            page.element("dd", ["class": "mono"], variable.key + "=" + variable.value)
            page.newline()
        }
        page.markup("</dl>\n</section>\n")
    }

    /// The machine: host name, OS, kernel, architecture, boot id.
    static func host(_ host: HostRecord, into page: inout HTMLBuilder) {
        page.markup("<section id=\"host\">\n<h2>Host</h2>\n<dl class=\"facts\">\n")
        page.fact("Host name", host.hostname)
        page.fact("OS", [host.osName, host.osVersion].compactMap { $0 }.joined(separator: " "))
        page.fact("Kernel", host.kernelRelease + " " + host.kernelVersion)
        page.fact("Architecture", host.architecture)
        page.fact("Boot id", host.bootID)
        page.markup("</dl>\n</section>\n")
    }

    /// How the report was made: times, crashwatch version, source, processing, ptrace and seccomp, hang or exit.
    static func capture(_ report: CrashReport, into page: inout HTMLBuilder) {
        let diagnostics = report.diagnostics
        page.markup("<section id=\"capture\">\n<h2>Capture</h2>\n<dl class=\"facts\">\n")
        page.fact("Report id", report.id)
        page.fact("Kind", report.kind.rawValue)
        page.fact("Captured", TextFormatting.utcStamp(report.captureTime))
        var took = TextFormatting.milliseconds(report.captureDurationMs)
        if let hold = report.holdDurationMs { took += ", process held " + TextFormatting.milliseconds(hold) }
        if diagnostics.deadlineExceeded { took += ", deadline exceeded" }
        page.fact("Capture took", took)
        page.fact("Processing", diagnostics.processing?.rawValue)
        page.fact("Source", report.source)
        page.fact("Core file", report.coreFile)
        page.fact("crashwatch", report.crashwatchVersion)
        page.fact("Run id", report.runID)
        page.fact("ptrace scope", diagnostics.ptraceScope.map(String.init))
        page.fact("Seccomp mode", diagnostics.seccompMode.map(String.init))
        if let hang = report.hang {
            page.fact("Hang", "no \(hang.source) ping since \(TextFormatting.utcStamp(hang.startTime)), "
                + TextFormatting.milliseconds(hang.durationMs) + (hang.unfinished ? " and going on" : ""))
        }
        page.fact("Hang report", report.hangReportID)
        if let exit = report.exit {
            page.fact("Exit", "\(exit.reason) (\(exit.source))" + (exit.evidence.map { ": " + $0 } ?? ""))
        }
        page.markup("</dl>\n</section>\n")
    }
}
