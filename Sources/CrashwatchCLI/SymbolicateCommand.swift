// SymbolicateCommand.swift — `crashwatch symbolicate REPORT`: fills in names, source lines and inline
// frames of a report offline, matching images by build-id only, and writes the result.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchModel
import CrashwatchSystem

/// Checks `--debug-dir` values.
enum DebugDirectories {
    /// The directories, each required to be an absolute path.
    static func validated(_ directories: [String]) throws(UsageError) -> [String] {
        for directory in directories where !directory.hasPrefix("/") || directory.contains(":") {
            throw UsageError("--debug-dir needs an absolute directory without ':', not '\(directory)'")
        }
        return directories
    }
}

/// `crashwatch symbolicate REPORT [--debug-dir DIR]... [-o OUT]`.
enum SymbolicateCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch symbolicate [OPTIONS] REPORT",
        options: [
            OptionSpec("debug-dir", value: "DIR", repeatable: true, help: "look for separate debug info under DIR (DIR/.build-id/xx/rest[.debug]) before /usr/lib/debug"),
            OptionSpec("output", short: "o", value: "FILE", help: "write the symbolicated report to FILE (atomically) instead of standard output"),
        ],
        about: """
            Fills in function names, source file:line:column and inline frames of a crash report after the
            fact, for example when a stripped binary's debug file arrives later. Each image is matched by
            build-id only: a file is used when its own build-id note equals the one the report recorded,
            never because of its path, so a debug file of another build is refused (and said so in the
            report's softErrors). Search order for each image: the path the report recorded, each
            --debug-dir, /usr/lib/debug (as DIR/.build-id/xx/rest.debug or DIR/.build-id/xx/rest), then
            debuginfod servers when DEBUGINFOD_URLS is set.
            """,
        after: """
            Exit status:
              0    the report was written (frames that could not be matched keep what they had)
              64   usage error
              65   REPORT is not a crashwatch report this version can read
              66   REPORT cannot be read
              73   the output file cannot be written
            """)

    static func main(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        let directories: [String]
        do throws(UsageError) {
            parsed = try parseArguments(arguments, specs: syntax.specs, operandsEndOptions: false)
            if parsed.has("help") {
                StandardStream.out(syntax.help)
                return ExitCode.success
            }
            guard parsed.operands.count == 1 else {
                throw UsageError(parsed.operands.isEmpty ? "no report given" : "one report at a time, not \(parsed.operands.count)")
            }
            directories = try DebugDirectories.validated(parsed.all("debug-dir"))
        } catch {
            return syntax.failure(error)
        }
        let input = parsed.operands[0]
        let bytes: [UInt8]
        do {
            bytes = try UntrustedFile.readWhole(input, limit: 256 << 20)
        } catch {
            StandardStream.err("crashwatch: cannot read report \(input): \(error.isNotRegularFile ? "not a regular file" : error.reason)\n")
            return ExitCode.noInput
        }
        let report: CrashReport
        do {
            report = try CrashReport.decode(bytes)
        } catch {
            StandardStream.err("crashwatch: \(input) is not a crash report: \(error)\n")
            return ExitCode.dataError
        }
        let symbolicated = Resymbolication.symbolicate(report, debugDirectories: directories,
                                                        useDebuginfod: !(ProcessEnvironment.current["DEBUGINFOD_URLS"] ?? "").isEmpty)
        let output: [UInt8]
        do {
            output = try symbolicated.fingerprinted().encodedJSON()
        } catch {
            StandardStream.err("crashwatch: cannot encode the symbolicated report: \(error)\n")
            return ExitCode.dataError
        }
        guard let path = parsed.value("output") else {
            StandardStream.out(String(decoding: output, as: UTF8.self))
            return ExitCode.success
        }
        do {
            try FileSystem.writeAtomically(output, to: path)
        } catch {
            StandardStream.err("crashwatch: cannot write \(path): \(error.reason)\n")
            return ExitCode.cannotCreate
        }
        return ExitCode.success
    }
}
