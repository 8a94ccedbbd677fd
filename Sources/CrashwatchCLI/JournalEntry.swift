// JournalEntry.swift — the journal entry crashwatch writes for each report it puts in the spool, in the manner
// of systemd-coredump's: a fixed MESSAGE_ID for every crashwatch record (`journalctl MESSAGE_ID=…` finds them
// all), a priority by kind, a one-line MESSAGE, and CRASHWATCH_* fields naming the report and the process, so
// `journalctl CRASHWATCH_EXE=/usr/bin/app` or `-u x.service` leads to the report's file. Only fields a client
// may send (no `_` prefix: journald adds the trusted ones itself, naming crashwatch as the sender).
import CrashwatchModel
import CrashwatchRender
import CrashwatchSystem

/// The journal record of one report in the spool.
enum JournalRecord {
    /// The MESSAGE_ID of every crashwatch record (a random 128-bit id, as journald catalogs expect).
    static let messageID = "d7e5caf9ec8a4875a8d4176d5e7785c8"

    /// Sends the record of `report`, written at `path`, to journald; true when journald has it. False when
    /// there is no journald or sending failed: the caller then says so on stderr. Never blocks.
    static func send(report: CrashReport, path: String) -> Bool {
        deliver(report: report, path: path) == .sent
    }

    /// Sends the record to the journald socket at `socketPath` (tests give their own) and says what became of it.
    static func deliver(report: CrashReport, path: String, socketPath: String = Journal.socketPath) -> JournalSendResult {
        Journal.send(fields(report: report, path: path), socketPath: socketPath)
    }

    /// The record's fields, in this order: MESSAGE_ID, PRIORITY (2 for a crash, 4 for any other kind),
    /// SYSLOG_IDENTIFIER, MESSAGE (`Headline.text`), then CRASHWATCH_REPORT (the file), _REPORT_ID, _KIND,
    /// _SIGNAL, _PID, _EXE, and, when known, _UNIT, _INVOCATION_ID and _FRAME (the function of
    /// `Headline.frame`: the top in-app frame where the fault happened, else the top frame with a function).
    static func fields(report: CrashReport, path: String) -> [JournalField] {
        let process = report.process
        var pairs: [(String, String?)] = [
            ("MESSAGE_ID", messageID),
            ("PRIORITY", report.kind == .crash ? "2" : "4"),
            ("SYSLOG_IDENTIFIER", "crashwatch"),
            ("MESSAGE", Headline.text(report)),
            ("CRASHWATCH_REPORT", path),
            ("CRASHWATCH_REPORT_ID", report.id),
            ("CRASHWATCH_KIND", report.kind.rawValue),
            ("CRASHWATCH_SIGNAL", report.signal.name),
            ("CRASHWATCH_PID", String(process.pid)),
            ("CRASHWATCH_EXE", process.executable),
        ]
        pairs.append(("CRASHWATCH_UNIT", process.systemdUnit))
        pairs.append(("CRASHWATCH_INVOCATION_ID", process.systemdInvocationID))
        pairs.append(("CRASHWATCH_FRAME", Headline.frame(of: report)?.function))
        // Every name above is valid (a unit test checks): only absent and empty values are left out.
        return pairs.compactMap { name, value in
            guard let value, !value.isEmpty else { return nil }
            return JournalField(name, value)
        }
    }
}
