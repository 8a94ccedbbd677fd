// ControlClient.swift — the asking side of a supervisor's control socket (ControlProtocol.swift): finds the
// socket of the crashwatch that traces a process (its TracerPid), makes sure the kernel says that very process
// serves it (SO_PEERCRED), and sends one request. What `crashwatch snapshot PID` calls for a traced process.
import CrashwatchSystem

/// Why a supervisor could not be asked, or refused.
public enum ControlClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No such process.
    case noSuchProcess(Int32)
    /// The process is not traced at all (no supervisor to ask).
    case notTraced(Int32)
    /// Its tracer has no control socket crashwatch knows of: not a crashwatch supervisor (a debugger, strace),
    /// or one without a socket.
    case noControlSocket(pid: Int32, tracer: Int32, tracerName: String?, tried: [String])
    /// The socket at this path is served by another process than the tracer.
    case impostor(path: String, server: Int32, tracer: Int32)
    /// The supervisor refused or failed, in its words.
    case refused(String)
    /// No answer came in time.
    case timedOut(Int32)
    /// The answer was not one of the protocol's.
    case unexpectedAnswer(String)
    /// A system call failed.
    case system(SystemError)

    public var description: String {
        switch self {
        case .noSuchProcess(let pid): "no process \(pid)"
        case .notTraced(let pid): "process \(pid) is not traced by a crashwatch supervisor"
        case .noControlSocket(let pid, let tracer, let name, let tried):
            "process \(pid) is traced by pid \(tracer)\(name.map { " (\($0))" } ?? ""), which has no crashwatch control socket (looked for \(tried.joined(separator: ", ")))"
        case .impostor(let path, let server, let tracer):
            "\(path) is served by pid \(server), not by the tracer (pid \(tracer)); not asking it"
        case .refused(let message): "the supervisor refused: \(message)"
        case .timedOut(let tracer): "the supervisor (pid \(tracer)) did not answer in time"
        case .unexpectedAnswer(let text): "the supervisor's answer is not understood: \(text)"
        case .system(let error): "\(error)"
        }
    }
}

/// Asks supervisors through their control sockets.
public enum SupervisorControl {
    /// Asks the crashwatch that traces `pid` to capture it as a snapshot; returns the report's path once it
    /// is written. Waits at most `timeoutMilliseconds` for the answer.
    public static func snapshot(of pid: Int32, timeoutMilliseconds: Int32 = 60_000) throws(ControlClientError) -> String {
        let tracer = try tracer(of: pid)
        switch try ask(supervisor: tracer, .snapshot(pid: pid), timeoutMilliseconds: timeoutMilliseconds) {
        case .report(let path): return path
        case .error(let message): throw .refused(message)
        case .processes: throw .unexpectedAnswer("a list of processes")
        }
    }

    /// The processes the supervisor `supervisor` follows, its main one first.
    public static func processes(ofSupervisor supervisor: Int32, timeoutMilliseconds: Int32 = 10_000) throws(ControlClientError) -> [Int32] {
        switch try ask(supervisor: supervisor, .processes, timeoutMilliseconds: timeoutMilliseconds) {
        case .processes(let pids): return pids
        case .error(let message): throw .refused(message)
        case .report: throw .unexpectedAnswer("a report path")
        }
    }

    /// The process tracing `pid` (its TracerPid).
    public static func tracer(of pid: Int32) throws(ControlClientError) -> Int32 {
        guard let status = try? ProcFS.threadStatus(pid), status.tgid == pid, !status.isDead else { throw .noSuchProcess(pid) }
        guard let tracer = status.tracerPID, tracer != 0 else { throw .notTraced(pid) }
        return tracer
    }

    /// Sends `request` to the control socket of `supervisor` (found by its effective uid) and reads the answer.
    public static func ask(supervisor: Int32, _ request: ControlRequest, timeoutMilliseconds: Int32) throws(ControlClientError) -> ControlAnswer {
        guard let status = try? ProcFS.threadStatus(supervisor), status.uids.count >= 2 else { throw .noSuchProcess(supervisor) }
        let paths = ControlSocketLocation.candidates(supervisor: supervisor, supervisorUID: status.uids[1],
                                                     environment: ProcessEnvironment.current)
        var stream: StreamConnection?
        var usedPath = ""
        for path in paths {
            do {
                stream = try StreamConnection.connect(to: path)
                usedPath = path
                break
            } catch where error.isNotFound || error.errno == 111 /* ECONNREFUSED: a stale socket */ {
                continue
            } catch {
                throw .system(error)
            }
        }
        guard let stream else {
            throw .noControlSocket(pid: supervisor, tracer: supervisor, tracerName: ProcFS.threadName(pid: supervisor, tid: supervisor),
                                   tried: paths)
        }
        guard stream.peer.pid == supervisor else { throw .impostor(path: usedPath, server: stream.peer.pid, tracer: supervisor) }
        let line = Array(request.line.utf8)
        let sent: Int
        do { sent = try stream.send(line) } catch { throw .system(error) }
        guard sent == line.count else { throw .timedOut(supervisor) }
        return try readAnswer(stream, supervisor: supervisor, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Reads one answer line, within `timeoutMilliseconds` in all and `ControlAnswer.maximumAnswerBytes`.
    private static func readAnswer(_ stream: StreamConnection, supervisor: Int32, timeoutMilliseconds: Int32) throws(ControlClientError) -> ControlAnswer {
        let deadline = Clock.monotonicNanoseconds() + Int64(timeoutMilliseconds) * 1_000_000
        var received: [UInt8] = []
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: received[..<newline], as: UTF8.self)
                guard let answer = ControlAnswer(line: text) else { throw .unexpectedAnswer(String(text.prefix(200))) }
                return answer
            }
            let remaining = (deadline - Clock.monotonicNanoseconds()) / 1_000_000
            guard remaining > 0, received.count < ControlAnswer.maximumAnswerBytes else { throw .timedOut(supervisor) }
            let bytes: [UInt8]?
            do {
                bytes = try stream.receive(limit: ControlAnswer.maximumAnswerBytes - received.count,
                                           timeoutMilliseconds: Int32(clamping: remaining))
            } catch {
                throw .system(error)
            }
            guard let bytes else { throw .timedOut(supervisor) }
            guard !bytes.isEmpty else { throw .unexpectedAnswer("the connection closed without an answer") }
            received += bytes
        }
    }
}
