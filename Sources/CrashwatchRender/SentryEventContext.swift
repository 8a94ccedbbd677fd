// SentryEventContext.swift — the parts of a Sentry event that describe where the crash happened rather than
// the crash: release, tags, and the os, device, app and process contexts. Every string a server indexes (a tag,
// the release, the environment) is kept within Sentry's rules: one line, at most 200 characters, and a release
// or environment without `/`.
import CrashwatchModel

extension SentryEvent {
    /// `name@version`: the app's name and version when the report has a version (options, environment), else
    /// the main executable's package and its version; nil when neither is known.
    static func release(of report: CrashReport) -> String? {
        var release: String?
        if let version = report.process.app?.version, !version.isEmpty {
            release = OTLPLogs.serviceName(of: report) + "@" + version
        } else if let package = report.mainExecutable?.package, let version = package.version, !version.isEmpty {
            release = (package.name ?? OTLPLogs.serviceName(of: report)) + "@" + version
        }
        return release.map { cleaned($0, maxCharacters: 200, slash: "-") }.flatMap { $0 == "." || $0 == ".." ? nil : $0 }
    }

    /// An environment name as Sentry takes it: one line, no `/`, at most 64 characters; nil when empty.
    static func environmentName(_ text: String) -> String? {
        let name = cleaned(text, maxCharacters: 64, slash: "-")
        return name.isEmpty ? nil : name
    }

    /// A tag value: one line, at most 200 characters.
    static func tagValue(_ text: String) -> String { cleaned(text, maxCharacters: 200, slash: nil) }

    /// `text` with control characters and line breaks as spaces (and `/` as `slash` when given), spaces at the
    /// ends removed, cut to `maxCharacters`.
    static func cleaned(_ text: String, maxCharacters: Int, slash: Character?) -> String {
        var result = ""
        for character in text.prefix(maxCharacters * 2) {
            if character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }) {
                result.append(" ")
            } else if character == "/", let slash {
                result.append(slash)
            } else {
                result.append(character)
            }
        }
        while result.first == " " { result.removeFirst() }
        while result.last == " " { result.removeLast() }
        return String(result.prefix(maxCharacters))
    }

    /// `kind`, `signal`, `signal_code`, `executable` (the file name), `systemd_unit` when the process ran in one,
    /// `app` (its name), `fingerprint` (its value) when the report has one.
    static func tags(of report: CrashReport, into json: inout JSONWriter) {
        json.member("kind", tagValue(report.kind.rawValue))
        if !report.kind.isLiveProcess {
            json.member("signal", tagValue(report.signal.name))
            json.member("signal_code", tagValue(report.signal.codeName))
        }
        json.member("executable", tagValue(TextFormatting.basename(report.process.executable)))
        if let unit = report.process.systemdUnit, !unit.isEmpty { json.member("systemd_unit", tagValue(unit)) }
        json.member("app", tagValue(OTLPLogs.serviceName(of: report)))
        if let fingerprint = report.fingerprint { json.member("fingerprint", tagValue(fingerprint.value)) }
    }

    /// `os` (the kernel and the distribution), `device` (the host's architecture and boot id), `app` (the
    /// app's name, version and start time), `process` (pid, parent, executable, command line, ids, unit).
    static func contexts(of report: CrashReport, into json: inout JSONWriter) {
        let host = report.host
        json.object("os") { json in
            json.member("type", "os")
            json.member("name", "Linux")
            json.member("version", host.kernelRelease)
            json.member("kernel_version", host.kernelRelease)
            json.member("build", host.kernelVersion)
            json.member("distribution_name", host.osName)
            if let version = host.osVersion { json.member("distribution_version", version) }
        }
        json.object("device") { json in
            json.member("type", "device")
            json.member("arch", sentryArch(host.architecture))
        }
        json.object("app") { json in
            json.member("type", "app")
            json.member("app_name", OTLPLogs.serviceName(of: report))
            if let version = OTLPLogs.serviceVersion(of: report) { json.member("app_version", version) }
            if let start = report.process.startTime { json.member("app_start_time", start) }
        }
        let process = report.process
        json.object("process") { json in
            json.member("type", "default")
            json.member("pid", process.pid)
            json.member("ppid", process.ppid)
            json.member("executable", process.executable)
            json.member("command_line", strings: process.commandLine)
            json.member("uid", process.uid)
            json.member("gid", process.gid)
            if let unit = process.systemdUnit { json.member("systemd_unit", unit) }
            if let invocation = process.systemdInvocationID { json.member("invocation_id", invocation) }
            if let boot = host.bootID { json.member("boot_id", boot) }
        }
    }
}
