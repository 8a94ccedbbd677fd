// AttachCommand.swift — `crashwatch attach PID`: supervise a process that is already running, as `run`
// supervises its child (the same reporter, options and reports), and detach on TERM, INT or HUP leaving it
// running. crashwatch is then the process's tracer, not its parent: it exits 0 and prints how the process ended.
import CrashwatchModel
import CrashwatchReporter
import CrashwatchSupervisor
import CrashwatchSystem

/// `crashwatch attach [OPTIONS] PID`.
enum AttachCommand {
    static let syntax = CommandSyntax(
        usage: "crashwatch attach [OPTIONS] PID",
        options: RunCommand.syntax.specs.filter { $0.name != "pid-file" && $0.name != "help" },
        about: """
            Supervises the running process PID as 'run' supervises its command, without restarting it: every
            thread is seized (PTRACE_SEIZE, with threads created meanwhile), its crashes and SIGKILL deaths are
            reported exactly as under 'run', handled faults are remembered, and forks are followed (not with
            --no-follow-forks). The process is not stopped to attach, nor told. A snapshot of it can be asked
            for meanwhile with 'crashwatch snapshot PID' (through crashwatch's control socket: a process has one
            tracer, so eu-stack, gdb and strace cannot attach to it now).

            TERM, INT (Ctrl-C) and HUP sent to crashwatch detach: every thread is stopped and let go from that
            stop with the signal it was about to take, so no signal is lost or reordered; a process stopped by
            job control stays stopped. crashwatch then exits 0 and the process runs on. Seizing stops nothing;
            while attached every signal the process takes is a stop, as under 'run', and the detach is one
            stop: a system call in progress then is restarted, or returns EINTR where the kernel would after
            a stop (as with any debugger: see 'crashwatch snapshot --help'). When the process ends, crashwatch prints how (from its exit notification, which the
            kernel gives its tracer too) and exits 0; its parent still reaps it and gets its status.

            Differences from 'run': crashwatch is not the process's parent, so it does not exit as the
            process did; its standard streams, environment, rlimits and sd_notify/watchdog are the process's
            own (crashwatch relays nothing and forwards no signal); ptrace access to PID is needed: the same
            user (and PID dumpable) or root/CAP_SYS_PTRACE, and with kernel.yama.ptrace_scope 1 only root or
            CAP_SYS_PTRACE may attach to a process that is not a descendant.
            """,
        after: """
            Exit status:
              0    the process ended (its status printed) or crashwatch detached
              64   usage error
              66   no process PID
              69   PID is traced already (by the process named), or is crashwatch itself
              71   ptrace refused (permissions, Yama) or a system call failed
            """)

    static func main(_ arguments: [String]) -> Int32 {
        var configuration: RunCommand.Configuration
        let pid: Int32
        do throws(UsageError) {
            let parsed = try parseArguments(arguments, specs: syntax.specs, operandsEndOptions: true)
            if parsed.has("help") {
                StandardStream.out(syntax.help)
                return ExitCode.success
            }
            guard parsed.operands.count == 1, let number = Int32(parsed.operands[0]), number > 0 else {
                throw UsageError(parsed.operands.isEmpty ? "no PID given" : "attach takes one PID, not '\(parsed.operands.joined(separator: " "))'")
            }
            pid = number
            configuration = try RunCommand.configuration(parsed)
        } catch {
            return syntax.failure(error)
        }
        // Nothing of `run`'s command or service plumbing applies: the process is running already.
        configuration.supervisor.attach = true
        configuration.supervisor.notifySocket = nil
        configuration.supervisor.watchdogTimeoutNanoseconds = nil
        StartChecks.announce(settingsProblems: configuration.settingsProblems)
        configuration.reporter.spool = StartChecks.usableSpool(configuration.spool)

        let reporter = CrashReporter(configuration: configuration.reporter)
        let end: AttachEnd
        do throws(AttachError) {
            let supervisor: Supervisor
            do {
                supervisor = try Supervisor(options: configuration.supervisor, observer: reporter)
            } catch {
                throw AttachError.system((error as SupervisorError).systemError ?? SystemError("start the supervisor", errno: 0))
            }
            end = try supervisor.attach(to: pid)
            reporter.finishWriting()
        } catch {
            reporter.flushLines()
            let (message, status) = failure(error)
            StandardStream.err("crashwatch: \(message)\n")
            return status
        }
        reporter.flushLines()
        switch end {
        case .detached:
            StandardStream.err("crashwatch: detached from pid \(pid), which runs on\n")
        case .ended(let status):
            StandardStream.err("crashwatch: pid \(pid) \(describe(status))\n")
        }
        return ExitCode.success
    }

    /// The message and exit status for an attach that could not start.
    static func failure(_ error: AttachError) -> (String, Int32) {
        switch error {
        case .noSuchProcess(let pid):
            ("no process \(pid)", ExitCode.noInput)
        case .alreadyTraced(let pid, let tracer, let name):
            ("pid \(pid) is traced already by pid \(tracer)\(name.map { " (\($0))" } ?? ""): a process has one tracer; detach that one first (a crashwatch supervisor takes snapshots: 'crashwatch snapshot \(pid)')",
             ExitCode.unavailable)
        case .refused(let pid, let why):
            ("cannot attach to pid \(pid): \(why)", ExitCode.unavailable)
        case .notPermitted(let pid, let why):
            ("cannot attach to pid \(pid): \(why)", ExitCode.systemError)
        case .threadsKeptAppearing(let pid):
            ("cannot attach to pid \(pid): its threads kept appearing faster than they could be seized; it was left as it was", ExitCode.systemError)
        case .system(let error):
            ("\(error)", ExitCode.systemError)
        }
    }

    /// `exited with status 3`, `was killed by SIGSEGV (core dumped)`.
    static func describe(_ status: WaitStatus) -> String {
        switch status {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal, let core): "was killed by \(Signal(signal).name)\(core ? " (core dumped)" : "")"
        case .stopped, .continued: "ended"
        }
    }
}

extension SupervisorError {
    /// The failed system call, when that is what this is.
    var systemError: SystemError? {
        if case .system(let error) = self { return error }
        return nil
    }
}
