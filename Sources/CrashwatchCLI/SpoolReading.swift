// SpoolReading.swift — what the commands that read the spool share: finding the report an argument names,
// reading reports (a file that is not one is quarantined with its reason, and never stops a listing), the
// line about reports this user may not read, `--since` and the output style.
import CrashwatchRender
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem
import FoundationEssentials

/// The style for output on standard output: color and width when it is a terminal (and NO_COLOR unset).
func outputStyle(_ parsed: ParsedArguments) -> Style {
    var style = Style(isTerminal: Terminal.isTerminal(1), environment: ProcessEnvironment.current, width: Terminal.columns(1))
    switch parsed.value("color") {
    case "always": style.color = true
    case "never": style.color = false
    default: break
    }
    return style
}

/// Reads and decodes one report of the spool, quarantining it (and saying so) when it is not one; a report
/// this user may not read (another user's, 0640, outside their group) is counted in `unreadable`, not
/// quarantined: it is a good report, for someone else.
func load(_ name: ReportFileName, from spool: Spool, unreadable: inout Int) -> CrashReport? {
    let reason: String
    do {
        return try CrashReport.decode(try spool.read(name))
    } catch let error as SpoolError {
        if case .readReport(_, _, let system) = error {
            if system.isPermissionDenied { unreadable += 1 }
            return nil  // else gone meanwhile (pruned, claimed): not a bad file
        }
        if case .notARegularFile = error { return nil }  // a link or directory under a report's name: never followed
        reason = "\(error)"
    } catch {
        reason = "not a valid report: \(error)"
    }
    do {
        try spool.quarantine(name: name.text, reason: reason)
        StandardStream.err("crashwatch: quarantined \(name.text): \(reason)\n")
    } catch {
        StandardStream.err("crashwatch: \(name.text) is unreadable (\(reason)) and could not be quarantined: \(error)\n")
    }
    return nil
}

/// The one line about reports this user may not read, with the fix: `3 reports in /var/lib/crashwatch/reports
/// are not readable by you (join the crashwatch group, or use sudo)`; `newer` says they are newer than the
/// one shown.
/// Joining the readers' group is suggested only when the spool is a readers'-group spool (its reports take
/// its group): for a spool of group root, joining would not help.
func unreadableReportsLine(_ count: Int, spool: String, newer: Bool = false) -> String {
    let what = count == 1 ? "1 \(newer ? "newer " : "")report in \(spool) is" : "\(count) \(newer ? "newer " : "")reports in \(spool) are"
    let readers = groupID(named: Spool.readerGroupName)
    guard let status = try? FileSystem.status(spool), readers != nil, status.groupID == readers, status.isSetGroupID else {
        return "\(what) not readable by you (use sudo; a spool of group \(Spool.readerGroupName) with the set-group-ID bit lets its members read every report: README \"The spool\")"
    }
    return "\(what) not readable by you (join the \(Spool.readerGroupName) group, or use sudo)"
}

/// Finds the report an argument names: `latest`, a file path (with a `/`), a report file name in the
/// spool, or a unique prefix of a report id. Returns its bytes.
func reportBytes(_ argument: String?, settings: SpoolSettings, fingerprint: String? = nil) throws(CommandFailure) -> [UInt8] {
    if let argument, argument.contains("/") {
        // A FIFO or device there would block or never end: only a regular file, opened without blocking.
        do { return try UntrustedFile.readWhole(argument, limit: Spool.defaultMaxReadBytes) } catch {
            throw CommandFailure("cannot read report \(argument): \(error.isNotRegularFile ? "not a regular file" : error.reason)",
                                 status: ExitCode.noInput)
        }
    }
    do {
        let spool = try settings.open()
        let name: ReportFileName
        if argument == nil || argument == "latest" {
            return try latestReportBytes(in: spool, settings: settings,
                                         absent: fingerprint.map { "no crash report with fingerprint \($0) in \(settings.spool)" }) { report in
                fingerprint.map { hasFingerprint(report, $0) } ?? true
            }
        } else if let argument, argument.hasSuffix(ReportFileName.suffix) {
            name = try spool.validatedName(argument)
        } else {
            name = try spool.find(idPrefix: argument!)
        }
        return try spool.read(name)
    } catch let error as SpoolError {
        throw CommandFailure(error)
    } catch let error as CommandFailure {
        throw error
    } catch {
        throw CommandFailure("\(error)", status: ExitCode.ioError)
    }
}

/// The bytes of the newest report for which `admits` holds. A corrupt or foreign file under a newer name is
/// quarantined (and said so), as `list` does, and the next newest taken; newer reports this user may not read
/// are skipped too, and said so: the one shown is then not the newest there is. `absent` is the message when
/// none is found (default: no crash reports in the spool).
func latestReportBytes(in spool: Spool, settings: SpoolSettings, absent: String? = nil,
                       admits: (CrashReport) -> Bool) throws(CommandFailure) -> [UInt8] {
    var unreadable = 0
    for entry in try usingSpool({ () throws(SpoolError) in try spool.reports() }).reversed() {
        if let report = load(entry.name, from: spool, unreadable: &unreadable), admits(report), let bytes = try? spool.read(entry.name) {
            if unreadable > 0 {
                StandardStream.err("crashwatch: \(unreadableReportsLine(unreadable, spool: settings.spool, newer: true))\n")
            }
            return bytes
        }
    }
    if unreadable > 0 { throw CommandFailure(unreadableReportsLine(unreadable, spool: settings.spool), status: ExitCode.ioError) }
    throw CommandFailure(absent ?? "no crash reports in \(settings.spool)", status: ExitCode.noInput)
}

/// Decodes report bytes, or fails with the data-error status.
func decodeReport(_ bytes: [UInt8], _ argument: String?) throws(CommandFailure) -> CrashReport {
    do { return try CrashReport.decode(bytes) } catch {
        throw CommandFailure("\(argument ?? "latest") is not a crash report: \(error)", status: ExitCode.dataError)
    }
}

/// A `--fingerprint` value: 4 to 32 hex digits (a prefix of a fingerprint), in lower case.
func fingerprintPrefix(_ text: String, option: String) throws(UsageError) -> String {
    let lowered = text.lowercased()
    guard (4...32).contains(lowered.utf8.count), lowered.utf8.allSatisfy({ Hex.nibble($0) != nil }) else {
        throw UsageError("--\(option) needs 4 to 32 hex digits of a fingerprint, not \(text)")
    }
    return lowered
}

/// Whether `report`'s fingerprint (computed for a report written before fingerprints) starts with `prefix`.
func hasFingerprint(_ report: CrashReport, _ prefix: String) -> Bool {
    (report.fingerprint ?? Fingerprint.of(report)).value.hasPrefix(prefix)
}
