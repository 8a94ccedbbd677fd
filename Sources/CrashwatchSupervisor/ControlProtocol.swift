// ControlProtocol.swift — what a supervisor's control socket understands, as pure values: where the socket
// lives, the one-line requests and answers, and who may ask what (DESIGN.md "Wave 3 shape", live processes).
//
// The protocol is one line each way over a Unix stream connection:
//   snapshot PID\n   → ok REPORT-PATH\n | error WHY\n     capture PID (traced by this supervisor) as a snapshot
//   pids\n           → pids MAIN [PID...]\n                 the processes this supervisor follows, its main one first
// A request is at most `maximumRequestBytes`; the peer is known by the kernel's SO_PEERCRED, never by what it says.
import CrashwatchSystem

/// A request to a supervisor's control socket.
public enum ControlRequest: Equatable, Sendable {
    /// Capture the traced process `pid` as a snapshot report and answer with the report's path.
    case snapshot(pid: Int32)
    /// Name the processes the supervisor follows, its main one first.
    case processes

    /// The longest request line, newline included.
    public static let maximumRequestBytes = 64

    /// Parses one request line (without its newline); nil when it is not one.
    public init?(line: String) {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        switch (words.first, words.count) {
        case ("pids"?, 1):
            self = .processes
        case ("snapshot"?, 2):
            guard let pid = Int32(words[1]), pid > 0, String(pid) == words[1] else { return nil }
            self = .snapshot(pid: pid)
        default:
            return nil
        }
    }

    /// The request as sent, newline included.
    public var line: String {
        switch self {
        case .snapshot(let pid): "snapshot \(pid)\n"
        case .processes: "pids\n"
        }
    }
}

/// A control socket's answer.
public enum ControlAnswer: Equatable, Sendable {
    /// The snapshot's report is written here.
    case report(path: String)
    /// The processes the supervisor follows, its main one first.
    case processes([Int32])
    /// The request was refused or failed, and why (one line).
    case error(String)

    /// The longest answer line a client reads, newline included.
    public static let maximumAnswerBytes = 8192

    /// The answer as sent: one line, newline included (a newline inside a message or path becomes a space).
    public var line: String {
        func oneLine(_ text: String) -> String { String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 }) }
        return switch self {
        case .report(let path): "ok \(oneLine(path))\n"
        case .processes(let pids): "pids" + pids.map { " \($0)" }.joined() + "\n"
        case .error(let message): "error \(oneLine(message))\n"
        }
    }

    /// Parses an answer line (without its newline); nil when it is not one.
    public init?(line: String) {
        if line.hasPrefix("ok "), line.count > 3 {
            self = .report(path: String(line.dropFirst(3)))
        } else if line.hasPrefix("error ") {
            self = .error(String(line.dropFirst(6)))
        } else if line == "pids" || line.hasPrefix("pids ") {
            var pids: [Int32] = []
            for word in line.split(separator: " ").dropFirst() {
                guard let pid = Int32(word), pid > 0 else { return nil }
                pids.append(pid)
            }
            self = .processes(pids)
        } else {
            return nil
        }
    }
}

/// Where a supervisor's control socket lives, named by the supervisor's pid.
public enum ControlSocketLocation {
    /// The directory of root's supervisors' sockets.
    public static let rootDirectory = "/run/crashwatch/control"

    /// The directory a supervisor running as `effectiveUID` keeps its socket in: `/run/crashwatch/control`
    /// as root, else `$XDG_RUNTIME_DIR/crashwatch/control`; nil without a runtime directory (then there is no
    /// control socket).
    public static func directory(effectiveUID: UInt32, environment: [String: String]) -> String? {
        if effectiveUID == 0 { return rootDirectory }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return runtime + "/crashwatch/control"
    }

    /// The socket's name in its directory.
    public static func fileName(supervisor pid: Int32) -> String { "\(pid).sock" }

    /// Where a client looks for the socket of supervisor `pid` running as `supervisorUID`: root's directory,
    /// or that user's runtime directory (`/run/user/UID`, systemd-logind's) and the client's own.
    public static func candidates(supervisor pid: Int32, supervisorUID: UInt32, environment: [String: String]) -> [String] {
        var directories: [String] = []
        if supervisorUID == 0 {
            directories.append(rootDirectory)
        } else {
            directories.append("/run/user/\(supervisorUID)/crashwatch/control")
            if let own = directory(effectiveUID: supervisorUID, environment: environment), !directories.contains(own) {
                directories.append(own)
            }
        }
        return directories.map { $0 + "/" + fileName(supervisor: pid) }
    }
}

/// Who may ask a supervisor for what: the kernel's own rule for reading a process, as ptrace applies it.
public enum ControlPolicy {
    /// Why `peer` may not have a snapshot of a process with `credentials`, or nil when it may: root may; the
    /// process's owner (its real uid) may unless the process is more than its user (setuid, capabilities, not
    /// dumpable: `ProcessCredentials.isPrivileged`), which the kernel keeps from that user too.
    public static func refusal(peer: PeerCredentials, target credentials: ProcessCredentials?) -> String? {
        if peer.uid == 0 { return nil }
        guard let credentials else { return "the process's credentials could not be read" }
        guard credentials.realUID == peer.uid else {
            return "uid \(peer.uid) may not look at a process of uid \(credentials.realUID) (only root or its owner may)"
        }
        if credentials.isPrivileged {
            return "the process is privileged (setuid, capabilities or not dumpable): only root may look at it"
        }
        return nil
    }
}
