// ClaimCommand.swift — `crashwatch claim`: takes the oldest unclaimed reports for a reader (a shipper), and
// `--holder`, which `ack` and `release` take too.
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

enum ClaimCommand {
    static let holderSpec = OptionSpec("holder", value: "PID", help: "the process the claim is for (default: the parent process, the shell or script that runs crashwatch)")

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
            The claim is held by a process: --holder PID, by default the parent process — the shell or
            script that runs 'crashwatch claim', so three claims in a row from one script take three reports,
            and its 'crashwatch ack'/'release' (same default) may settle them; when that script exits, its
            claims go stale and are taken again. A parent that is PID 1 (crashwatch started by init or
            systemd directly) never exits: give --holder then. In a command substitution that runs in a
            short-lived subshell, pass --holder $$.
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

    /// `--holder PID`: the live process the claim is for; by default the parent process (the shell or script
    /// that runs crashwatch, which outlives this command: a claim held by crashwatch itself would go stale
    /// as it exits). A parent that is PID 1 never exits, so its claims would never go stale: refused.
    static func holder(_ parsed: ParsedArguments) throws(CommandFailure) -> ClaimHolder? {
        guard let text = parsed.value("holder") else {
            let parent = SelfProcess.parentPID
            guard parent > 1 else {
                throw CommandFailure("the parent process is PID 1, which would hold the claim forever: give --holder PID", status: ExitCode.usage)
            }
            do throws(SystemError) { return try ClaimHolder(process: parent) } catch {
                throw CommandFailure("the parent process \(parent) as claim holder: \(error)", status: ExitCode.ioError)
            }
        }
        guard let pid = Int32(text), pid > 0 else { throw CommandFailure("--holder needs a process id, not '\(text)'", status: ExitCode.usage) }
        do throws(SystemError) { return try ClaimHolder(process: pid) } catch {
            throw CommandFailure("--holder \(pid): \(error)", status: ExitCode.usage)
        }
    }
}
