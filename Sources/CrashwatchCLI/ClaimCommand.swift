// ClaimCommand.swift — `crashwatch claim`: takes the oldest unclaimed reports for a reader (a shipper), and
// `--holder`, which `ack` and `release` take too.
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

enum ClaimCommand {
    static let holderSpec = OptionSpec("holder", value: "PID", help: "claim on behalf of process PID (default: this process, so the claim goes stale when it exits)")

    static let syntax = CommandSyntax(
        usage: "crashwatch claim [OPTIONS]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("limit", short: "n", value: "N", help: "claim up to N reports, oldest first (default 1)"),
            OptionSpec("json", help: "print a JSON array of {id, name, path}"),
            holderSpec,
        ],
        about: """
            Takes the oldest unclaimed reports for a reader (a shipper), so no other reader takes them: each
            moves to the spool's .claims/ folder under the holder's pid and start time. Prints "ID PATH" per
            claimed report (nothing when there is none). Finish with 'crashwatch ack ID' once the receiver
            confirmed, or 'crashwatch release ID' to give it back. A claim whose holder died is claimable
            again, and taken first. A minimal report whose crashwatch is still making the full report is
            left until the full one replaces it. A report another user wrote is taken only when its name,
            owner and content agree (see the README's spool trust model); others are left where they are.
            """,
        after: "Exit status: 0 done (also when nothing was claimable), 64 usage error, 74 the spool cannot be changed.")

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...0, arguments) { parsed, settings throws(CommandFailure) in
            let limit = try checkingUsage { () throws(UsageError) in try parsed.value("limit", OptionValue.count) ?? 1 }
            let holder = try self.holder(parsed)
            let claims = try usingSpool { () throws(SpoolError) in try settings.open().claim(limit: limit, holder: holder) }
            if parsed.has("json") {
                let items = claims.map { claim in
                    var json = JSONWriter(spaced: true)
                    json.object { json in
                        json.member("id", claim.name.idText)
                        json.member("name", claim.name.text)
                        json.member("path", claim.path)
                    }
                    return "  " + String(decoding: json.bytes, as: UTF8.self)
                }
                StandardStream.out(items.isEmpty ? "[]\n" : "[\n" + items.joined(separator: ",\n") + "\n]\n")
            } else {
                StandardStream.out(claims.map { "\($0.name.idText) \($0.path)\n" }.joined())
            }
            return ExitCode.success
        }
    }

    /// `--holder PID`: the live process the claim is for, or nil for this one.
    static func holder(_ parsed: ParsedArguments) throws(CommandFailure) -> ClaimHolder? {
        guard let text = parsed.value("holder") else { return nil }
        guard let pid = Int32(text), pid > 0 else { throw CommandFailure("--holder needs a process id, not '\(text)'", status: ExitCode.usage) }
        do throws(SystemError) { return try ClaimHolder(process: pid) } catch {
            throw CommandFailure("--holder \(pid): \(error)", status: ExitCode.usage)
        }
    }
}
