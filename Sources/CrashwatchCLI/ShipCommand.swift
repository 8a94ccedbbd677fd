// ShipCommand.swift — `crashwatch ship`: sends the spool's reports to an OpenTelemetry collector as OTLP/HTTP
// log records, to a Sentry-compatible server as events, or to both; `--once` (default) drains what is due and
// exits, `--follow` waits for more, `--check` tests each destination with a request that carries nothing.
// Settings: the command line, then OpenTelemetry's OTEL_EXPORTER_OTLP_* variables (SENTRY_DSN,
// SENTRY_ENVIRONMENT), then the settings file.
import CrashwatchModel
import CrashwatchRender
import CrashwatchShip
import CrashwatchSpool
import CrashwatchSystem

enum ShipCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch ship [OPTIONS]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("endpoint", value: "URL", help: "the OTLP/HTTP endpoint, http:// or https:// (without a path, /v1/logs is added)"),
            OptionSpec("sentry", value: "DSN", help: "a Sentry, GlitchTip or Bugsink project's DSN, https://KEY@HOST/PROJECT: send each report as an event"),
            OptionSpec("sentry-environment", value: "NAME", help: "the events' environment (production, staging…)"),
            OptionSpec("header", value: "NAME=VALUE", repeatable: true, help: "an HTTP header for every request (authentication)"),
            OptionSpec("once", help: "send the reports that are due, then exit (the default)"),
            OptionSpec("follow", help: "keep running: send reports as they arrive, retry failed ones when due"),
            OptionSpec("batch", value: "N", help: "reports per request at most, 1 to 1000 (default 10)"),
            OptionSpec("timeout", value: "SECONDS", help: "each request's time limit, connection included (default 10; 500ms also works)"),
            OptionSpec("gzip", help: "compress request bodies (Content-Encoding: gzip)"),
            OptionSpec("ca-file", value: "FILE", help: "trust the CA certificates in FILE (PEM) instead of the system's"),
            OptionSpec("client-cert", value: "FILE", help: "present this client certificate (PEM) for mutual TLS"),
            OptionSpec("client-key", value: "FILE", help: "the client certificate's key (PEM), when not in --client-cert's file"),
            OptionSpec("max-body", value: "SIZE", help: "attach the whole report as the record body up to SIZE (default 1M; 0: never)"),
            OptionSpec("max-backoff", value: "DURATION", help: "the longest wait between retries (default 5m)"),
            OptionSpec("json", help: "print each outcome as one JSON line: {\"event\": shipped|quarantined|kept, \"id\", \"name\", \"attempt\", \"retryInMs\", \"error\"}"),
            OptionSpec("check", help: "send one request that carries nothing to each destination and say whether it works"),
        ],
        about: """
            Sends the spool's reports to an OpenTelemetry collector (OTLP/HTTP, JSON, POST /v1/logs), one log
            record per report: a crash as app.crash, a hang as apsio.hang, a SIGKILL death as app.abnormal_exit,
            a snapshot as crashwatch.snapshot;
            and/or, with --sentry, to a Sentry-compatible server (Sentry, GlitchTip, Bugsink) as events.
            Each report is claimed, sent, and removed only after the endpoint accepted it (a 2xx read whole: one
            whose body is longer than 64 KiB is not, as a rejection may follow the cut). A report the endpoint
            refuses (HTTP 400, or rejected in a partial success) goes to the spool's quarantine with the reason;
            after a failure that may pass (5xx, 408, 429, 401, 403, 404, network, TLS, a 2xx not read whole) the
            report stays, its attempt is recorded ('crashwatch list' shows the count), and it is retried after a
            backoff from 1s doubling up to --max-backoff, never before the server's Retry-After. Several shippers
            may share a spool: none sends a report another one holds, and the claims of one that died are taken
            over.

            With --sentry (a DSN), each report goes to that server as one native event in an envelope (POST
            /api/PROJECT/envelope/, X-Sentry-Auth): the same rules (a 400 or 413 quarantines it with the server's
            reason), and a 429's X-Sentry-Rate-Limits (else its Retry-After, else 60s) honoured; rate limits on a
            2xx pause the shipper.
            With an endpoint and a DSN, a report is removed once both accepted it; one accepted by one of them
            is recorded so, and sent only to the other after a failure.

            One line per report on standard output: 'shipped ID FILE', 'quarantined ID FILE: REASON', or
            'kept ID FILE (attempt N, next attempt in Ss): ERROR'.
            """,
        after: """
            Settings: the command line first, then OpenTelemetry's variables (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT as
            it is, else OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/logs; OTEL_EXPORTER_OTLP_[LOGS_]HEADERS,
            _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY, _TIMEOUT in milliseconds, _COMPRESSION=gzip) and
            Sentry's (SENTRY_DSN, SENTRY_ENVIRONMENT), then the settings file's endpoint, headers (k1=v1,k2=v2),
            sentry (the DSN), sentry-environment, ca-file, client-cert, client-key, timeout, batch, gzip (yes/no),
            max-body and max-backoff. Headers go to the OTLP endpoint only; the TLS files, timeout and gzip apply to
            both. Prefer the environment or the settings file to --header and --sentry for secrets: the command line
            is visible to every local user.

            Exit status: 0 nothing is left to send (reports still being written aside), 64 usage error, 66 no
            spool, 69 --check: a destination does not work, 71 libcurl cannot be loaded, 74 the spool cannot be
            used, 75 --once: reports are left for a later attempt (kept now or by an earlier run).
            """)

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...0, arguments) { parsed, settings throws(CommandFailure) in
            let configuration = try checkingUsage { () throws(UsageError) in
                try ShipConfiguration(parsed, file: settings.config, environment: ProcessEnvironment.current)
            }
            let destinations = try destinations(configuration)
            if configuration.check { return check(destinations) }
            let spool = try usingSpool { () throws(SpoolError) in try settings.open() }
            let json = parsed.has("json")
            let shipper = Shipper(spool: spool, destinations: destinations, options: configuration.options, observe: { event in json ? printEventJSON(event) : printEvent(event) })
            return configuration.follow ? try follow(shipper) : try once(shipper)
        }
    }

    /// The configured destinations, OTLP first, each with its own connection.
    static func destinations(_ configuration: ShipConfiguration) throws(CommandFailure) -> [ShipDestination] {
        var destinations: [ShipDestination] = []
        do throws(TransportError) {
            let agent = "crashwatch/\(CLI.version)"
            if let target = configuration.target {
                destinations.append(.otlp(try HTTPExporter(target: target, userAgent: agent), scope: configuration.options.scope,
                                          maxBodyBytes: configuration.options.maxBodyBytes))
            }
            if let sentry = configuration.sentry {
                destinations.append(.sentry(try HTTPExporter(target: sentry.target, userAgent: agent), dsn: sentry.dsn,
                                            settings: sentry.settings))
            }
        } catch {
            throw CommandFailure("ship: \(error.message)", status: ExitCode.systemError)
        }
        return destinations
    }

    // MARK: Modes

    /// Drains what is due once; 75 when reports are left waiting for a retry (kept now or before, or left
    /// because the endpoint is failing).
    static func once(_ shipper: Shipper) throws(CommandFailure) -> Int32 {
        let totals: ShipTotals
        do throws(SpoolError) { totals = try shipper.drain() } catch { throw CommandFailure(error) }
        let waiting = shipper.waitingForRetry()
        guard totals.paused || waiting > 0 else { return ExitCode.success }
        let left = max(waiting, totals.paused ? (try? shipper.spool.reportNames().count) ?? 0 : 0)
        StandardStream.err("crashwatch: shipped \(totals.shipped), quarantined \(totals.quarantined), kept \(totals.kept); "
                           + "\(left) report\(left == 1 ? "" : "s") left in the spool for a later attempt\n")
        return ExitCode.temporaryFailure
    }

    /// Ships until SIGTERM, SIGINT or SIGHUP: after each pass it sleeps until a report arrives (inotify on the
    /// spool), a retry falls due, or another shipper holding claims ends (pidfd); never a polling loop.
    static func follow(_ shipper: Shipper) throws(CommandFailure) -> Int32 {
        let watch: DirectoryWatch
        do throws(SystemError) { watch = try DirectoryWatch(path: shipper.spool.path) } catch {
            throw CommandFailure("ship --follow: watch the spool: \(error)", status: ExitCode.systemError)
        }
        let inbox: SignalInbox
        do { inbox = try SignalInbox(signals: [.term, .int, .hup]) } catch {
            throw CommandFailure("ship --follow: \(error)", status: ExitCode.systemError)
        }
        var stopping = false
        func shouldStop() -> Bool {
            if !stopping, (try? inbox.drain())?.isEmpty == false { stopping = true }
            return stopping
        }
        var holders: [Int32: ProcessWatch] = [:]
        let me = ProcessProbe.currentID
        // A stop signal abandons a request in flight (its reports go back untouched) instead of waiting it out.
        for destination in shipper.destinations { (destination.transport as? HTTPExporter)?.cancelDescriptor = inbox.fd }
        // A follower lives long and ships in bursts: what a burst took goes back before each sleep.
        SelfProcess.returnFreedMemoryPromptly()
        while !shouldStop() {
            watch.drain()
            if watch.directoryGone {
                throw CommandFailure("ship --follow: the spool \(shipper.spool.path) was removed or moved away", status: ExitCode.ioError)
            }
            do throws(SpoolError) { _ = try shipper.drain(shouldStop: shouldStop) } catch {
                StandardStream.err("crashwatch: \(error)\n")
            }
            if shouldStop() { break }
            SelfProcess.returnFreePages()
            SelfProcess.releaseStartupPages()
            // Other shippers' live claims: their end makes those reports claimable again.
            var live = Set<Int32>()
            var unwatched = false
            for claim in (try? shipper.spool.claims()) ?? [] where !claim.isStale && claim.holder.pid != me {
                live.insert(claim.holder.pid)
                if holders[claim.holder.pid] == nil {
                    if let watch = try? ProcessWatch(pid: claim.holder.pid) { holders[claim.holder.pid] = watch } else { unwatched = true }
                }
            }
            holders = holders.filter { live.contains($0.key) }
            var timeout: Int64 = -1
            if let wake = shipper.nextWake() { timeout = max(0, (wake - Clock.realtimeNanoseconds()) / 1_000_000 + 1) }
            // A holder no pidfd could watch (another pid namespace, an old kernel): look again now and then.
            if unwatched { timeout = timeout < 0 ? 30_000 : min(timeout, 30_000) }
            do throws(SystemError) {
                try inbox.waitUntilPending(timeoutMilliseconds: Int32(min(timeout, Int64(Int32.max))),
                                           alsoReadable: [watch.fd] + holders.values.map(\.fd))
            } catch {
                throw CommandFailure("ship --follow: \(error)", status: ExitCode.systemError)
            }
        }
        return ExitCode.success
    }

    /// Sends each destination a request that carries nothing (an empty export, an envelope without items) and
    /// says, one line each, whether it works; 0 when all do.
    static func check(_ destinations: [ShipDestination]) -> Int32 {
        var status = ExitCode.success
        for destination in destinations where !check(destination) { status = ExitCode.unavailable }
        return status
    }

    /// Checks one destination; whether it accepted the empty request.
    static func check(_ destination: ShipDestination) -> Bool {
        let url = destination.transport.endpoint
        let secure = url.lowercased().hasPrefix("https://")
        let sentry = destination.name == "sentry"
        let what = sentry ? "envelope" : "export"
        do throws(TransportError) {
            let response = try destination.transport.send(destination.emptyRequest)
            switch destination.interpret(response).outcome {
            case .accepted:
                StandardStream.err("crashwatch: \(url): OK: reachable, \(secure ? "TLS verified, " : "")\(what) accepted (HTTP \(response.status))\n")
                return true
            case .refused(let reason), .retry(let reason, _):
                StandardStream.err("crashwatch: \(url): reachable\(secure ? ", TLS verified" : ""), but the \(what) failed: \(reason)"
                                   + "\(hint(status: response.status, sentry: sentry))\n")
            }
        } catch {
            StandardStream.err("crashwatch: \(url): \(error.message)\(hint(error, secure: secure))\n")
        }
        return false
    }

    static func hint(status: Int, sentry: Bool = false) -> String {
        if sentry {
            switch status {
            case 401, 403: return "\n  hint: the server refused the DSN's key: copy the DSN again from the project's settings"
            case 404, 405: return "\n  hint: no such project or no envelope endpoint there: check the DSN's host, path and project id"
            case 500..<600: return "\n  hint: the server is up but failing; see its own logs"
            default: return ""
            }
        }
        return switch status {
        case 401, 403: "\n  hint: the endpoint refused the credentials: check --header (or OTEL_EXPORTER_OTLP_HEADERS)"
        case 404, 405: "\n  hint: no OTLP logs receiver at this path: a collector's otlp receiver takes POST /v1/logs on port 4318"
        case 415: "\n  hint: the endpoint does not take OTLP/JSON; crashwatch sends application/json"
        case 500..<600: "\n  hint: the collector is up but failing; see its own logs"
        default: ""
        }
    }

    static func hint(_ error: TransportError, secure: Bool) -> String {
        // TLS spoken to a plain-HTTP server fails in the handshake ("wrong version number"), which is no
        // certificate problem.
        if error.kind == .tls || error.kind == .connection, secure, error.message.contains("wrong version number") {
            return "\n  hint: the server speaks plain HTTP on this port, not HTTPS: use an http:// URL"
        }
        return switch error.kind {
        case .resolve: "\n  hint: the host name does not resolve"
        case .connect: "\n  hint: nothing listens there: is the collector running, and is its otlp http receiver on this port (4318 by default)?"
        case .timeout: "\n  hint: no answer in time: a firewall, or the wrong port (4317 is OTLP/gRPC, not HTTP); --timeout sets the limit"
        case .tls: "\n  hint: the server's certificate is not trusted, or it wants a client certificate: --ca-file for a private CA; for mutual TLS, --client-cert and --client-key"
        case .localCertificate: "\n  hint: check the files given to --ca-file, --client-cert and --client-key"
        case .connection:
            secure ? "\n  hint: the connection broke: is the server speaking HTTPS on this port, and does it want a client certificate (--client-cert, --client-key)?"
                   : "\n  hint: the connection broke: is the server speaking plain HTTP on this port?"
        case .other, .cancelled: ""
        }
    }

    /// Prints one event as a JSON line (`ship --json`): outcomes on standard output, warnings on standard error as text.
    static func printEventJSON(_ event: ShipEvent) {
        switch event {
        case .shipped(let name): StandardStream.out(eventLine("shipped", name, attempt: nil, retryInMs: nil, error: nil))
        case .quarantined(let name, let reason): StandardStream.out(eventLine("quarantined", name, attempt: nil, retryInMs: nil, error: reason))
        case .kept(let name, let attempts, let retryInMs, let error):
            StandardStream.out(eventLine("kept", name, attempt: attempts, retryInMs: retryInMs, error: error))
        case .warning: printEvent(event)
        }
    }

    /// One `ship --json` line.
    static func eventLine(_ kind: String, _ name: ReportFileName, attempt: Int?, retryInMs: Int64?, error: String?) -> String {
        var json = JSONWriter(spaced: true)
        json.object { json in
            json.member("event", kind)
            json.member("id", name.idText)
            json.member("name", name.text)
            json.member("attempt", attempt)
            json.member("retryInMs", retryInMs)
            json.member("error", error)
        }
        return String(decoding: json.bytes, as: UTF8.self) + "\n"
    }

    /// Prints one event: outcomes on standard output, warnings on standard error.
    static func printEvent(_ event: ShipEvent) {
        switch event {
        case .shipped(let name):
            StandardStream.out("shipped \(name.idText) \(name.text)\n")
        case .quarantined(let name, let reason):
            StandardStream.out("quarantined \(name.idText) \(name.text): \(reason)\n")
        case .kept(let name, let attempts, let retryInMs, let error):
            let seconds = Double(retryInMs / 100) / 10
            StandardStream.out("kept \(name.idText) \(name.text) (attempt \(attempts), next attempt in \(seconds)s): \(error)\n")
        case .warning(let message):
            StandardStream.err("crashwatch: warning: \(message)\n")
        }
    }
}
