// SupervisedSnapshot.swift — `crashwatch snapshot` of a process a crashwatch supervisor (`run`, `attach`)
// traces: a process has one tracer, so that supervisor takes the snapshot between its own stops, asked
// through its control socket (SupervisorControl); and `snapshot --unit NAME`, a systemd service whose main
// process is such a supervisor.
import CrashwatchSupervisor
import CrashwatchSystem

enum SupervisedSnapshot {
    /// `--unit NAME`: the option that selects a service instead of a PID.
    static let unitSpec = OptionSpec("unit", value: "NAME", help: "take the snapshot of the program a systemd service runs under 'crashwatch run' (the unit's main process is that supervisor, which takes it)")

    /// How long the supervisor has to answer: its capture and processing are bounded by its own capture
    /// timeout (10 s by default), and it may be finishing an earlier crash's report first.
    static let answerTimeoutMilliseconds: Int32 = 120_000

    /// When `pid` is traced by a crashwatch supervisor with a control socket, has it take the snapshot and
    /// returns the report's path; nil when `pid` is not traced at all (the caller seizes it itself).
    static func takeIfSupervised(_ pid: Int32, parsed: ParsedArguments) throws(CommandFailure) -> String? {
        let tracer: Int32
        do throws(ControlClientError) { tracer = try SupervisorControl.tracer(of: pid) } catch {
            return nil  // not traced (or gone: the caller says so)
        }
        for option in ["output", "threads"] where parsed.value(option) != nil {
            throw CommandFailure("process \(pid) is traced by a supervisor (pid \(tracer)), which takes the snapshot into its own spool: --\(option) does not apply",
                                 status: ExitCode.usage)
        }
        do throws(ControlClientError) {
            return try SupervisorControl.snapshot(of: pid, timeoutMilliseconds: answerTimeoutMilliseconds)
        } catch {
            throw failure(error, pid: pid)
        }
    }

    /// `--unit NAME`: the unit's main process must be a crashwatch supervisor; the snapshot is of the program
    /// it supervises (the first process it names).
    static func takeOfUnit(_ unit: String) throws(CommandFailure) -> String {
        let supervisor = try mainProcess(of: unit)
        let pids: [Int32]
        do throws(ControlClientError) { pids = try SupervisorControl.processes(ofSupervisor: supervisor) } catch {
            if case .noControlSocket = error {
                let name = ProcFS.threadName(pid: supervisor, tid: supervisor) ?? "?"
                throw CommandFailure("the main process of unit \(unit) (pid \(supervisor), \(name)) is not a crashwatch supervisor with a control socket: is its ExecStart 'crashwatch run -- …'?",
                                     status: ExitCode.unavailable)
            }
            throw failure(error, pid: supervisor)
        }
        guard let program = pids.first else {
            throw CommandFailure("the crashwatch of unit \(unit) (pid \(supervisor)) supervises no running program now", status: ExitCode.unavailable)
        }
        do throws(ControlClientError) {
            return try SupervisorControl.snapshot(of: program, timeoutMilliseconds: answerTimeoutMilliseconds)
        } catch {
            throw failure(error, pid: program)
        }
    }

    /// The unit's main process (`systemctl show -p MainPID --value`), as `doctor --unit` reads units.
    static func mainProcess(of unit: String) throws(CommandFailure) -> Int32 {
        guard let systemctl = ["/usr/bin/systemctl", "/bin/systemctl"].first(where: { (try? FileSystem.status($0)) != nil }) else {
            throw CommandFailure("--unit needs systemctl, which is not installed", status: ExitCode.systemError)
        }
        let result: ChildResult
        do {
            result = try ChildProcess.run([systemctl, "show", unit, "-p", "MainPID", "-p", "LoadState"])
        } catch {
            throw CommandFailure("cannot run systemctl: \(error)", status: ExitCode.systemError)
        }
        let text = String(decoding: result.output, as: UTF8.self)
        guard result.status == .exited(code: 0), !text.contains("LoadState=not-found") else {
            let reason = String(decoding: result.errorOutput, as: UTF8.self).split(separator: "\n").first.map(String.init)
            throw CommandFailure("no unit \(unit) (\(reason ?? "systemctl show: not found"))", status: ExitCode.noInput)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MainPID=") }),
              let pid = Int32(line.dropFirst(8)) else {
            throw CommandFailure("systemctl show \(unit) gave no MainPID", status: ExitCode.systemError)
        }
        guard pid > 0 else { throw CommandFailure("unit \(unit) has no main process (it is not running)", status: ExitCode.unavailable) }
        return pid
    }

    /// The message and exit status for a supervisor that could not be asked or refused.
    static func failure(_ error: ControlClientError, pid: Int32) -> CommandFailure {
        switch error {
        case .noSuchProcess: CommandFailure("no process \(pid)", status: ExitCode.noInput)
        case .notTraced, .noControlSocket: SnapshotCommand.alreadyTraced(pid, tracer: (try? SupervisorControl.tracer(of: pid)) ?? 0)
        case .refused(let message): CommandFailure("the supervisor of process \(pid) refused: \(message)", status: ExitCode.noPermission)
        case .impostor, .unexpectedAnswer: CommandFailure("process \(pid): \(error)", status: ExitCode.unavailable)
        case .timedOut, .system: CommandFailure("process \(pid): \(error)", status: ExitCode.systemError)
        }
    }
}
