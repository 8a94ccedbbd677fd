// ExportCommand.swift — `crashwatch export`: one report in a format: as stored (JSON), as text, as one
// self-contained HTML page, as the OTLP request `ship` would send, or as the Sentry event `ship --sentry` would send.
import CrashwatchRender
import CrashwatchSystem

enum ExportCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch export [OPTIONS] REPORT",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("format", value: "FORMAT", help: "json (default: the report as stored), text (the show page without color), html (one self-contained page for a browser or a ticket), otlp (what 'ship' sends: an OTLP/JSON ExportLogsServiceRequest), or sentry (the event 'ship --sentry' sends, without an environment)"),
        ],
        about: """
            Writes one report to standard output in the chosen format. REPORT is an id (or a unique prefix),
            a report file, or latest (the latest you may read; newer ones you may not read are counted in one
            line on stderr).
            """,
        after: "Exit status: 0 written, 64 usage error, 65 not a report, 66 no such report, 74 the spool cannot be read.")

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 1...1, arguments) { parsed, settings throws(CommandFailure) in
            let format = try checkingUsage { () throws(UsageError) in
                try OptionValue.choice(parsed.value("format") ?? "json", option: "format", among: ["json", "text", "html", "otlp", "sentry"])
            }
            let argument = parsed.operands[0]
            let bytes = try reportBytes(argument, settings: settings)
            let report = try decodeReport(bytes, argument)
            switch format {
            case "json": StandardStream.out(String(decoding: bytes, as: UTF8.self))
            case "otlp":
                let request = OTLPLogs.request(for: report, reportText: bytes, scope: OTLPLogs.Scope(version: CLI.version))
                StandardStream.out(String(decoding: request, as: UTF8.self) + "\n")
            case "html": StandardStream.out(HTMLExport.render(report))
            case "sentry":
                let event = SentryEvent.event(for: report, settings: SentryEvent.Settings(version: CLI.version))
                StandardStream.out(String(decoding: event, as: UTF8.self) + "\n")
            default: StandardStream.out(TextExport.render(report))
            }
            return ExitCode.success
        }
    }
}
