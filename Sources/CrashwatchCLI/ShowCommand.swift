// ShowCommand.swift — `crashwatch show`: one report for people, like coredumpctl info (or the JSON itself).
import CrashwatchRender
import CrashwatchSystem

enum ShowCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch show [OPTIONS] [ID|FILE|latest]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("json", help: "print the report itself (JSON)"),
            OptionSpec("color", value: "WHEN", help: "auto (default), always or never"),
            OptionSpec("fingerprint", value: "F", help: "the latest report whose fingerprint starts with F (4 to 32 hex digits)"),
        ],
        about: """
            Shows one crash report for people, like coredumpctl info: what crashed, when, the signal and fault
            address, app and host; the crashed thread's frames first (in-app frames marked *), then the other
            threads, then the images. ID is a report id or a unique prefix of one; FILE a report file (a
            path with a '/', or a file name in the spool); the default is the latest report you may read
            (newer ones you may not read are counted in one line on stderr). With --fingerprint, the latest
            report of that crash group (crashwatch list --group).
            """,
        after: "Exit status: 0 shown, 64 usage error, 65 not a report, 66 no such report, 74 the spool cannot be read.")

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...1, arguments) { parsed, settings throws(CommandFailure) in
            let argument = parsed.operands.first
            let fingerprint = try checkingUsage { () throws(UsageError) -> String? in
                let prefix = try parsed.value("fingerprint") { text, option throws(UsageError) in try fingerprintPrefix(text, option: option) }
                if prefix != nil, let argument, argument != "latest" { throw UsageError("--fingerprint picks the report: give no ID or FILE") }
                return prefix
            }
            let bytes = try reportBytes(argument, settings: settings, fingerprint: fingerprint)
            let report = try decodeReport(bytes, argument)
            StandardStream.out(parsed.has("json") ? String(decoding: bytes, as: UTF8.self)
                                                  : ShowRenderer.render(report, style: outputStyle(parsed)))
            return ExitCode.success
        }
    }
}
