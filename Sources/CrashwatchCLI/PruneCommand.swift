// PruneCommand.swift — `crashwatch prune`: applies retention to the spool (or says what it would remove).
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

enum PruneCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch prune [OPTIONS]",
        options: SpoolSettings.locationSpecs + SpoolSettings.retentionSpecs + [
            OptionSpec("dry-run", help: "say what would be removed, remove nothing"),
            OptionSpec("json", help: "print one JSON object: removed (name, reason), kept, claimed, foreign, failures (dryRun: true when nothing was removed)"),
        ],
        about: """
            Applies retention to the spool, oldest first: the flood guard (--max-per-exe) first, so one
            executable crashing in a loop cannot evict the others, then --max-age, --max-reports and
            --max-bytes. Claimed reports are never removed (they are named). Temporary files left by writers
            that died more than an hour ago are removed. Only file names are read. Settings come from the
            command line, then the settings file, then the defaults (50 reports).
            """,
        after: "Exit status: 0 done, 64 usage error, 74 the spool cannot be read or a file could not be removed.")

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...0, arguments) { parsed, settings throws(CommandFailure) in
            let policy = try checkingUsage { () throws(UsageError) in try settings.retention(parsed) }
            let spool = try usingSpool { () throws(SpoolError) in try settings.open() }
            if parsed.has("dry-run") {
                let decisions = try usingSpool { () throws(SpoolError) in try spool.retentionDecisions(policy: policy) }
                if parsed.has("json") {
                    StandardStream.out(json(removed: decisions.map { ($0.entry.name.text, "\($0.reason)") }, kept: nil,
                                            claimed: [], foreign: [], failures: [], dryRun: true))
                    return ExitCode.success
                }
                var text = ""
                for decision in decisions { text += "would remove \(decision.entry.name.text) (\(decision.reason))\n" }
                StandardStream.out(text + "\(decisions.count) would be removed\n")
                return ExitCode.success
            }
            let result = try usingSpool { () throws(SpoolError) in try spool.prune(policy: policy) }
            StandardStream.out(parsed.has("json")
                ? json(removed: result.removed.map { ($0.name, "\($0.reason)") }, kept: result.kept.count, claimed: result.skippedClaimed,
                       foreign: result.skippedForeign, failures: result.failures.map { "\($0)" }, dryRun: false)
                : summary(of: result))
            for failure in result.failures { StandardStream.err("crashwatch: \(failure)\n") }
            return result.failures.isEmpty ? ExitCode.success : ExitCode.ioError
        }
    }

    /// What was removed and kept, a line each, then the counts.
    private static func summary(of result: PruneResult) -> String {
        var text = ""
        for file in result.removed { text += "removed \(file.name) (\(file.reason))\n" }
        for name in result.skippedClaimed { text += "kept \(name): claimed by a reader\n" }
        for name in result.skippedForeign { text += "kept \(name): owned by another user, not written by this crashwatch\n" }
        text += "\(result.removed.count) removed, \(result.kept.count) kept"
        if !result.skippedClaimed.isEmpty { text += ", \(result.skippedClaimed.count) claimed" }
        if !result.skippedForeign.isEmpty { text += ", \(result.skippedForeign.count) foreign" }
        return text + "\n"
    }

    /// `prune --json`: one object on one line.
    private static func json(removed: [(String, String)], kept: Int?, claimed: [String], foreign: [String], failures: [String],
                             dryRun: Bool) -> String {
        var json = JSONWriter(spaced: true)
        json.object { json in
            json.member("dryRun", dryRun)
            json.array("removed") { json in
                for (name, reason) in removed {
                    json.object { json in
                        json.member("name", name)
                        json.member("reason", reason)
                    }
                }
            }
            json.member("kept", kept)
            json.member("claimed", strings: claimed)
            json.member("foreign", strings: foreign)
            json.member("failures", strings: failures)
        }
        return String(decoding: json.bytes, as: UTF8.self) + "\n"
    }
}
