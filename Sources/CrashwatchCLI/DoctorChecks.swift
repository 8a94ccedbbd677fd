// DoctorChecks.swift — what `crashwatch doctor` checks, each a pure verdict on what it found: the settings
// file, the spool, whether ptrace works here (crashwatch itself is asked: `run -- /bin/true`), journald,
// the kernel's core_pattern beside crashwatch, debug info, and the shipper's destination (`ship --check`).
// Asking crashwatch itself means the answer is the one a service would get in this same place (its seccomp
// filter, capabilities, Yama, mount namespace).
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

/// One check's verdict: a name, how it went, what was found, and the fix when something is wrong.
struct DoctorCheck: Equatable {
    enum Outcome: String {
        /// Works.
        case ok
        /// Works, with a caveat the detail names.
        case warning
        /// Does not work: crash reports would be lost or incomplete.
        case failed
        /// Not set up, and not needed (a shipper without a destination).
        case skipped

        /// The mark `doctor` prints before the check.
        var mark: String {
            switch self {
            case .ok: "✓"
            case .warning: "!"
            case .failed: "✗"
            case .skipped: "-"
            }
        }
    }

    let name: String
    let outcome: Outcome
    let detail: String
    var fix: String? = nil
}

/// The checks, in the order `doctor` prints them.
struct DoctorChecks {
    /// crashwatch's own executable, asked what it would do.
    let executable: String
    let settings: SpoolSettings
    /// The options the checked crashwatch is run with (`--config FILE`, `--spool DIR`), passed on to it.
    let forwardedOptions: [String]

    func all() -> [DoctorCheck] {
        [settingsCheck(), spoolCheck(), supervisionCheck(), journalCheck(), corePatternCheck(), debugInfoCheck(), shipperCheck()]
    }

    func settingsCheck() -> DoctorCheck {
        let path = settings.config.path
        guard settings.problems.isEmpty else {
            return DoctorCheck(name: "settings", outcome: .failed, detail: settings.problems.joined(separator: "; "),
                               fix: "correct the lines named ('crashwatch run' leaves them out and uses the defaults)")
        }
        if path.isEmpty { return DoctorCheck(name: "settings", outcome: .ok, detail: "no settings file: the defaults") }
        return DoctorCheck(name: "settings", outcome: .ok, detail: "\(path): \(settings.config.values.count) settings, all valid")
    }

    func spoolCheck() -> DoctorCheck {
        do throws(SpoolError) {
            _ = try Spool.openForWriting(settings.spool)
            let status = try? FileSystem.status(settings.spool)
            let mode = status.map { " (owner uid \($0.ownerID), group \($0.groupID), mode \(String($0.permissions, radix: 8)))" } ?? ""
            return DoctorCheck(name: "spool", outcome: .ok, detail: "\(settings.spool) takes reports\(mode)")
        } catch {
            return DoctorCheck(name: "spool", outcome: .failed, detail: "\(error)", fix: spoolFix(error))
        }
    }

    private func spoolFix(_ error: SpoolError) -> String {
        switch error {
        case .noSpace: "free space on its file system, or choose another spool (--spool, spool =)"
        case .unsafePermissions: "chmod go-w \(settings.spool), or chmod +t for a shared one"
        case .untrustedOwner, .untrustedLink, .unsafeLinkDirectory: "give it to root or this user (chown), or choose another spool"
        default: "create it writable for this user (systemd-tmpfiles, systemd/crashwatch.tmpfiles), or under systemd add ReadWritePaths=\(settings.spool)"
        }
    }

    /// Whether crashwatch can supervise here: it runs `/bin/true` under itself and reads what it says.
    func supervisionCheck() -> DoctorCheck {
        let result: ChildResult
        do {
            result = try ChildProcess.run([executable, "run"] + forwardedOptions + ["--", "/bin/true"], timeoutMilliseconds: 10_000)
        } catch {
            return DoctorCheck(name: "ptrace", outcome: .failed, detail: "cannot run \(executable): \(error)")
        }
        let lines = String(decoding: result.errorOutput, as: UTF8.self).split(separator: "\n").map(String.init)
        if let refused = lines.first(where: { $0.contains("cannot supervise: ") }) {
            let reason = refused.split(separator: "cannot supervise: ", maxSplits: 1).last.map { String($0.split(separator: ";").first ?? $0) }
            return DoctorCheck(name: "ptrace", outcome: .failed, detail: "ptrace is refused: programs run unsupervised, their crashes unreported",
                               fix: reason)
        }
        if let warning = lines.first(where: { $0.contains("seccomp filter refuses") }) {
            return DoctorCheck(name: "ptrace", outcome: .warning, detail: warning.replacingPrefix("crashwatch: ", with: ""))
        }
        guard result.status == .exited(code: 0), !result.timedOut else {
            return DoctorCheck(name: "ptrace", outcome: .failed,
                               detail: "'crashwatch run -- /bin/true' ended \(result.timedOut ? "past 10 s" : "with \(result.status)"): \(lines.last ?? "")")
        }
        let scope = ProcFS.setting("/proc/sys/kernel/yama/ptrace_scope") ?? "absent"
        return DoctorCheck(name: "ptrace", outcome: .ok, detail: "crashwatch traces its child here (Yama ptrace_scope \(scope))")
    }

