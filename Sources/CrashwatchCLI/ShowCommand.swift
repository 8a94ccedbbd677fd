// ShowCommand.swift — `crashwatch show`: one report for people, like coredumpctl info (or the JSON itself),
// picked by id, file, PID or MATCHes; `--brief` and `--thread` for shorter pages; a pager on a terminal.
import CrashwatchModel
import CrashwatchRender
import CrashwatchSpool
import CrashwatchSystem

enum ShowCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch show [OPTIONS] [ID|FILE|PID|MATCH...|latest]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("json", help: "print the report itself (JSON)"),
            OptionSpec("brief", help: "the headline and the crashed thread's frames only (no annotations)"),
            OptionSpec("thread", value: "TID", help: "the header and thread TID only, with its registers"),
            OptionSpec("breadcrumbs", value: "N", help: "the newest N breadcrumbs on the page (default 20; all; 0 for none)"),
            OptionSpec("no-pager", help: "never pipe the output into a pager"),
            OptionSpec("color", value: "WHEN", help: "auto (default), always or never"),
            OptionSpec("fingerprint", value: "F", help: "the latest report whose fingerprint starts with F (4 to 32 hex digits)"),
        ],
        about: """
            Shows one crash report for people, like coredumpctl info: what crashed, when, the signal and fault
            address, app and host; the crashed thread's frames first (in-app frames marked *), then what the app
            declared (its annotations, its newest 20 breadcrumbs, or --breadcrumbs N), then the other threads,
            then the images. ID is a report id or a unique prefix of one; FILE a report file (a path with a '/'
            that is not an executable, or a file name in the spool); PID (digits) the latest report of that
            process (else a report id starting with those digits); MATCHes, as list takes them (an executable
            path or name, unit=, kind=, uid=, signal=), the latest report they all match. The default is the
            latest report you may read (newer ones you may not read are counted in one line on stderr). With
            --fingerprint, the latest report of that crash group. On a terminal the page goes through a pager,
            as systemd's tools do: $SYSTEMD_PAGER, else $PAGER, else less -FRSX (an empty value or cat: none);
            never when stdout is not a terminal, or with --no-pager.
            """,
        after: """
            Exit status: 0 shown, 64 usage error, 65 not a report, 66 no such report (or no such thread),
            74 the spool cannot be read.
            """)

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...Int.max, arguments) { parsed, settings throws(CommandFailure) in
            let operands = parsed.operands
            let (fingerprint, thread, breadcrumbs) = try checkingUsage { () throws(UsageError) -> (String?, Int32?, Int) in
                let prefix = try parsed.value("fingerprint") { text, option throws(UsageError) in try fingerprintPrefix(text, option: option) }
                if prefix != nil, !(operands.isEmpty || operands == ["latest"]) { throw UsageError("--fingerprint picks the report: give no ID or FILE") }
                let thread = try parsed.value("thread") { text, option throws(UsageError) -> Int32 in
                    guard let tid = Int32(text), tid > 0 else { throw UsageError("--\(option) takes a thread id, not '\(text)'") }
                    return tid
                }
                if parsed.has("brief") && (thread != nil || parsed.has("json")) {
                    throw UsageError("--brief cannot be combined with --thread or --json")
                }
                if thread != nil && parsed.has("json") { throw UsageError("--thread cannot be combined with --json") }
                let breadcrumbs = try parsed.value("breadcrumbs") { text, option throws(UsageError) -> Int in
                    if text == "all" { return Int.max }
                    guard let count = Int(text), count >= 0 else { throw UsageError("--\(option) takes a count or 'all', not '\(text)'") }
                    return count
                }
                if breadcrumbs != nil && (thread != nil || parsed.has("brief") || parsed.has("json")) {
                    throw UsageError("--breadcrumbs is for the full page: it cannot be combined with --brief, --thread or --json")
                }
                return (prefix, thread, breadcrumbs ?? ShowRenderer.defaultBreadcrumbs)
            }
            let bytes = try pickedReport(operands, settings: settings, fingerprint: fingerprint)
            let report = try decodeReport(bytes, operands.first)
            let style = outputStyle(parsed)
            let text: String
            if parsed.has("json") {
                text = String(decoding: bytes, as: UTF8.self)
            } else if parsed.has("brief") {
                text = ShowRenderer.renderBrief(report, style: style)
            } else if let thread {
                guard let page = ShowRenderer.renderThread(thread, of: report, style: style) else {
                    let tids = report.threads.map { String($0.tid) }.joined(separator: ", ")
                    throw CommandFailure("report \(report.id) has no thread \(thread) (threads: \(tids))", status: ExitCode.noInput)
                }
                text = page
            } else {
                text = ShowRenderer.render(report, style: style, breadcrumbs: breadcrumbs)
            }
            page(text, parsed: parsed)
            return ExitCode.success
        }
    }

    /// The bytes of the report the operands name: see the help text. One operand that is `latest`, a
    /// report file or an id prefix names one report; otherwise the operands are MATCHes and the latest
    /// report they all hold for is taken (a lone PID that matches none is tried as an id prefix).
    static func pickedReport(_ operands: [String], settings: SpoolSettings, fingerprint: String?) throws(CommandFailure) -> [UInt8] {
        if operands.count == 1, let only = operands.first, namesOneReport(only) {
            return try reportBytes(only, settings: settings, fingerprint: fingerprint)
        }
        if operands.isEmpty { return try reportBytes(nil, settings: settings, fingerprint: fingerprint) }
        let matches = try checkingUsage { () throws(UsageError) in try operands.map(ReportMatch.parse) }
        let spool = try usingSpool { () throws(SpoolError) in try settings.open() }
        do {
            return try latestReportBytes(in: spool, settings: settings,
                                         absent: "no crash report matching \(operands.joined(separator: " ")) in \(settings.spool)") { report in
                ReportMatch.all(matches, hold: report)
            }
        } catch where error.status == ExitCode.noInput && operands.count == 1 && operands[0].allSatisfy(\.isHexDigit) {
            if let bytes = try? reportBytes(operands[0], settings: settings) { return bytes }
            throw error
        }
    }

    /// Whether one operand names a report rather than being a MATCH: `latest`, a report file name, a path to
    /// something that is not an executable (ELF), or an id prefix (hex digits and dashes, not all digits).
    static func namesOneReport(_ operand: String) -> Bool {
        if operand == "latest" || operand.hasSuffix(ReportFileName.suffix) { return true }
        if operand.contains("=") { return false }
        if operand.contains("/") {
            guard let head = try? UntrustedFile.readPrefix(operand, limit: 4, followLinks: true) else { return false }
            return head != [0x7F, 0x45, 0x4C, 0x46]
        }
        let isDigits = operand.allSatisfy { $0.isASCII && $0.isNumber }
        return !isDigits && operand.allSatisfy { $0.isHexDigit || $0 == "-" } && operand.contains { $0.isHexDigit }
    }

    /// Prints `text`, through the pager when stdout is a terminal and --no-pager was not given.
    static func page(_ text: String, parsed: ParsedArguments) {
        let environment = ProcessEnvironment.current
        if !parsed.has("no-pager"), Terminal.isTerminal(1), let command = Pager.command(environment: environment),
           Pager.show(text, command: command, environment: environment) {
            return
        }
        StandardStream.out(text)
    }
}
