// RunCommand.swift — `crashwatch run`: its options, the supervisor with a reporter (CrashwatchReporter) as its
// observer, and an exit status identical to the command's.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchModel
import CrashwatchReporter
import CrashwatchSpool
import CrashwatchSystem
import Dispatch
import FoundationEssentials
import Synchronization

/// `crashwatch run [options] [--] COMMAND [ARG...]`.
enum RunCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch run [OPTIONS] [--] COMMAND [ARG...]",
        options: SpoolSettings.locationSpecs + SpoolSettings.retentionSpecs + [
            appRoot,
            OptionSpec("env-allow", value: "NAME", repeatable: true, help: "record environment variable NAME in reports (none are recorded otherwise)"),
            redactArgs,
            OptionSpec("app-name", value: "NAME", help: "app name for reports (default: $CRASHWATCH_APP_NAME of the crashed process)"),
            OptionSpec("app-version", value: "VERSION", help: "app version for reports (default: $CRASHWATCH_APP_VERSION)"),
            OptionSpec("app-release", value: "RELEASE", help: "app release for reports (default: $CRASHWATCH_APP_RELEASE)"),
            OptionSpec("max-frames", value: "N", help: "unwind at most N frames per thread (default 256)"),
            OptionSpec("capture-timeout", value: "SECONDS", help: "finish each crash's report within this long of the crash (hold and processing); past it, the report keeps what was done (default 10)"),
            symbolicate,
            debugDir,
            OptionSpec("debuginfod", value: "URL", repeatable: true, help: "let processing ask this debuginfod server for missing debug info (none by default; $DEBUGINFOD_URLS is not used)"),
            debugCacheSpec,
            OptionSpec("max-stack-bytes", value: "SIZE", help: "capture at most SIZE bytes of each thread's stack (default 1M)"),
            OptionSpec("max-capture-bytes", value: "SIZE", help: "capture at most SIZE bytes of stacks and image copies per crash (default 64M)"),
            OptionSpec("no-follow-forks", help: "do not trace forked children (their crashes go unreported; a program that traces its own children, such as a debugger, needs this)"),
            OptionSpec("pid-file", value: "FILE", help: "for a daemon that forks and exits (systemd Type=forking with PIDFile=FILE): crashwatch returns when the command's first process exits, as it did, and a crashwatch process that goes on supervising what it left running writes its pid to FILE; it ends as the last of them does"),
        ],
        about: """
            Runs COMMAND (looked up in PATH) as a traced child and reports its crashes. The child inherits
            stdin, stdout, stderr, the working directory, the environment, rlimits and the process group.
            TERM, INT, HUP, QUIT, ABRT, USR1, USR2, WINCH, ALRM, CONT, TSTP, TTIN and TTOU sent to crashwatch
            are passed on once: a signal sent to the whole group, by the terminal or by a process, is not sent
            again when the child already has it (one from pid 1, which signals the whole service, waits 100 ms
            for the child's own copy). Threads, forks, vforks and execs are followed.

            Under systemd: the child gets crashwatch's own NOTIFY_SOCKET, and what it sends there (READY=1,
            STATUS=, WATCHDOG=1, FDSTORE=1 with its fds; never MAINPID= or MAINPIDFD=) goes on to systemd from
            crashwatch, the service's main process; LISTEN_PID and WATCHDOG_PID naming crashwatch name the
            child. When the child's watchdog pings stop for half of WATCHDOG_USEC, its threads are captured as
            a hang report and it is left running; the crash that follows (the watchdog's SIGABRT) links to it.
            A SIGKILL death (the OOM killer, kill -9) becomes an abnormal-exit report, with every thread's
            stack taken at its exit (none after an OOM kill). If ptrace is refused (a seccomp filter, Yama),
            crashwatch says so in one line and runs COMMAND unsupervised.

            A crash is a core-dumping signal (SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS, QUIT, XCPU, XFSZ)
            delivered with its default action; a signal the program handles and recovers from is not one.
            For each crash crashwatch stops every thread and copies what only the live process has
            (registers, the used part of every stack, maps, build-ids, the bytes of deleted images), writes
            a minimal JSON report (schema version 1) into the spool and lets the program die as it would
            have. A confined worker process then unwinds every stack and adds symbols, and the full report
            replaces the minimal one. crashwatch prints one line naming the crash and one naming the report
            to stderr.
            """,
        after: """
            Spool:
              --spool, else $CRASHWATCH_SPOOL, else the settings file's spool, else
              /var/lib/crashwatch/reports as root, else $XDG_STATE_HOME/crashwatch/reports
              (~/.local/state/crashwatch/reports). Reports are named
              <UTC time>-<pid>-<executable tag>-<report id>.json, written atomically with mode 0640; the
              full report replaces the minimal one under the same name. The spool is checked before COMMAND
              starts; when it cannot take a report, reports go to /run/crashwatch/reports as root (else
              $XDG_RUNTIME_DIR/crashwatch/reports) instead, and crashwatch says so at once.

            Settings file:
              run fails open: a line of the settings file it cannot take, a bad value or an unreadable file
              is left out (its defaults used), named in one line before COMMAND starts, and COMMAND runs
              supervised. A mistake on the command line is a usage error.

            Exit status:
              the command's own: its exit code, or death by the same signal (128+N in a shell); as PID 1
              of a PID namespace, where a process cannot kill itself, 128+N
              64   usage error
              71   supervision could not be set up (fork or ptrace failed)
              126  COMMAND found but not executable
              127  COMMAND not found
            """)

    /// Everything `run` was asked to do, validated: the supervisor's part and the reporter's.
    struct Configuration {
        var supervisor: SupervisorOptions
        var reporter: ReporterConfiguration
        /// `--pid-file`: where the supervisor that outlives the command's first process writes its pid.
        var pidFile: String?
        /// What of the settings file was left out, one message each (the defaults stand for it).
        var settingsProblems: [String] = []

        var capture: CaptureOptions { reporter.capture }
        var spool: String { reporter.spool }
        var retention: RetentionPolicy { reporter.retention }
        var debugCache: String? { reporter.debugCache }
    }

    /// The inflated debug-file cache's default place.
    static let debugCacheSpec = OptionSpec("debug-cache", value: "DIR", help: "keep inflated copies of compressed debug files here, by build-id, so later crashes skip inflating them (default /var/cache/crashwatch/debug as root, else $XDG_CACHE_HOME/crashwatch/debug; 'none' turns it off)")

    /// The debug-file cache `--debug-cache` names, else the default (`defaultDebugCache`); nil for `none`.
    static func debugCache(_ parsed: ParsedArguments) throws(UsageError) -> String? {
        guard let text = parsed.value("debug-cache") else {
            return defaultDebugCache(environment: ProcessEnvironment.current, isRoot: SelfProcess.isRoot)
        }
        guard text == "none" || text.hasPrefix("/") else {
            throw UsageError("--debug-cache needs an absolute directory or 'none', not '\(text)'")
        }
        return text == "none" ? nil : text
    }

    static func defaultDebugCache(environment: [String: String], isRoot: Bool) -> String? {
        if isRoot { return "/var/cache/crashwatch/debug" }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/crashwatch/debug" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/crashwatch/debug" }
        return nil
    }

    // The options of processing every report source shares (`run`, `analyze-core`), applied by
    // `applyProcessingOptions`.
    static let appRoot = OptionSpec("app-root", value: "DIR", repeatable: true, help: "images under DIR are in-app (default: the executable's directory, or its parent when that is bin, sbin or libexec)")
    static let redactArgs = OptionSpec("redact-args", help: "record only argv[0] of the command line; later arguments become <redacted> (a command line joined into one string keeps its first word)")
    static let symbolicate = OptionSpec("symbolicate", value: "MODE", help: "processing adds: full (functions, file:line, inline frames; default), functions, or none")
    static let debugDir = OptionSpec("debug-dir", value: "DIR", repeatable: true, help: "also look for separate debug info under DIR (DIR/.build-id/xx/rest.debug)")
    /// The processing options, in the order `analyze-core` lists them.
    static let processingSpecs = [appRoot, redactArgs, symbolicate, debugDir]

    /// Applies `processingSpecs` from the command line to `capture`.
    static func applyProcessingOptions(_ parsed: ParsedArguments, to capture: inout CaptureOptions) throws(UsageError) {
        if let text = parsed.value("symbolicate") {
            guard let level = Symbolication(rawValue: text) else {
                throw UsageError("--symbolicate takes full, functions or none, not '\(text)'")
            }
            capture.symbolication = level
        }
        capture.debugDirectories = try DebugDirectories.validated(parsed.all("debug-dir"))
        for root in parsed.all("app-root") where !root.hasPrefix("/") {
            throw UsageError("--app-root needs an absolute directory, not '\(root)'")
        }
        capture.appRoots = parsed.all("app-root")
        capture.redactArguments = parsed.has("redact-args")
    }

    /// Validates everything `run` was asked to do. The settings file fails open: a line that cannot be read,
    /// or a value found bad when used, is left out and named in `settingsProblems`, and the defaults stand;
    /// a mistake on the command line is a usage error.
    static func configuration(_ parsed: ParsedArguments) throws(UsageError) -> Configuration {
        var settings = try SpoolSettings(parsed, lenient: true)
        while true {
            do throws(UsageError) {
                var configuration = try configuration(parsed, settings: settings)
                configuration.settingsProblems = settings.problems
                return configuration
            } catch {
                // Each round leaves one setting out: at most as many rounds as the file has keys.
                guard settings.dropSetting(for: error) else { throw error }
            }
        }
    }

    /// Validates everything `run` was asked to do, with the settings file read as `settings`.
    private static func configuration(_ parsed: ParsedArguments, settings: SpoolSettings) throws(UsageError) -> Configuration {
        guard !parsed.operands.isEmpty, !parsed.operands[0].isEmpty else { throw UsageError("no command given") }
        let environment = ProcessEnvironment.current
        let supervisor = try supervisorOptions(parsed, environment: environment)
        var capture = try captureOptions(parsed)
        capture.debuginfodURLs = try debuginfodURLs(parsed, settings: settings)
        let debugCache = try debugCache(parsed)
        let pidFile = try parsed.value("pid-file", OptionValue.absolutePath)
        let reporter = ReporterConfiguration(capture: capture, spool: settings.spool, retention: try settings.retention(parsed),
                                             debugCache: debugCache, crashwatchVersion: CLI.version)
        return Configuration(supervisor: supervisor, reporter: reporter, pidFile: pidFile)
    }

    /// The supervisor's part: the command (as bytes when the kernel gave it so), forks, systemd's notify
    /// socket and watchdog, the capture timeout.
    private static func supervisorOptions(_ parsed: ParsedArguments, environment: [String: String]) throws(UsageError) -> SupervisorOptions {
        var supervisor = SupervisorOptions(command: parsed.operands)
        // The command as the kernel gave it to crashwatch: the last operands of its own argv, as bytes.
        let own = rawArguments()
        if own.count >= parsed.operands.count {
            let raw = Array(own.suffix(parsed.operands.count))
            if raw.map({ String(decoding: $0, as: UTF8.self) }) == parsed.operands { supervisor.rawCommand = raw }
        }
        supervisor.followForks = !parsed.has("no-follow-forks")
        // Under systemd: relay the program's sd_notify messages, and watch its watchdog pings.
        supervisor.notifySocket = environment["NOTIFY_SOCKET"].flatMap { $0.hasPrefix("/") || $0.hasPrefix("@") ? $0 : nil }
        if let usec = environment["WATCHDOG_USEC"].flatMap({ Int64($0) }), usec > 0, usec < Int64.max / 1_000,
           environment["WATCHDOG_PID"].map({ $0 == String(SelfProcess.pid) }) ?? true {
            supervisor.watchdogTimeoutNanoseconds = usec * 1_000
        }
        if let seconds = try parsed.value("capture-timeout", OptionValue.seconds) {
            supervisor.captureTimeoutNanoseconds = Int64(seconds * 1e9)
        }
        return supervisor
    }

    /// What each crash's capture records and how it is processed.
    private static func captureOptions(_ parsed: ParsedArguments) throws(UsageError) -> CaptureOptions {
        var capture = CaptureOptions(crashwatchVersion: CLI.version)
        capture.runID = CrashReport.newID()
        if let text = parsed.value("max-frames") {
            guard let frames = Int(text), frames >= 1, frames <= 100_000 else {
                throw UsageError("--max-frames needs a whole number from 1 to 100000, not '\(text)'")
            }
            capture.maxFrames = frames
        }
        try applyProcessingOptions(parsed, to: &capture)
        for (option, apply) in [("max-stack-bytes", { (value: Int) in capture.stackBytesPerThread = value }),
                                ("max-capture-bytes", { (value: Int) in capture.captureBytes = value })] {
            guard let text = parsed.value(option) else { continue }
            guard let bytes = try? ByteSize.parse(text), bytes >= 4096, bytes <= 1 << 32 else {
                throw UsageError("--\(option) needs a size from 4K to 4G (e.g. 512K, 8M), not '\(text)'")
            }
            apply(Int(bytes))
        }
        for name in parsed.all("env-allow") where name.isEmpty || name.contains("=") {
            throw UsageError("--env-allow needs a variable name, not '\(name)'")
        }
        capture.environmentAllowList = parsed.all("env-allow")
        capture.app = AppRecord(name: parsed.value("app-name"), version: parsed.value("app-version"),
                                release: parsed.value("app-release"))
        return capture
    }

    /// The debuginfod servers processing may ask: `--debuginfod`, else the settings file's.
    static func debuginfodURLs(_ parsed: ParsedArguments, settings: SpoolSettings) throws(UsageError) -> [String] {
        var urls = parsed.all("debuginfod")
        if urls.isEmpty, let configured = settings.config.value("debuginfod", overriddenBy: parsed) {
            urls = configured.split(separator: " ").map(String.init)
        }
        for url in urls where !(url.hasPrefix("http://") || url.hasPrefix("https://")) || url.contains(" ") {
            throw UsageError("--debuginfod needs an http:// or https:// URL, not '\(url)'")
        }
        return urls
    }

    static func main(_ arguments: [String]) -> Int32 {
        var configuration: Configuration
        do {
            let parsed = try parseArguments(arguments, specs: syntax.specs, operandsEndOptions: true)
            if parsed.has("help") {
                StandardStream.out(syntax.help)
                return ExitCode.success
            }
            configuration = try self.configuration(parsed)
        } catch {
            return syntax.failure(error)
        }
        StartChecks.announce(settingsProblems: configuration.settingsProblems)
        configuration.reporter.spool = StartChecks.usableSpool(configuration.spool)

        if let pidFile = configuration.pidFile {
            // Before any thread exists: the foreground process waits in C for the word from this one.
            let statusPipe: Int32
            do {
                statusPipe = try SupervisorSplit.split()
                try FileSystem.writeAtomically(Array("\(SelfProcess.pid)\n".utf8), to: pidFile, permissions: 0o644)
            } catch {
                StandardStream.err("crashwatch: --pid-file \(pidFile): \(error)\n")
                return ExitCode.systemError
            }
            configuration.supervisor.outlivesMainChild = true
            configuration.supervisor.mainChildExited = { status in SupervisorSplit.report(status, on: statusPipe) }
        }
        let reporter = CrashReporter(configuration: configuration.reporter)
        let status: WaitStatus
        do throws(SupervisorError) {
            let supervisor = try Supervisor(options: configuration.supervisor, observer: reporter)
            do throws(SupervisorError) {
                status = try supervisor.run()
            } catch .supervisionBlocked(let reason) {
                // A service must not fail because its crash reporter cannot work: run the program as if
                // crashwatch were not there, and say once why its crashes go unreported.
                StandardStream.err("crashwatch: cannot supervise: \(reason); running \(configuration.supervisor.command[0]) unsupervised, its crashes will not be reported\n")
                throw supervisor.execUnsupervised()
            }
            reporter.finishWriting()
        } catch {
            reporter.flushLines()
            switch error {
            case .supervisionBlocked(let reason):
                StandardStream.err("crashwatch: \(reason)\n")
                return ExitCode.systemError
            case .commandNotFound(let command):
                StandardStream.err("crashwatch: \(command): command not found\n")
                return ExitCode.notFound
            case .commandNotExecutable(let command, let failure):
                StandardStream.err("crashwatch: cannot execute '\(command)': \(failure.reason)\n")
                return ExitCode.notExecutable
            case .system(let systemError):
                StandardStream.err("crashwatch: \(systemError)\n")
                return ExitCode.systemError
            }
        }
        reporter.flushLines()
        SelfProcess.terminate(like: status)
    }
}
