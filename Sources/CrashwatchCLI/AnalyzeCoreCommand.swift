// AnalyzeCoreCommand.swift — `crashwatch analyze-core CORE`: the report of a crash from its core dump,
// through the same processing as a live capture (CoreFile is a capture source like the held process).
import CrashwatchCapture
import CrashwatchModel
import CrashwatchReporter
import CrashwatchSpool
import CrashwatchSymbols
import CrashwatchSystem
import FoundationEssentials
import Glibc

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

    /// How long processing may take.
    static let processingSeconds: Int64 = 60

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
            let time = core.modificationNanoseconds() ?? Clock.realtimeNanoseconds()
            let deadline = Clock.monotonicNanoseconds() + processingSeconds * 1_000_000_000
            let source: CoreFile
            do {
                source = try CoreReports.source(InputStream(fd: core.fd), options: options, timeNanoseconds: time,
                                                deadlineNanoseconds: deadline, executable: executable, sysroot: sysroot)
            } catch {
                throw CommandFailure("\(path): \(error)", status: ExitCode.dataError)
            }
            // When processing fails the report is what it got to, with a soft error; said here in a line too.
            var sighting: GroupSighting?
            let (bytes, failure) = CoreReports.process(source, imageFiles: executable.map { [$0] } ?? [], deadlineNanoseconds: deadline,
                                                       crashwatchVersion: CLI.version, sighting: { sighting = $0 })
            if let failure { StandardStream.err("crashwatch: \(path): \(failure); the report is not complete\n") }
            if let output = parsed.value("output") {
                do { try FileSystem.writeAtomically(bytes, to: output) } catch {
                    throw CommandFailure("cannot write \(output): \(error)", status: ExitCode.cannotCreate)
                }
                StandardStream.out(output + "\n")
                return ExitCode.success
            }
            do throws(SpoolError) {
                let spool = try Spool(path: settings.spool)
                let name = CoreReports.fileName(source.capture)
                StandardStream.out(try spool.write(bytes: bytes, name: name) + "\n")
                do throws(SpoolError) {
                    if let sighting { try spool.recordInGroups(sighting) } else { try spool.recordInGroups(reportBytes: bytes, name: name) }
                } catch {
                    StandardStream.err("crashwatch: \(error)\n")
                }
            } catch {
                throw CommandFailure("\(error)", status: ExitCode.cannotCreate)
            }
            return ExitCode.success
        }
    }
}
