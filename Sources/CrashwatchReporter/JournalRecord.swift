// JournalRecord.swift — the journal entry crashwatch writes for each report it puts in the spool, in the manner
// of systemd-coredump's: a fixed MESSAGE_ID for every crashwatch record (`journalctl MESSAGE_ID=…` finds them
// all), a priority by kind, a one-line MESSAGE, and CRASHWATCH_* fields naming the report and the process, so
// `journalctl CRASHWATCH_EXE=/usr/bin/app` or `-u x.service` leads to the report's file. Only fields a client
// may send (no `_` prefix: journald adds the trusted ones itself, naming crashwatch as the sender).
import CrashwatchModel
import CrashwatchRender
import CrashwatchSystem

/// The journal record of one report in the spool.
public enum JournalRecord {
    /// The MESSAGE_ID of every crashwatch record (a random 128-bit id, as journald catalogs expect).
    static let messageID = "d7e5caf9ec8a4875a8d4176d5e7785c8"

    /// Sends the record of `report`, written at `path`, to journald; true when journald has it. False when
    /// there is no journald or sending failed: the caller then says so on stderr. Never blocks.
    static func send(report: CrashReport, path: String) -> Bool {
        deliver(report: report, path: path) == .sent
    }

    /// Sends the record of the final report `bytes` (well-formed, as the supervisor accepted them), written at
    /// `path`; see `send(report:path:)`. Decodes only what the record shows (`headlineReport`).
    static func send(reportBytes bytes: [UInt8], path: String) -> Bool {
        guard let report = headlineReport(bytes) else { return false }
        return send(report: report, path: path)
    }

    /// The report as far as its record needs it: every member but the threads other than the crashed one and the
    /// process's main thread (the record names a frame of one of them, or of the original fault, which stays).
    /// Decoding a 1,001-thread report (2.9 MB) whole for a dozen fields took 17 MB of the supervisor's memory at
    /// its peak; the decoder drops each other thread as soon as it is read. Nil when the bytes are not a report.
    static func headlineReport(_ bytes: [UInt8]) -> CrashReport? {
        try? CrashReport.decode(bytes, threads: .crashedAndMain)
    }

    /// Sends a line about supervision itself (`supervisorNotice`) as an entry of its own: PRIORITY 4, the line
    /// without its `crashwatch: ` prefix as MESSAGE, and MESSAGE_ID `noticeMessageID`. Never blocks; no journald,
    /// no entry (the line went to stderr too).
    @discardableResult
    static func sendNotice(_ line: String, socketPath: String = Journal.socketPath) -> JournalSendResult {
        let message = line.hasPrefix("crashwatch: ") ? String(line.dropFirst("crashwatch: ".count)) : line
        let fields = [("MESSAGE_ID", noticeMessageID), ("PRIORITY", "4"), ("SYSLOG_IDENTIFIER", "crashwatch"), ("MESSAGE", message)]
            .compactMap { JournalField($0.0, $0.1) }
        return Journal.send(fields, socketPath: socketPath)
    }

    /// The MESSAGE_ID of crashwatch's notices about supervision itself (not reports).
    static let noticeMessageID = "4b8f2ad3c17e4e0f9a6d5c2e8b1f7a30"

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
