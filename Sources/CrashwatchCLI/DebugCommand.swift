// DebugCommand.swift — `crashwatch debug ID`: gdb on the core kept for a report (`core-handler --keep-core`),
// with the crashed executable and an optional sysroot; the gzip-compressed core is inflated into a private
// temporary file first and removed after. Without a kept core it says how to keep one.
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSystem

enum DebugCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch debug [OPTIONS] [ID|PID|MATCH...|latest]",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("sysroot", value: "DIR", help: "gdb's sysroot: find the crashed machine's libraries under DIR"),
            OptionSpec("ex", value: "COMMAND", repeatable: true, help: "run gdb in batch mode with these commands (e.g. --ex bt) instead of interactively"),
            OptionSpec("debugger", value: "PROGRAM", help: "the gdb to run (default: gdb, found on PATH)"),
        ],
        about: """
            Opens gdb on the core dump kept for a report — the report's coreFile, written by
            'crashwatch core-handler --keep-core DIR' — with the crashed executable (the report's path) and,
            with --sysroot, the crashed machine's libraries. The report is picked as show picks it (an id or
            prefix, a PID, MATCHes, latest). The kept core is gzip-compressed: it is inflated into a private
            temporary directory (mode 0700), given to gdb, and removed when gdb exits. Only a regular file
            named after the report, owned by root or by you and writable by no one else, is taken: the path
            comes from the report. A report without a kept core says how to keep one: core-handler with
            --keep-core in kernel.core_pattern ('crashwatch run' captures live and keeps no core).
            debuginfod is off in gdb, as everywhere in crashwatch unless configured.
            """,
        after: """
            Exit status: gdb's own when it ran; 64 usage error, 65 the kept core is not usable, 66 no such
            report or no core kept for it, 69 gdb could not be started, 74 the spool cannot be read.
            """)

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...Int.max, arguments) { parsed, settings throws(CommandFailure) in
            let bytes = try ShowCommand.pickedReport(parsed.operands, settings: settings, fingerprint: nil)
            let report = try decodeReport(bytes, parsed.operands.first)
            guard let core = report.coreFile else {
                throw CommandFailure("""
                    report \(report.id) has no kept core. To keep cores, let crashwatch handle the kernel's: \
                    sysctl kernel.core_pattern='|/usr/bin/crashwatch core-handler --keep-core /var/lib/crashwatch/cores %P %I %s %t' \
                    (see 'crashwatch core-handler --help'); 'crashwatch run' captures a live process and keeps no core.
                    """, status: ExitCode.noInput)
            }
            let source = try checkedCore(core, report: report)
            let environment = ProcessEnvironment.current
            let directory: String
            do throws(SystemError) { directory = try Interactive.privateTemporaryDirectory(environment: environment) } catch {
                throw CommandFailure("cannot make a private temporary directory: \(error)", status: ExitCode.cannotCreate)
            }
            let inflated = directory + "/core"
            defer { Interactive.removeTemporary(file: inflated, directory: directory) }
            do throws(SystemError) { try Interactive.gunzip(source, to: inflated) } catch {
                throw CommandFailure("cannot inflate the kept core \(core): \(error)", status: ExitCode.dataError)
            }
            var argv = [parsed.value("debugger") ?? "gdb", "-q", "-iex", "set debuginfod enabled off"]
            if let sysroot = parsed.value("sysroot") { argv += ["-iex", "set sysroot \(sysroot)"] }
            let commands = parsed.all("ex")
            if !commands.isEmpty { argv += ["-batch"] + commands.flatMap { ["-ex", $0] } }
            argv += [report.process.executable, inflated]
            do throws(SystemError) {
                let status = try Interactive.run(argv, environment: environment)
                switch status {
                case .exited(let code): return code
                case .signaled(let signal, _): return 128 + signal
                default: return ExitCode.systemError
                }
            } catch {
                throw CommandFailure("cannot start \(argv[0]): \(error)", status: ExitCode.unavailable)
            }
        }
    }

    /// The kept core, opened when the report's `coreFile` is a regular file named after the report
    /// (`<report name without .json>.core.gz`, as core-handler names it), owned by root or this user and
    /// writable by no one else: the path is the report's word, and a report is hostile input.
    private static func checkedCore(_ path: String, report: CrashReport) throws(CommandFailure) -> OwnedDescriptor {
        let base = path.split(separator: "/").last.map(String.init) ?? ""
        guard path.hasPrefix("/"), base.hasSuffix(".core.gz"), base.contains(report.id.lowercased()) else {
            throw CommandFailure("the report's coreFile \(path) is not a core kept for report \(report.id)", status: ExitCode.dataError)
        }
        let descriptor: OwnedDescriptor
        do throws(SystemError) { descriptor = try UntrustedFile.open(path) } catch {
            throw CommandFailure("cannot open the kept core \(path): \(error)", status: error.isNotFound ? ExitCode.noInput : ExitCode.dataError)
        }
        guard let status = descriptor.status(), status.kind == .regular,
              status.ownerID == 0 || status.ownerID == SelfProcess.effectiveUID, !status.isWritableByGroupOrOthers else {
            throw CommandFailure("the kept core \(path) is not a regular file owned by root or you, writable by no one else", status: ExitCode.dataError)
        }
        return descriptor
    }
}
