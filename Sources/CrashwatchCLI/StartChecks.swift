// StartChecks.swift — what `run` checks before the program starts, and says at once rather than at the first
// crash: the settings file's problems (what could not be read is left out, the defaults stand) and a spool
// that cannot take a report (a runtime spool is used instead). Neither is a reason not to run the program: a
// service must not fail because of its crash reporter.
import CrashwatchSpool
import CrashwatchSystem

enum StartChecks {
    /// Says, in one line, what of the settings file was left out.
    static func announce(settingsProblems problems: [String]) {
        guard !problems.isEmpty else { return }
        warn("settings left out, their defaults used: " + problems.joined(separator: "; "))
    }

    /// The spool `run` writes to: `path` when it can take a report now (`Spool.openForWriting`), else the
    /// runtime fallback (`SpoolLocation.fallback`) when that can, said at once; else `path` still, said at
    /// once too (crashes are then named on stderr and in the journal, their reports not written until the
    /// spool is fixed).
    static func usableSpool(_ path: String, environment: [String: String] = ProcessEnvironment.current) -> String {
        let problem: SpoolError
        do throws(SpoolError) {
            _ = try Spool.openForWriting(path)
            return path
        } catch {
            problem = error
        }
        guard let fallback = SpoolLocation.fallback(environment: environment, isRoot: SelfProcess.isRoot), fallback != path else {
            warn("\(problem); crash reports cannot be written (crashes are still named on stderr)")
            return path
        }
        do throws(SpoolError) {
            _ = try Spool.openForWriting(fallback)
        } catch {
            warn("\(problem); the fallback spool cannot be used either (\(error)): crash reports cannot be written (crashes are still named on stderr)")
            return path
        }
        warn("\(problem); crash reports go to \(fallback) instead, which does not outlive a reboot")
        return fallback
    }

    /// One line on stderr and, when journald listens, an entry at warning priority.
    static func warn(_ message: String) {
        StandardStream.err("crashwatch: \(message)\n")
        let fields = [("PRIORITY", "4"), ("SYSLOG_IDENTIFIER", "crashwatch"), ("MESSAGE", "crashwatch: " + message)]
        _ = Journal.send(fields.compactMap { JournalField($0.0, $0.1) })
    }
}
