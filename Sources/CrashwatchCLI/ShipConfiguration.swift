// ShipConfiguration.swift — `ship`'s settings, resolved in one order for each: the command line, then
// OpenTelemetry's OTEL_EXPORTER_OTLP_[LOGS_]* variables (Sentry's SENTRY_DSN, SENTRY_ENVIRONMENT), then the
// settings file. An OTLP endpoint, a Sentry DSN, or both: each one found is a destination.
import CrashwatchRender
import CrashwatchShip
import CrashwatchSpool
import CrashwatchSystem

/// `ship`'s settings, resolved: the command line, then OTEL_EXPORTER_OTLP_* and SENTRY_* variables, then the
/// settings file.
struct ShipConfiguration {
    /// The OTLP endpoint, when one is configured.
    var target: ExportTarget?
    /// The Sentry server, when a DSN is configured: the DSN, its target and what events take from settings.
    var sentry: (dsn: SentryDSN, target: ExportTarget, settings: SentryEvent.Settings)?
    var options: ShipOptions
    var follow: Bool
    var check: Bool

    init(_ parsed: ParsedArguments, file: ConfigFile, environment: [String: String]) throws(UsageError) {
        if parsed.has("once") && parsed.has("follow") { throw UsageError("--once and --follow exclude each other") }
        follow = parsed.has("follow")
        check = parsed.has("check")
        let sources = Sources(parsed: parsed, file: file, environment: environment)
        let dsn = try sources.sentryDSN()
        let url = try sources.endpoint(required: dsn == nil)
        let headers = try sources.headers()
        let timeout = try sources.timeoutMilliseconds()
        let gzip = try sources.gzip()
        let tls = try sources.tls()
        if let url { target = ExportTarget(url: url, headers: headers, gzip: gzip, timeoutMilliseconds: timeout, tls: tls) }
        if let dsn {
            let target = ExportTarget.sentry(dsn, client: "crashwatch/\(CLI.version)", gzip: gzip, timeoutMilliseconds: timeout, tls: tls)
            sentry = (dsn, target, SentryEvent.Settings(environment: try sources.sentryEnvironment(), version: CLI.version))
        }
        options = try sources.shipOptions()
    }

    /// Where the settings come from, and how each one is resolved from them.
    private struct Sources {
        let parsed: ParsedArguments
        let file: ConfigFile
        let environment: [String: String]

        /// An OpenTelemetry variable, the logs signal's own first (`OTEL_EXPORTER_OTLP_LOGS_TIMEOUT`); empty is unset.
        func otel(_ suffix: String) -> String? {
            let value = environment["OTEL_EXPORTER_OTLP_LOGS_\(suffix)"] ?? environment["OTEL_EXPORTER_OTLP_\(suffix)"]
            return value?.isEmpty == false ? value : nil
        }

        /// The Sentry DSN: `--sentry`, else `SENTRY_DSN`, else the file's `sentry`; nil when none is set.
        func sentryDSN() throws(UsageError) -> SentryDSN? {
            if let given = parsed.value("sentry") ?? environment["SENTRY_DSN"].flatMap({ $0.isEmpty ? nil : $0 }) {
                return try exportSetting { () throws(ExportSetupError) in try SentryDSN(parsing: given) }
            }
            return try file.fileValue("sentry") { text throws(UsageError) in
                try exportSetting { () throws(ExportSetupError) in try SentryDSN(parsing: text) }
            }
        }

        /// The events' environment: `--sentry-environment`, else `SENTRY_ENVIRONMENT`, else the file's; nil when none.
        func sentryEnvironment() throws(UsageError) -> String? {
            let check = { (text: String) throws(UsageError) -> String in
                guard !text.contains("/"), text.count <= 64, !text.contains(where: { $0.isNewline }) else {
                    throw UsageError("--sentry-environment takes a name of at most 64 characters on one line without '/', not '\(text)'")
                }
                return text
            }
            if let given = parsed.value("sentry-environment") ?? environment["SENTRY_ENVIRONMENT"].flatMap({ $0.isEmpty ? nil : $0 }) {
                return try check(given)
            }
            return try file.fileValue("sentry-environment", check)
        }

