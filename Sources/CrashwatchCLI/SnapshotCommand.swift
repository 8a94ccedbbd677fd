// SnapshotCommand.swift — `crashwatch snapshot PID`: every thread's stack of a running process, which goes on
// unharmed (SnapshotReports.take). Here: the arguments, the processes refused before any is touched (pid 1,
// crashwatch itself, kernel threads, a process another tracer holds), the signals that must wait for the
// release, the messages and the exit status.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchReporter
import CrashwatchSupervisor
import CrashwatchSystem
import Glibc

extension ExitCode {
    /// The kernel refused ptrace access (BSD `EX_NOPERM`).
    static let noPermission: Int32 = 77
}

enum SnapshotCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch snapshot [OPTIONS] PID | --unit NAME",
        options: SpoolSettings.locationSpecs + [
            OptionSpec("output", short: "o", value: "FILE", help: "write the report to FILE instead of the spool ('-': standard output)"),
            OptionSpec("threads", value: "TID,...", help: "capture only these threads' registers and stacks (every thread is still stopped, for one consistent picture; the others are listed by name and state)"),
            RunCommand.debugCacheSpec,
            SupervisedSnapshot.unitSpec,
        ] + RunCommand.processingSpecs,
        about: """
            Takes a report of kind "snapshot" of a running process and leaves it running: every thread is seized
            (PTRACE_SEIZE, no options) and interrupted, threads started meanwhile included, captured as a crash
            would be (registers, stacks, maps, build-ids), and let go (PTRACE_DETACH), a signal that arrived
            meanwhile delivered as it would have been; the confined worker then unwinds and symbolizes every
            thread (functions, file:line, inline frames) and the report goes to the spool (or -o FILE), its path
            printed. The report records each thread's state when stopped — running, in a system call (named),
            or stopped by job control — and how long the process was held (holdDurationMs). No signal is sent,
            lost or reordered, and should crashwatch die during the hold, even by SIGKILL, the kernel lets the
            threads go. A system call the stop interrupted is restarted, but for those that return EINTR
            after any stop (epoll_wait, semop, sigtimedwait…: signal(7)), as under eu-stack, gdb or a
            SIGSTOP. SIGINT, SIGTERM, SIGHUP and SIGQUIT wait until the threads are let go.

            The kernel's ptrace rules apply: your own processes, or any as root (CAP_SYS_PTRACE); with
            kernel.yama.ptrace_scope 1 only root may take it, 2 only root, 3 nobody. PID 1, crashwatch
            itself, kernel threads and a process another tracer holds (a debugger) are refused.

            A process supervised by 'crashwatch run' or 'crashwatch attach' (its tracer, which eu-stack and
            gdb cannot displace) is captured by that supervisor between its own stops: crashwatch asks it
            through its control socket (/run/crashwatch/control/SUPERVISOR-PID.sock as root, else
            $XDG_RUNTIME_DIR/crashwatch/control/), which answers root or the process's owner (real uid; root
            only for a setuid, capability-holding or non-dumpable process), and prints the path of the
            report it wrote into its own spool (--output and --threads do not apply). --unit NAME does the
            same for the program of a systemd service whose ExecStart is 'crashwatch run -- ...'.
            """,
        after: """
            Exit status: 0 written (the minimal report when processing failed), 64 usage error, 66 no such
            process, 69 the process cannot be snapshot (pid 1, kernel thread, already traced), 71 the
            capture failed, 73 the report cannot be written, 77 ptrace access refused.
            """)

    static func main(_ arguments: [String]) -> Int32 {
        spoolCommand(syntax, operands: 0...1, arguments) { parsed, settings throws(CommandFailure) in
            if let unit = parsed.value("unit") {
                guard parsed.operands.isEmpty else { throw CommandFailure(UsageError("--unit takes the place of PID: give one or the other")) }
                StandardStream.out(try SupervisedSnapshot.takeOfUnit(unit) + "\n")
                return ExitCode.success
            }
            guard parsed.operands.count == 1 else { throw CommandFailure(UsageError("missing argument")) }
            var options = CaptureOptions(crashwatchVersion: CLI.version)
            let (pid, threads, debugCache) = try checkingUsage { () throws(UsageError) in
                try RunCommand.applyProcessingOptions(parsed, to: &options)
                return (try processID(parsed.operands[0]), try parsed.value("threads").map(threadIDs), try RunCommand.debugCache(parsed))
            }
            // A process a crashwatch supervisor traces: that supervisor takes it.
            if pid != getpid(), let path = try SupervisedSnapshot.takeIfSupervised(pid, parsed: parsed) {
                StandardStream.out(path + "\n")
                return ExitCode.success
            }
            try refuseUnsnapshottable(pid)
            if let unknown = threads?.subtracting(ProcFS.threadIDs(of: pid)), let first = unknown.sorted().first {
                throw CommandFailure(UsageError("--threads: \(first) is not a thread of process \(pid)"))
            }
            let destination: CoreReports.Destination = switch parsed.value("output") {
            case "-"?: .standardOutput
            case let path?: .file(path)
            case nil: .spool(settings.spool)
            }
            // Signals that would end crashwatch wait until the threads are let go; then they take effect.
            let inbox: SignalInbox
            do throws(SystemError) { inbox = try SignalInbox(signals: [.int, .term, .hup, .quit]) } catch {
                throw CommandFailure("\(error)", status: ExitCode.systemError)
            }
            let previousMask = inbox.previousMask
            let written: WrittenCoreReport
            do throws(SnapshotReports.Failure) {
                written = try SnapshotReports.take(SnapshotReports.Request(pid: pid, threads: threads, options: options, destination: destination,
                                                                           debugCache: debugCache),
                                                   pause: testPause(), released: { SignalInbox.restore(mask: previousMask) })
            } catch {
                throw failure(error, pid: pid)
            }
            if let failure = written.failure { StandardStream.err("crashwatch: process \(pid): \(failure); the report is not complete\n") }
            if let failure = written.groupFailure { StandardStream.err("crashwatch: \(failure)\n") }
            if let bytes = written.bytes {
                StandardStream.out(String(decoding: bytes, as: UTF8.self))
            } else {
                StandardStream.out(written.path + "\n")
            }
            return ExitCode.success
        }
    }

    /// A process id operand: a positive decimal number.
    static func processID(_ text: String) throws(UsageError) -> Int32 {
        guard let value = decimalNumber(text, maxDigits: 10).flatMap({ Int32(exactly: $0) }), value > 0 else {
            throw UsageError("PID must be a process id, not '\(text)'")
        }
        return value
    }

    /// `--threads`: thread ids separated by commas.
    static func threadIDs(_ text: String) throws(UsageError) -> Set<Int32> {
        var tids: Set<Int32> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let tid = decimalNumber(part, maxDigits: 10).flatMap({ Int32(exactly: $0) }), tid > 0 else {
                throw UsageError("--threads takes thread ids separated by commas, not '\(text)'")
            }
            tids.insert(tid)
        }
        return tids
    }

    /// Refuses, before any thread is touched, the processes a snapshot must not or cannot hold.
    static func refuseUnsnapshottable(_ pid: Int32) throws(CommandFailure) {
        if pid == getpid() { throw CommandFailure("process \(pid) is this crashwatch itself", status: ExitCode.unavailable) }
        if pid == 1 {
            throw CommandFailure("process 1 is the init process: crashwatch does not stop it (everything waits on it)", status: ExitCode.unavailable)
        }
        guard let status = try? ProcFS.threadStatus(pid), status.tgid != nil else {
            throw CommandFailure("no process \(pid)", status: ExitCode.noInput)
        }
        if status.tgid != pid {
            throw CommandFailure("\(pid) is a thread of process \(status.tgid!), not a process: take a snapshot of \(status.tgid!) (--threads \(pid) to capture this thread alone)",
                                 status: ExitCode.usage)
        }
        if let stat = try? ProcFS.readText("/proc/\(pid)/stat"), let flags = ProcStat(text: stat)?.number(9), flags & 0x0020_0000 != 0 {
            throw CommandFailure("process \(pid) is a kernel thread: it has no user-space stack to capture", status: ExitCode.unavailable)
        }
        if status.isDead { throw CommandFailure("process \(pid) has exited (a zombie): nothing runs to capture", status: ExitCode.unavailable) }
        if let tracer = status.tracerPID, tracer != 0 { throw alreadyTraced(pid, tracer: tracer) }
    }

    /// A process traced by another process cannot be seized (a process has one tracer): says by whom. When the
    /// tracer is a crashwatch supervisor, it is the one that can take the snapshot.
    static func alreadyTraced(_ pid: Int32, tracer: Int32) -> CommandFailure {
        let command = ProcFS.commandLine(tracer)
        let name = command.first.map { ImageRecord.basename($0) } ?? ProcFS.threadName(pid: tracer, tid: tracer) ?? "?"
        let shown = command.isEmpty ? name : command.prefix(3).joined(separator: " ") + (command.count > 3 ? " …" : "")
        var message = "process \(pid) is already traced by process \(tracer) (\(shown)); a process has one tracer"
        if name == "crashwatch" || ProcFS.threadName(pid: tracer, tid: tracer) == "crashwatch" {
            message += ": it is a crashwatch supervisor, but no control socket of it could be reached (one older than this crashwatch, or without a runtime directory)"
        }
        return CommandFailure(message, status: ExitCode.unavailable)
    }

    /// The message and status of a snapshot that was not taken.
    static func failure(_ error: SnapshotReports.Failure, pid: Int32) -> CommandFailure {
        switch error {
        case .seize(.gone): CommandFailure("no process \(pid)", status: ExitCode.noInput)
        case .seize(.refused(let why)): CommandFailure("cannot take a snapshot of process \(pid): \(why)", status: ExitCode.noPermission)
        case .seize(.alreadyTraced(let tracer)): alreadyTraced(pid, tracer: tracer)
        case .seize(.notStopped(let stuck)):
            CommandFailure("cannot take a snapshot of process \(pid): \(SeizeFailure.notStopped(stuck))", status: ExitCode.systemError)
        case .seize(.system(let error)): CommandFailure("cannot take a snapshot of process \(pid): \(error)", status: ExitCode.systemError)
        case .capture(let error): CommandFailure("cannot capture process \(pid) (it was let go): \(error)", status: ExitCode.systemError)
        case .write(let message): CommandFailure(message, status: ExitCode.cannotCreate)
        }
    }

    /// The test hook (`CRASHWATCH_TEST_SNAPSHOT_PAUSE=STAGE:SECONDS`, STAGE `attached`, `seized` or `stopped`): at that point of
    /// the hold, crashwatch says so on stderr and sleeps, for a test to signal or kill it there. Inert otherwise.
    static func testPause() -> (LiveSeizure.Stage) -> Void {
        guard let setting = ProcessEnvironment.current["CRASHWATCH_TEST_SNAPSHOT_PAUSE"] else { return { _ in } }
        let parts = setting.split(separator: ":")
        guard parts.count == 2, let stage = LiveSeizure.Stage(rawValue: String(parts[0])),
              let seconds = decimalNumber(parts[1], maxDigits: 3) else { return { _ in } }
        return { reached in
            guard reached == stage else { return }
            StandardStream.err("crashwatch: test pause at \(stage.rawValue)\n")
            let until = Clock.monotonicNanoseconds() + Int64(seconds) * 1_000_000_000
            while Clock.monotonicNanoseconds() < until { Clock.sleep(nanoseconds: until - Clock.monotonicNanoseconds()) }
        }
    }
}
