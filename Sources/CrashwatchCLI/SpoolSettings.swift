// SpoolSettings.swift — what the spool commands and `run` share: where the spool is (the command line, then
// $CRASHWATCH_SPOOL, then the settings file), the settings file, and the retention policy (the command line
// first and the settings file second).
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

/// Spool location and retention, resolved from options, the environment and the settings file.
struct SpoolSettings {
    /// Options every spool command accepts.
    static let locationSpecs: [OptionSpec] = [
        OptionSpec("spool", value: "DIR", help: "the spool directory (default: see Spool in 'crashwatch --help')"),
        OptionSpec("config", value: "FILE", help: "read settings from FILE (default /etc/crashwatch.conf, when it exists)"),
    ]

    /// Retention options shared by `run` and `prune`.
    static let retentionSpecs: [OptionSpec] = [
        OptionSpec("max-reports", value: "N", help: "keep at most N reports, oldest removed first (default 50, at least 1)"),
        OptionSpec("max-bytes", value: "SIZE", help: "keep the spool under SIZE bytes (10M, 1G); the newest report always stays"),
        OptionSpec("max-age", value: "DURATION", help: "remove reports older than DURATION (12h, 7d, 1d12h; at least 1m)"),
        OptionSpec("max-per-exe", value: "N", help: "flood guard: keep at most N reports of one executable, its oldest removed first"),
    ]

    let spool: String
    private(set) var config: ConfigFile
    /// What a lenient reading (`run`) left out of the settings file, one message each; empty when strict.
    private(set) var problems: [String] = []

    /// Settings already resolved (tests).
    init(spool: String, config: ConfigFile) {
        self.spool = spool
        self.config = config
    }

    /// Reads the settings file (`--config FILE`, else /etc/crashwatch.conf when present) and resolves the spool
    /// (`environment` is crashwatch's own, passed in so tests can give one). Strictly, a file that cannot be
    /// read or holds a mistake is a usage error; `lenient`ly (`run`), what cannot be read is left out and
    /// named in `problems`.
    init(_ parsed: ParsedArguments, environment: [String: String] = ProcessEnvironment.current, lenient: Bool = false)
        throws(UsageError)
    {
        var problems: [String] = []
        let path = parsed.value("config") ?? ConfigFile.defaultPath
        do throws(SystemError) {
            config = ConfigFile(parsingLeniently: try UntrustedFile.readWhole(path, limit: 1 << 20), path: path, problems: &problems)
        } catch {
            config = ConfigFile()
            // A missing /etc/crashwatch.conf is no mistake: it is read only when it exists. The reason is
            // named but not the file's text (`--config` may name a file the caller may not read).
            if parsed.value("config") != nil || !error.isNotFound {
                problems.append("cannot read settings file \(path): \(error.isNotRegularFile ? "not a regular file" : error.reason)")
            }
        }
        if !lenient, let first = problems.first { throw UsageError(first) }
        self.problems = problems
        // --spool, then $CRASHWATCH_SPOOL, then the file: a unit's own environment beats the shared file.
        spool = SpoolLocation.resolve(explicit: parsed.value("spool"), configured: config.values["spool"],
                                      environment: environment, isRoot: SelfProcess.isRoot)
    }

    /// Leaves a setting of the file out because its value was found bad when used (`error.settingsKey`),
    /// naming the problem; false when the error is not about a setting of the file (nothing changed).
    mutating func dropSetting(for error: UsageError) -> Bool {
        guard let key = error.settingsKey, config.values[key] != nil else { return false }
        config.remove(key)
        problems.append(error.message)
        return true
    }

    /// The retention policy from `--max-*` options, then the settings file, then the defaults. A bad value
    /// on the command line is quoted in the error; one from the file is named by its line only.
    func retention(_ parsed: ParsedArguments) throws(UsageError) -> RetentionPolicy {
        func count(_ key: String) throws(UsageError) -> Int? {
            try config.value(key, overriddenBy: parsed) { text throws(UsageError) in
                guard let value = Int(text), value >= 0 else { throw UsageError("--\(key) needs a whole number, not '\(text)'") }
                return value
            }
        }
        let maxBytes: Int64? = try config.value("max-bytes", overriddenBy: parsed) { text throws(UsageError) in
            do { return try ByteSize.parse(text) } catch { throw UsageError("--max-bytes: \(error)") }
        }
        let maxAge: Duration? = try config.value("max-age", overriddenBy: parsed) { text throws(UsageError) in
            let age: Duration
            do { age = try DurationText.parse(text) } catch { throw UsageError("--max-age: \(error)") }
            // A report younger than a minute is one just written: an age limit never removes it.
            if age < .seconds(60) {
                throw UsageError("--max-age must be at least 1m (a shorter one would remove reports as they are written), not '\(text)'")
            }
            return age
        }
        return RetentionPolicy(maxReports: try count("max-reports") ?? RetentionPolicy.defaultMaxReports,
                               maxPerExecutable: try count("max-per-exe"), maxBytes: maxBytes, maxAge: maxAge)
    }

    /// Opens the spool for reading; a spool that does not exist is not created.
    func open() throws(SpoolError) -> Spool { try Spool(path: spool, create: false) }
}
