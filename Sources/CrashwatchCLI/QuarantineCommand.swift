// QuarantineCommand.swift — `crashwatch quarantine list|show|requeue|drop`: the way out of the quarantine.
// Files a reader could not use are moved to the spool's .quarantine/ with their reason; this lists them,
// prints one, puts one back once it reads as a report again, or deletes one.
import CrashwatchModel
import CrashwatchRender
import CrashwatchSpool
import CrashwatchSystem

enum QuarantineCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch quarantine [OPTIONS] list|show|requeue|drop [NAME|ID]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("json", help: "list: a JSON array (name, kind, bytes, time, reason); requeue, drop: one JSON object"),
        ],
        about: """
            The spool's quarantine: files a reader could not use (not JSON, truncated, another format, too
            large, a link under a report's name), moved to .quarantine/ beside a .reason file. list prints
            one line each, oldest first: when, size, name and reason. show NAME prints the file as it is
            (only a regular file). requeue NAME moves it back into the spool when it reads as a valid report
            whose id is the one in its name (a repaired file, or one a newer crashwatch reads); otherwise it
            stays and the reason is said. drop NAME deletes it and its reason. NAME is the file name or a
            unique prefix of the id in it.
            """,
        after: "Exit status: 0 done, 64 usage error, 65 requeue refused (not a report), 66 no such file, 74 the spool cannot be read or changed.")

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 1...2, arguments) { parsed, settings throws(CommandFailure) in
            let action = parsed.operands[0]
            let argument = parsed.operands.count > 1 ? parsed.operands[1] : nil
            switch (action, argument) {
            case ("list", nil): break
            case ("show", .some), ("requeue", .some), ("drop", .some): break
            case ("list", .some): throw CommandFailure(UsageError("quarantine list takes no NAME"))
            case ("show", nil), ("requeue", nil), ("drop", nil): throw CommandFailure(UsageError("quarantine \(action) needs a NAME or ID"))
            default: throw CommandFailure(UsageError("unknown quarantine action '\(action)': list, show, requeue or drop"))
            }
            let spool: Spool
            do throws(SpoolError) { spool = try settings.open() } catch {
                if error.isMissingSpool && action == "list" { return list([], parsed: parsed, spool: settings.spool) }
                throw CommandFailure(error)
            }
            guard let argument else {
                return list(try usingSpool { () throws(SpoolError) in try spool.quarantined() }, parsed: parsed, spool: settings.spool)
            }
            let file = try usingSpool { () throws(SpoolError) in try spool.findQuarantined(argument) }
            guard let name = ReportFileName(parsing: file.name) else { throw CommandFailure("\(file.name) is not a report name", status: ExitCode.noInput) }
            switch action {
            case "show":
                let bytes = try usingSpool { () throws(SpoolError) in try spool.readQuarantined(name) }
                StandardStream.out(String(decoding: bytes, as: UTF8.self))
            case "requeue":
                switch try usingSpool({ () throws(SpoolError) in try spool.requeueQuarantined(name) }) {
                case .requeued:
                    StandardStream.out(parsed.has("json") ? outcome("requeued", name.text, nil) : "requeued \(name.text)\n")
                case .stillBad(let reason):
                    if parsed.has("json") { StandardStream.out(outcome("refused", name.text, reason)) }
                    throw CommandFailure("\(name.text) stays in quarantine: \(reason)", status: ExitCode.dataError)
                }
            default:
                try usingSpool { () throws(SpoolError) in try spool.dropQuarantined(name) }
                StandardStream.out(parsed.has("json") ? outcome("dropped", name.text, nil) : "dropped \(name.text)\n")
            }
            return ExitCode.success
        }
    }

    /// Prints the quarantine listing, as text or JSON.
    private static func list(_ files: [QuarantinedFile], parsed: ParsedArguments, spool: String) -> Int32 {
        if parsed.has("json") {
            var json = JSONWriter(spaced: true)
            json.array { json in
                for file in files {
                    json.object { json in
                        json.member("name", file.name)
                        json.member("kind", "\(file.kind)")
                        json.member("bytes", file.bytes)
                        json.member("time", file.time)
                        json.member("reason", file.reason)
                    }
                }
            }
            StandardStream.out(String(decoding: json.bytes, as: UTF8.self) + "\n")
            return ExitCode.success
        }
        guard !files.isEmpty else {
            StandardStream.out("No quarantined files in \(printable(spool)).\n")
            return ExitCode.success
        }
        var text = ""
        for file in files {
            text += "\(printable(file.time ?? "-"))  \(file.bytes) bytes  \(printable(file.name))  \(printable(file.reason ?? "(no reason recorded)"))\n"
        }
        StandardStream.out(text)
        return ExitCode.success
    }

    /// `text` with control characters shown as `?`: a reason file is anyone's who can write the spool.
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : Character($0) })
    }

    /// `{"action": …, "name": …, "reason": …}` and a newline.
    static func outcome(_ action: String, _ name: String, _ reason: String?) -> String {
        var json = JSONWriter(spaced: true)
        json.object { json in
            json.member("action", action)
            json.member("name", name)
            json.member("reason", reason)
        }
        return String(decoding: json.bytes, as: UTF8.self) + "\n"
    }
}
