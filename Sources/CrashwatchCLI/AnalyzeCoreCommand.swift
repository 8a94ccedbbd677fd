// AnalyzeCoreCommand.swift — `crashwatch analyze-core CORE`: the report of a crash from its core dump,
// through the same processing as a live capture (CoreFile is a capture source like the held process).
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSymbols
import CrashwatchSystem
import FoundationEssentials
import Glibc

enum AnalyzeCoreCommand {
    static let specs: [OptionSpec] = SpoolSettings.locationSpecs + [
        OptionSpec("output", short: "o", value: "FILE", help: "write the report to FILE instead of the spool"),
        OptionSpec("exe", value: "PATH", help: "the crashed program's executable, when the path the core names is not it (moved, rebuilt elsewhere)"),
        OptionSpec("sysroot", value: "DIR", help: "find the image files under DIR (a copy of the crashed machine's files); report paths stay as the core has them"),
    ] + RunCommand.specs.filter { RunCommand.processingOptionNames.contains($0.name) } + [
        OptionSpec("help", short: "h", help: "show this help"),
    ]
    static let usage = "crashwatch analyze-core [OPTIONS] CORE"
    static let help = """
        Usage: \(usage)

        Builds the report of a crash from its core dump (x86-64 or aarch64, as the kernel writes them): every
        thread with its registers (NT_PRSTATUS; the thread that took the signal is the crashed one), the
        signal (NT_SIGINFO), the process (NT_PRPSINFO: pid, uid, comm, the first 80 bytes of the command
        line), the images (NT_FILE, build-ids from the dumped memory), unwound and symbolized by the same
        processing as 'crashwatch run', with the image files found on this machine (a file whose build-id
        differs is not used). The report says "source": "core"; its time is the core file's modification
        time, and its host is this machine. It goes to the spool (or -o FILE), and its path is printed.

        Options:
        \(renderOptions(specs))

        Exit status: 0 written, 64 usage error, 65 not a core dump, 66 the core cannot be read, 73 the report
        cannot be written.

        """

    /// The largest core mapped.
    static let coreByteLimit = 1 << 40

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(usage: usage, help: help, specs: specs, operands: 1...1, arguments) { parsed, settings throws(CommandFailure) in
            var options = CaptureOptions(crashwatchVersion: CLI.version)
            do throws(UsageError) { try RunCommand.applyProcessingOptions(parsed, to: &options) } catch {
                return CLI.usageFailure(error, usage: usage, helpCommand: "crashwatch analyze-core --help")
            }
            let sysroot = parsed.value("sysroot").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
            if let sysroot, !sysroot.hasPrefix("/") {
                return CLI.usageFailure(UsageError("--sysroot needs an absolute path, not '\(sysroot)'"), usage: usage,
                                        helpCommand: "crashwatch analyze-core --help")
            }
            let path = parsed.operands[0]
            let core: OwnedDescriptor
            let executable: OwnedDescriptor?
            do throws(SystemError) {
                core = try UntrustedFile.open(path, followLinks: true)
                if let exe = parsed.value("exe") { executable = try UntrustedFile.open(exe, followLinks: true) } else { executable = nil }
            } catch {
                throw CommandFailure("cannot read \(error)", status: ExitCode.noInput)
            }
            let time = core.modificationNanoseconds() ?? Clock.realtimeNanoseconds()
            let source: CoreFile
            do {
                source = try CoreFile(core, limit: coreByteLimit, timeNanoseconds: time, options: options,
                                      deadlineNanoseconds: Int64.max, executableFile: executable != nil,
                                      sysroot: sysroot)
            } catch {
                throw CommandFailure("\(path): \(error)", status: ExitCode.dataError)
            }
            // Processing unwinds with the host's libunwind: another architecture's stacks would come out wrong.
            guard source.capture.architecture == .host else {
                throw CommandFailure("\(path): a core dump of an \(source.capture.architecture.rawValue) process; this crashwatch "
                                     + "unwinds \(Architecture.host.rawValue) only (analyze it on an \(source.capture.architecture.rawValue) machine)",
                                     status: ExitCode.dataError)
            }
            var bytes: [UInt8]
            do {
                let processor = try CaptureProcessor(source: source, passedFiles: executable.map { [$0] } ?? [])
                var builder = ReportBuilder(capture: source.capture, processor: processor)
                var report = builder.build(unwound: { _ in })
                report.crashwatchVersion = CLI.version
                bytes = try ReportSizeLimit.encode(report, limit: source.capture.options.reportByteLimit)
            } catch {
                throw CommandFailure("\(path): processing failed: \(error)", status: ExitCode.dataError)
            }
            if let output = parsed.value("output") {
                do { try FileSystem.writeAtomically(bytes, to: output) } catch {
                    throw CommandFailure("cannot write \(output): \(error)", status: ExitCode.cannotCreate)
                }
                StandardStream.out(output + "\n")
                return ExitCode.success
            }
            let capture = source.capture
            let name = ReportFileName(timeNanoseconds: capture.timeNanoseconds, pid: capture.pid,
                                      executable: capture.process.executable,
                                      id: UUID(uuidString: capture.reportID) ?? UUID())
            do throws(SpoolError) {
                let spool = try Spool(path: settings.spool)
                StandardStream.out(try spool.write(bytes: bytes, name: name) + "\n")
            } catch {
                throw CommandFailure("\(error)", status: ExitCode.cannotCreate)
            }
            return ExitCode.success
        }
    }
}
