// DoctorIdentity.swift — `doctor --user` and `--unit`: the checks run again in a process with the user's
// ids, groups and login environment (util-linux's setpriv, then env for the unit's variables), so what the
// spool and ptrace checks find is what that user's crashwatch would.
import CrashwatchSystem

enum DoctorIdentity {
    /// What `doctor --unit` takes from a unit: its user (nil: root), environment and crashwatch's options.
    struct Unit: Equatable {
        var user: String?
        var environment: [String] = []
        var options: [String] = []
    }

    /// Reads the unit's `User=`, `Environment=` and `ExecStart=` through `systemctl show`.
    static func unit(_ name: String) throws(CommandFailure) -> Unit {
        guard let systemctl = ["/usr/bin/systemctl", "/bin/systemctl"].first(where: { (try? FileSystem.status($0)) != nil }) else {
            throw CommandFailure("--unit needs systemctl, which is not installed", status: ExitCode.systemError)
        }
        let result: ChildResult
        do {
            result = try ChildProcess.run([systemctl, "show", name, "-p", "User", "-p", "Environment", "-p", "ExecStart", "-p", "LoadState"])
        } catch {
            throw CommandFailure("cannot run systemctl: \(error)", status: ExitCode.systemError)
        }
        let text = String(decoding: result.output, as: UTF8.self)
        guard result.status == .exited(code: 0), !text.contains("LoadState=not-found") else {
            let reason = String(decoding: result.errorOutput, as: UTF8.self).split(separator: "\n").first.map(String.init)
            throw CommandFailure("no unit \(name) (\(reason ?? "systemctl show: not found"))", status: ExitCode.noInput)
        }
        return parse(show: text)
    }

    /// The unit from `systemctl show -p User -p Environment -p ExecStart` output.
    static func parse(show text: String) -> Unit {
        var unit = Unit()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("User="), line.count > 5 { unit.user = String(line.dropFirst(5)) }
            if line.hasPrefix("Environment=") { unit.environment = line.dropFirst(12).split(separator: " ").map(String.init) }
            if line.hasPrefix("ExecStart="), let argv = line.split(separator: "argv[]=", maxSplits: 1).dropFirst().first {
                let words = (argv.split(separator: " ; ").first ?? argv).split(separator: " ").map(String.init)
                unit.options = crashwatchOptions(words)
            }
        }
        return unit
    }

    /// `--spool` and `--config` of a `crashwatch run` command line, as `doctor` takes them.
    static func crashwatchOptions(_ words: [String]) -> [String] {
        var options: [String] = []
        var index = 0
        while index < words.count, words[index] != "--" {
            for option in ["--spool", "--config"] {
                if words[index] == option, index + 1 < words.count { options += [option, words[index + 1]] }
                if words[index].hasPrefix(option + "=") { options += [option, String(words[index].dropFirst(option.count + 1))] }
            }
            index += 1
        }
        return options
    }

    /// Runs `crashwatch doctor ARGUMENTS` as `user` (nil: as this process) with `environment` added, and
    /// passes its output and status on.
    static func rerun(as user: String?, environment: [String], arguments: [String]) throws(CommandFailure) -> Int32 {
        guard let executable = ProcFS.readLink("/proc/self/exe") else {
            throw CommandFailure("cannot find crashwatch's own executable", status: ExitCode.systemError)
        }
        var argv = [executable, "doctor"] + arguments
        if !environment.isEmpty { argv = ["/usr/bin/env"] + environment + argv }
        if let user {
            guard effectiveUserID == 0 else { throw CommandFailure("checking as another user needs root", status: ExitCode.usage) }
            guard let ids = WorkerIdentity.userIDs(named: user) else { throw CommandFailure("no user \(user)", status: ExitCode.usage) }
            guard let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: { (try? FileSystem.status($0)) != nil }) else {
                throw CommandFailure("--user needs setpriv (util-linux), which is not installed", status: ExitCode.systemError)
            }
            argv = [setpriv, "--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--init-groups", "--reset-env", "--"] + argv
        }
        let result: ChildResult
        do { result = try ChildProcess.run(argv, timeoutMilliseconds: 120_000, outputCap: 1 << 20) } catch {
            throw CommandFailure("cannot run \(argv[0]): \(error)", status: ExitCode.systemError)
        }
        StandardStream.out(String(decoding: result.output, as: UTF8.self))
        StandardStream.err(String(decoding: result.errorOutput, as: UTF8.self))
        if case .exited(let code) = result.status { return code }
        throw CommandFailure("the checks as \(user ?? "root") ended with \(result.status)", status: ExitCode.systemError)
    }
}
