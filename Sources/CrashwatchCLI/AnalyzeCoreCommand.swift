// AnalyzeCoreCommand.swift — `crashwatch analyze-core CORE`: the report of a crash from its core dump,
// through the same processing as a live capture (`CoreReports.analyze`). Here: the arguments, opening the
// files they name, the messages and the exit status.
import CrashwatchCapture
import CrashwatchReporter
import CrashwatchSystem

enum AnalyzeCoreCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch analyze-core [OPTIONS] CORE",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("output", short: "o", value: "FILE", help: "write the report to FILE instead of the spool"),
            OptionSpec("exe", value: "PATH", help: "the crashed program's executable, when the path the core names is not it (moved, rebuilt elsewhere) or it names none"),
            OptionSpec("sysroot", value: "DIR", help: "find the image files under DIR (a copy of the crashed machine's files); report paths stay as the core has them"),
        ] + RunCommand.processingSpecs,
        about: """
            Builds the report of a crash from its core dump (x86-64 or aarch64, as the kernel writes them): every
            thread with its registers (NT_PRSTATUS; the thread that took the signal is the crashed one), the
            signal (NT_SIGINFO), the process (NT_PRPSINFO: pid, uid, comm, the first 80 bytes of the command
            line), the images (NT_FILE, build-ids from the dumped memory). The core is read once, keeping what a
            report needs, and unwound and symbolized by the same confined worker as 'crashwatch run' (60 s at
            most), with the image files found on this machine (a file whose build-id differs is not used). The
            report says "source": "core"; its time is the core file's modification time, and its host is this
            machine (the architecture is the core's). It goes to the spool (or -o FILE), and its path is printed.
            Every size and offset in the core is checked; its notes are capped (4,096 threads, 65,536 notes)
            and what a cap drops is a soft error. When processing fails or runs out of time, the minimal
            report (registers, each thread's pc, images) is written with a soft error saying why, and exit 0.

            Either architecture on either host: an aarch64 core is unwound with libdw, PAC-signed return addresses
            stripped, with its images under --sysroot (e.g. /usr/aarch64-linux-gnu, Debian's cross libraries). A
            core without NT_FILE (qemu-user's) names its images from the dynamic linker's list in the dump, and
            needs --exe for the executable.
            """,
        after: """
            Exit status: 0 written (the minimal report when processing failed), 64 usage error, 65 not a core
            dump, 66 the core cannot be read, 73 the report cannot be written.
            """)

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 1...1, arguments) { parsed, settings throws(CommandFailure) in
            var options = CaptureOptions(crashwatchVersion: CLI.version)
            let sysroot = try checkingUsage { () throws(UsageError) in
                try RunCommand.applyProcessingOptions(parsed, to: &options)
                return try parsed.value("sysroot").map { text throws(UsageError) in
                    try OptionValue.absolutePath(text.hasSuffix("/") ? String(text.dropLast()) : text, option: "sysroot")
                }
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
            let destination: CoreReports.Destination = parsed.value("output").map { .file($0) } ?? .spool(settings.spool)
            let written: WrittenCoreReport
            do throws(CoreReportFailure) {
                written = try CoreReports.analyze(core, executable: executable, sysroot: sysroot, options: options, destination: destination)
            } catch {
                switch error {
                case .notACore(let message): throw CommandFailure("\(path): \(message)", status: ExitCode.dataError)
                case .cannotWrite(let message): throw CommandFailure(message, status: ExitCode.cannotCreate)
                }
            }
            // When processing fails the report is what it got to, with a soft error; said here in a line too.
            if let failure = written.failure { StandardStream.err("crashwatch: \(path): \(failure); the report is not complete\n") }
            if let failure = written.groupFailure { StandardStream.err("crashwatch: \(failure)\n") }
            StandardStream.out(written.path + "\n")
            return ExitCode.success
        }
    }
}