    func journalCheck() -> DoctorCheck {
        guard (try? FileSystem.status(Journal.socketPath))?.kind == .other else {
            return DoctorCheck(name: "journal", outcome: .warning,
                               detail: "no journald socket at \(Journal.socketPath): crash summaries go to stderr only")
        }
        return DoctorCheck(name: "journal", outcome: .ok, detail: "journald listens: one entry per crash report")
    }

    func corePatternCheck() -> DoctorCheck {
        let pattern = ProcFS.setting("/proc/sys/kernel/core_pattern") ?? ""
        if pattern.hasPrefix("|"), pattern.contains("crashwatch"), pattern.contains("core-handler") {
            return DoctorCheck(name: "core_pattern", outcome: .warning,
                               detail: "crashwatch core-handler reports every core system-wide: a program under 'crashwatch run' is reported twice",
                               fix: "use one or the other for a service (README 'Cores')")
        }
        if pattern.hasPrefix("|") {
            let helper = pattern.dropFirst().split(separator: " ").first.map(String.init) ?? pattern
            return DoctorCheck(name: "core_pattern", outcome: .ok, detail: "cores go to \(helper); 'crashwatch run' reports crashes itself, beside it")
        }
        return DoctorCheck(name: "core_pattern", outcome: .ok, detail: "cores are files named '\(pattern)'; 'crashwatch run' reports crashes itself")
    }

    func debugInfoCheck() -> DoctorCheck {
        let local = (try? FileSystem.status("/usr/lib/debug/.build-id"))?.kind == .directory
            ? "/usr/lib/debug/.build-id present" : "no /usr/lib/debug/.build-id (install -dbgsym packages for names of system libraries)"
        guard let urls = settings.config.values["debuginfod"]?.split(separator: " ").map(String.init), !urls.isEmpty else {
            return DoctorCheck(name: "debug info", outcome: .ok, detail: "\(local); debuginfod not configured")
        }
        let client: HTTPClient
        do throws(TransportError) { client = try HTTPClient(tls: TLSSettings(), userAgent: "crashwatch/\(CLI.version) doctor") } catch {
            return DoctorCheck(name: "debug info", outcome: .failed, detail: "\(local); no HTTP client: \(error)")
        }
        for url in urls {
            do throws(TransportError) {
                _ = try client.post(url, headers: [], body: [], timeoutMs: 3_000)
            } catch {
                return DoctorCheck(name: "debug info", outcome: .failed, detail: "\(local); debuginfod \(url) does not answer: \(error)",
                                   fix: "check the URL and the network, or remove it from 'debuginfod ='")
            }
        }
        return DoctorCheck(name: "debug info", outcome: .ok, detail: "\(local); debuginfod answers (\(urls.joined(separator: ", ")))")
    }

    /// The shipper's destination, as `ship --check` finds it.
    func shipperCheck() -> DoctorCheck {
        let result: ChildResult
        do {
            result = try ChildProcess.run([executable, "ship", "--check"] + forwardedOptions, timeoutMilliseconds: 30_000)
        } catch {
            return DoctorCheck(name: "shipping", outcome: .failed, detail: "cannot run \(executable): \(error)")
        }
        let text = String(decoding: result.errorOutput + result.output, as: UTF8.self)
        let lines = text.split(separator: "\n").map { String($0).replacingPrefix("crashwatch: ", with: "") }
        if result.status == .exited(code: ExitCode.usage), text.contains("no destination") || text.contains("no endpoint") {
            return DoctorCheck(name: "shipping", outcome: .skipped, detail: "no destination configured (reports stay in the spool)")
        }
        guard result.status == .exited(code: 0) else {
            return DoctorCheck(name: "shipping", outcome: .failed, detail: lines.first ?? "ship --check failed",
                               fix: lines.dropFirst().first.map { $0.trimmingLeadingSpaces().replacingPrefix("hint: ", with: "") })
        }
        return DoctorCheck(name: "shipping", outcome: .ok, detail: lines.first ?? "the destination answers")
    }
}

extension String {
    /// The text without `prefix` when it starts with it.
    func replacingPrefix(_ prefix: String, with replacement: String) -> String {
        hasPrefix(prefix) ? replacement + dropFirst(prefix.count) : self
    }

    /// The text without leading spaces.
    func trimmingLeadingSpaces() -> String { String(drop { $0 == " " }) }
}