        /// The endpoint URL: `--endpoint`, the logs endpoint as it is, the base endpoint plus `/v1/logs`, the file's;
        /// nil when none is set and a Sentry DSN makes it optional (`required` false).
        func endpoint(required: Bool) throws(UsageError) -> String? {
            let logsEndpoint = environment["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"] ?? "", baseEndpoint = environment["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? ""
            if parsed.value("endpoint") == nil && logsEndpoint.isEmpty && baseEndpoint.isEmpty {
                guard let configured = try file.fileValue("endpoint", { text throws(UsageError) in
                    try exportSetting { () throws(ExportSetupError) in try ExportTarget.normalizedURL(text) }
                }) else {
                    if !required { return nil }
                    throw UsageError("no destination: give --endpoint URL (OTLP) or --sentry DSN, set OTEL_EXPORTER_OTLP_ENDPOINT or SENTRY_DSN, "
                                     + "or 'endpoint' or 'sentry' in the settings file")
                }
                return configured
            }
            return try exportSetting { () throws(ExportSetupError) -> String in
                if let given = parsed.value("endpoint") { return try ExportTarget.normalizedURL(given) }
                if !logsEndpoint.isEmpty {
                    _ = try ExportTarget.normalizedURL(logsEndpoint)
                    return logsEndpoint  // the signal's own endpoint is used as it is (OpenTelemetry's rule)
                }
                _ = try ExportTarget.normalizedURL(baseEndpoint)
                return (baseEndpoint.hasSuffix("/") ? baseEndpoint : baseEndpoint + "/") + "v1/logs"
            }
        }

        /// The headers: the file's, then the environment's, then the command line's; a later one replaces an
        /// earlier one of the same name.
        func headers() throws(UsageError) -> [(String, String)] {
            let fileHeaders = try file.fileValue("headers") { text throws(UsageError) in
                try exportSetting { () throws(ExportSetupError) in try ExportTarget.parseHeaderList(text) }
            }
            return try exportSetting { () throws(ExportSetupError) in
                var layers: [[(String, String)]] = []
                if let fileHeaders { layers.append(fileHeaders) }
                if let text = environment["OTEL_EXPORTER_OTLP_HEADERS"] { layers.append(try ExportTarget.parseHeaderList(text)) }
                if let text = environment["OTEL_EXPORTER_OTLP_LOGS_HEADERS"] { layers.append(try ExportTarget.parseHeaderList(text)) }
                var given: [(String, String)] = []
                for text in parsed.all("header") { given.append(try ExportTarget.parseHeader(text)) }
                layers.append(given)
                var headers: [(String, String)] = []
                for header in layers.joined() {
                    headers.removeAll { $0.0.lowercased() == header.0.lowercased() }
                    headers.append(header)
                }
                return headers
            }
        }

        /// Each request's time limit: `--timeout`, else the variable (milliseconds), else the file's; 10 s.
        func timeoutMilliseconds() throws(UsageError) -> Int {
            let inRange = { (milliseconds: Int) throws(UsageError) -> Int in
                guard (1...3_600_000).contains(milliseconds) else { throw UsageError("--timeout must be between 1ms and 1h") }
                return milliseconds
            }
            if let given = parsed.value("timeout") { return try inRange(try ShipConfiguration.milliseconds(given, option: "--timeout")) }
            if let text = otel("TIMEOUT") {
                guard let value = Int(text), value > 0 else { throw UsageError("OTEL_EXPORTER_OTLP_TIMEOUT needs milliseconds, not '\(text)'") }
                return try inRange(value)
            }
            return try file.fileValue("timeout", { text throws(UsageError) in
                try inRange(try ShipConfiguration.milliseconds(text, option: "--timeout"))
            }) ?? 10_000
        }

        /// Whether bodies are compressed: `--gzip`, else the variable (gzip or none), else the file's (yes or no).
        func gzip() throws(UsageError) -> Bool {
            if parsed.has("gzip") { return true }
            if let compression = otel("COMPRESSION") {
                guard compression == "gzip" || compression == "none" else {
                    throw UsageError("OTEL_EXPORTER_OTLP_COMPRESSION takes gzip or none, not '\(compression)'")
                }
                return compression == "gzip"
            }
            return try file.fileValue("gzip", { text throws(UsageError) in
                guard let value = ["yes": true, "true": true, "1": true, "no": false, "false": false, "0": false][text.lowercased()] else {
                    throw UsageError("gzip takes yes or no")
                }
                return value
            }) ?? false
        }

        /// The TLS files: each from the command line or the environment (its errors name it), else the file.
        func tls() throws(UsageError) -> TLSSettings {
            func tlsFile(_ key: String, _ variable: String) throws(UsageError) -> String? {
                if let given = parsed.value(key) ?? otel(variable) { return try ShipConfiguration.readableFile(given, "--\(key)") }
                return try file.fileValue(key) { text throws(UsageError) in try ShipConfiguration.readableFile(text, "--\(key)") } ?? nil
            }
            let tls = TLSSettings(caFile: try tlsFile("ca-file", "CERTIFICATE"),
                                  clientCertificate: try tlsFile("client-cert", "CLIENT_CERTIFICATE"),
                                  clientKey: try tlsFile("client-key", "CLIENT_KEY"))
            if tls.clientKey != nil && tls.clientCertificate == nil { throw UsageError("--client-key needs --client-cert") }
            return tls
        }

        /// The shipper's batch, body limit and backoff: the command line, else the file.
        func shipOptions() throws(UsageError) -> ShipOptions {
            var options = ShipOptions(scope: OTLPLogs.Scope(version: CLI.version))
            if let batch = try file.value("batch", overriddenBy: parsed, { text throws(UsageError) in
                guard let batch = Int(text), (1...1000).contains(batch) else { throw UsageError("--batch needs a number from 1 to 1000, not '\(text)'") }
                return batch
            }) {
                options.batch = batch
            }
            if let bytes = try file.value("max-body", overriddenBy: parsed, { text throws(UsageError) in
                Int(clamping: try OptionValue.byteSize(text, option: "max-body"))
            }) {
                options.maxBodyBytes = bytes
            }
            if let duration = try file.value("max-backoff", overriddenBy: parsed, { text throws(UsageError) in
                let duration = try OptionValue.duration(text, option: "max-backoff")
                guard duration >= .seconds(1), duration <= .seconds(86_400) else { throw UsageError("--max-backoff must be between 1s and 1d, not '\(text)'") }
                return duration
            }) {
                options.backoff = Backoff(maximumMilliseconds: duration.components.seconds * 1_000)
            }
            return options
        }

        /// Runs `body`, turning a refused export setting into a usage error with its message.
        private func exportSetting<T>(_ body: () throws(ExportSetupError) -> T) throws(UsageError) -> T {
            do throws(ExportSetupError) { return try body() } catch { throw UsageError(error.message) }
        }
    }

    /// A time limit: seconds (`10`, `2.5`, `10s`) or milliseconds (`500ms`).
    static func milliseconds(_ text: String, option: String) throws(UsageError) -> Int {
        var number = Substring(text).trimmingCharacters(in: " ")
        var scale = 1000.0
        if number.hasSuffix("ms") {
            number.removeLast(2)
            scale = 1
        } else if number.hasSuffix("s") {
            number.removeLast()
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale <= 3_600_000 else {
            throw UsageError("\(option) needs a number of seconds (or 500ms), not '\(text)'")
        }
        return max(1, Int(value * scale))
    }

    /// `path` when it names a regular file this process can open; a usage error naming `option` otherwise.
    static func readableFile(_ path: String?, _ option: String) throws(UsageError) -> String? {
        guard let path else { return nil }
        do { _ = try UntrustedFile.open(path, followLinks: true) } catch {
            throw UsageError("cannot read \(option) file \(path): \(error)")
        }
        return path
    }
}
