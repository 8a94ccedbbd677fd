// AckReleaseCommands.swift — `crashwatch ack ID` and `crashwatch release ID`: the two ways a reader ends a
// claim (the report removed for good, or given back to the spool); one command shape, two verbs.
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

/// A command that ends a claim by id and says what was done to which report.
struct FinishClaimCommand: Sendable {
    let syntax: CommandSyntax
    /// What was done, for the output line (`acknowledged NAME`).
    let done: String
    let action: @Sendable (Spool, String, ClaimHolder?) throws(SpoolError) -> ReportFileName

    /// `crashwatch VERB [OPTIONS] ID`; `exitZero` says what exit status 0 means.
    init(verb: String, about: String, exitZero: String, done: String,
         action: @escaping @Sendable (Spool, String, ClaimHolder?) throws(SpoolError) -> ReportFileName)
    {
        let json = OptionSpec("json", help: "print {\"action\": \"\(done)\", \"name\": NAME, \"reason\": null} instead of a line")
        syntax = CommandSyntax(usage: "crashwatch \(verb) [OPTIONS] ID", options: SpoolSettings.locationSpecs + [ClaimCommand.holderSpec, json],
                               about: about,
                               after: "Exit status: 0 \(exitZero), 64 usage error, 66 no such claimed report, 74 refused or the spool cannot be changed.")
        self.done = done
        self.action = action
    }

    static let ack = FinishClaimCommand(verb: "ack", about: """
        Removes a claimed report for good, once its receiver confirmed it. ID is the report id or a unique
        prefix. A report claimed by another live process is refused; one whose holder died may be acked.
        The holder is --holder PID, by default the parent process, as for claim.
        """, exitZero: "removed", done: "acknowledged") { spool, id, holder throws(SpoolError) in
        try spool.acknowledge(id: id, holder: holder)
    }

    static let release = FinishClaimCommand(verb: "release", about: """
        Gives a claimed report back to the spool, for another reader (the receiver refused it, or the
        shipper stops). ID is the report id or a unique prefix. The holder is --holder PID, by default the
        parent process, as for claim.
        """, exitZero: "released", done: "released") { spool, id, holder throws(SpoolError) in
        try spool.release(id: id, holder: holder)
    }

    func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 1...1, arguments) { parsed, settings throws(CommandFailure) in
            let holder = try ClaimCommand.holder(parsed)
            let name = try usingSpool { () throws(SpoolError) in try action(try settings.open(), parsed.operands[0], holder) }
            StandardStream.out(parsed.has("json") ? QuarantineCommand.outcome(done, name.text, nil) : "\(done) \(name.text)\n")
            return ExitCode.success
        }
    }
}
