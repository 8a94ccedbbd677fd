// DoctorCommand.swift — `crashwatch doctor`: checks, before a crash does, what a crash needs (DoctorChecks):
// one line each, ✓ or ✗ with the fix, and an exit status for scripts. `--user` checks again as that user;
// `--unit` as a systemd unit runs crashwatch (its User=, Environment= and the --spool/--config of its
// ExecStart=).
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

enum DoctorCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch doctor [OPTIONS]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("user", value: "USER", help: "check as USER (root only): the checks run again under USER's ids, groups and login environment"),
            OptionSpec("unit", value: "NAME", help: "check as the systemd unit NAME runs crashwatch: its User=, its Environment= and the --spool and --config of its ExecStart= (root only)"),
            OptionSpec("json", help: "print the checks as a JSON array"),
        ],
        about: """
            Checks what a crash report needs, before a crash does, one line each: the settings file (every
            line valid), the spool (created, trusted, writable, room for a report), ptrace (crashwatch runs
            /bin/true under itself here: a seccomp filter, Yama or missing capabilities show), journald,
            the kernel's core_pattern beside crashwatch, debug info (/usr/lib/debug, the configured
            debuginfod servers answer), and the shipper's destination ('ship --check'). ✓ works, ! works
            with a caveat, ✗ does not (the fix follows), - not configured.

            A service's sandbox (SystemCallFilter=, ReadWritePaths=, capabilities) applies only inside it:
            to check with it, run doctor in the unit (ExecStartPre=-/usr/bin/crashwatch doctor) or with the
            same properties (systemd-run -p ... crashwatch doctor).
            """,
        after: "Exit status: 0 every check passed (warnings allowed), 1 a check failed, 64 usage error, 71 the checks could not be run.")

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...0, arguments, lenient: true) { parsed, settings throws(CommandFailure) in
            var forwarded: [String] = []
            for option in ["config", "spool"] { if let value = parsed.value(option) { forwarded += ["--\(option)", value] } }
            if let unit = parsed.value("unit") {
                let found = try DoctorIdentity.unit(unit)
                return try DoctorIdentity.rerun(as: found.user, environment: found.environment,
                                                arguments: found.options + (parsed.has("json") ? ["--json"] : []))
            }
            if let user = parsed.value("user") {
                return try DoctorIdentity.rerun(as: user, environment: [], arguments: forwarded + (parsed.has("json") ? ["--json"] : []))
            }
            let executable = ProcFS.readLink("/proc/self/exe") ?? "/proc/self/exe"
            let checks = DoctorChecks(executable: executable, settings: settings, forwardedOptions: forwarded).all()
            StandardStream.out(parsed.has("json") ? json(checks) : text(checks, settings: settings))
            return checks.contains { $0.outcome == .failed } ? 1 : ExitCode.success
        }
    }

    static func text(_ checks: [DoctorCheck], settings: SpoolSettings) -> String {
        let width = checks.map(\.name.count).max() ?? 0
        var lines = ["crashwatch \(CLI.version) doctor, as uid \(effectiveUserID)"]
        for check in checks {
            lines.append("\(check.outcome.mark) \(check.name.padding(toLength: width)) \(check.detail)")
            if let fix = check.fix, check.outcome == .failed || check.outcome == .warning {
                lines.append("  \(String(repeating: " ", count: width)) fix: \(fix)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ checks: [DoctorCheck]) -> String {
        var json = JSONWriter(spaced: true)
        json.array { json in
            for check in checks {
                json.object { json in
                    json.member("name", check.name)
                    json.member("outcome", check.outcome.rawValue)
                    json.member("detail", check.detail)
                    json.member("fix", check.fix)
                }
            }
        }
        return String(decoding: json.bytes, as: UTF8.self) + "\n"
    }
}

extension String {
    /// The text followed by spaces up to `width` characters.
    func padding(toLength width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
