// SymbolicateCommand.swift — `crashwatch symbolicate ID|FILE`: fills in names, source lines and inline
// frames of a report offline, matching images by build-id only, and writes the result: to stdout, to a file,
// or (`--in-place`) over the spool's copy, atomically, with the group index recounted.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

/// Checks `--debug-dir` values.
enum DebugDirectories {
    /// The directories, each made absolute (a relative one is taken from `workingDirectory`); none may hold ':'.
    static func validated(_ directories: [String], workingDirectory: String? = ProcessEnvironment.workingDirectory) throws(UsageError) -> [String] {
        try directories.map { directory throws(UsageError) -> String in
            guard !directory.isEmpty, !directory.contains(":") else {
                throw UsageError("--debug-dir needs a directory without ':', not '\(directory)'")
            }
            if directory.hasPrefix("/") { return directory }
            guard let base = workingDirectory else { throw UsageError("--debug-dir \(directory): the working directory is unknown; give an absolute path") }
            return (base.hasSuffix("/") ? base : base + "/") + directory
        }
    }
}

/// `crashwatch symbolicate ID|FILE [--debug-dir DIR]... [-o OUT | --in-place]`.
enum SymbolicateCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch symbolicate [OPTIONS] ID|FILE|latest",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("debug-dir", value: "DIR", repeatable: true, help: "look for separate debug info under DIR (DIR/.build-id/xx/rest[.debug]) before /usr/lib/debug"),
            OptionSpec("debuginfod", value: "URL", repeatable: true, help: "ask this debuginfod server for missing debug info (none by default; $DEBUGINFOD_URLS is not used)"),
            OptionSpec("output", short: "o", value: "FILE", help: "write the symbolicated report to FILE (atomically) instead of standard output"),
            OptionSpec("in-place", help: "replace the spool's copy of report ID (atomically, same name) and recount its crash group"),
        ],
        about: """
            Fills in function names, source file:line:column and inline frames of a crash report after the
            fact, for example when a stripped binary's debug file arrives later. The report is FILE when such
            a file exists (a path, or a name in the working directory), else a report of the spool as show
            takes it (an id or unique prefix, a report file name, latest). Each image is matched by build-id
            only: a file is used when its own build-id note equals the one the report recorded, never
            because of its path, so a debug file of another build is refused (and said so in the report's
            softErrors). Search order for each image: the path the report recorded, each --debug-dir
            (relative ones from the working directory), /usr/lib/debug (as DIR/.build-id/xx/rest.debug or
            DIR/.build-id/xx/rest), then the debuginfod servers of --debuginfod or the settings file's
            'debuginfod =' — as for run, $DEBUGINFOD_URLS is not used. With --in-place the spool's copy is
            replaced under the same name (a temporary file renamed over it) and its crash group recounted.
            """,
        after: """
            Exit status:
              0    the report was written (frames that could not be matched keep what they had)
              64   usage error
              65   the report is not a crashwatch report this version can read
              66   the report cannot be read (no such file or report)
              73   the output file cannot be written
              74   the spool cannot be read or changed
            """)

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 1...1, arguments) { parsed, settings throws(CommandFailure) in
            let input = parsed.operands[0]
            let (directories, urls) = try checkingUsage { () throws(UsageError) -> ([String], [String]) in
                if parsed.has("in-place") && parsed.value("output") != nil { throw UsageError("--in-place and --output exclude each other") }
                return (try DebugDirectories.validated(parsed.all("debug-dir")), try RunCommand.debuginfodURLs(parsed, settings: settings))
            }
            let isFile = (try? FileSystem.status(input))?.kind == .regular
            if isFile && parsed.has("in-place") {
                throw CommandFailure(UsageError("--in-place replaces a report in the spool: give its id, not the file \(input)"))
            }
            let bytes: [UInt8]
            if isFile {
                do throws(SystemError) { bytes = try UntrustedFile.readWhole(input, limit: 256 << 20) } catch {
                    throw CommandFailure("cannot read report \(input): \(error.isNotRegularFile ? "not a regular file" : error.reason)", status: ExitCode.noInput)
                }
            } else {
                bytes = try reportBytes(input, settings: settings)
            }
            let report = try decodeReport(bytes, input)
            // libdw's debuginfod client reads DEBUGINFOD_URLS: it says what crashwatch was told, nothing else.
            ProcessEnvironment.set("DEBUGINFOD_URLS", urls.isEmpty ? nil : urls.joined(separator: " "))
            let symbolicated = Resymbolication.symbolicate(report, debugDirectories: directories, useDebuginfod: !urls.isEmpty)
            let output: [UInt8]
            do { output = try symbolicated.fingerprinted().encodedJSON() } catch {
                throw CommandFailure("cannot encode the symbolicated report: \(error)", status: ExitCode.dataError)
            }
            if parsed.has("in-place") {
                try replaceInSpool(output, id: report.id, settings: settings)
            } else if let path = parsed.value("output") {
                do throws(SystemError) { try FileSystem.writeAtomically(output, to: path) } catch {
                    throw CommandFailure("cannot write \(path): \(error.reason)", status: ExitCode.cannotCreate)
                }
            } else {
                StandardStream.out(String(decoding: output, as: UTF8.self))
            }
            return ExitCode.success
        }
    }

    /// Writes `bytes` over the spool's report `id` (same name: temporary file, rename) and recounts its group.
    private static func replaceInSpool(_ bytes: [UInt8], id: String, settings: SpoolSettings) throws(CommandFailure) {
        try usingSpool { () throws(SpoolError) -> Void in
            let spool = try settings.open()
            let name = try spool.find(idPrefix: id)
            let status = try? FileSystem.status(spool.path(of: name))
            try spool.write(bytes: bytes, name: name, restricted: status.map { $0.permissions & 0o040 == 0 } ?? false)
            try spool.recordInGroups(reportBytes: bytes, name: name)
            StandardStream.out("symbolicated \(name.text)\n")
        }
    }
}
