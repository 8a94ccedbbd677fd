// ControlServer.swift — a supervisor's control socket (ControlProtocol.swift), served from the event loop
// without ever blocking it: non-blocking accepts and reads, a request read within `readDeadline` or the
// connection dropped, at most `maximumConnections` at once, and a snapshot taken between the process's own
// stops (the watchdog's hang capture, kind `snapshot`) whose answer is sent when its report is written.
import CrashwatchModel
import CrashwatchSystem
import Synchronization

/// The control socket's listener and its open connections (tracer thread only).
final class ControlServer {
    let listener: StreamListener
    private var connections: [Connection] = []

    /// Connections open at once; more are closed as soon as they are accepted.
    static let maximumConnections = 8
    /// How long a connection has to send its request.
    static let readDeadline: Int64 = 2_000_000_000
    /// How long a connection waits for its snapshot's report before it is dropped (the supervisor's own
    /// capture deadline bounds the report; this bounds a connection left over should no answer come).
    static let answerDeadline: Int64 = 120_000_000_000

    /// One client: reading its request, then waiting for its answer.
    final class Connection {
        let stream: StreamConnection
        var received: [UInt8] = []
        var deadline: Int64
        /// Set once the request is read: the answer, sent from whichever thread has it.
        var answer: Answer?

        init(stream: StreamConnection, deadline: Int64) {
            self.stream = stream
            self.deadline = deadline
        }
    }

    /// An answer on its way: sent once, from the thread that has it (the report writer's, for a snapshot).
    final class Answer: Sendable {
        let stream: StreamConnection
        private let sent = Atomic<Bool>(false)

        init(_ stream: StreamConnection) { self.stream = stream }

        var isSent: Bool { sent.load(ordering: .acquiring) }

        /// Sends `answer`; later calls do nothing. An answer line fits a fresh connection's socket buffer, so
        /// a send that cannot go at once is not retried: the client has gone or stopped reading.
        func send(_ answer: ControlAnswer) {
            guard !sent.exchange(true, ordering: .acquiringAndReleasing) else { return }
            _ = try? stream.send(Array(answer.line.utf8))
        }
    }

    init(listener: StreamListener) { self.listener = listener }

    /// The descriptors the loop sleeps on: the listener and the connections still reading.
    var pollDescriptors: [Int32] { [listener.fd] + connections.filter { $0.answer == nil }.map(\.stream.fd) }

    /// The earliest deadline of a connection, for the loop's sleep.
    var nextDeadline: Int64? { connections.map(\.deadline).min() }

    /// Accepts waiting connections, reads what they sent and drops those answered or past their deadline;
    /// returns each request read whole, with its connection's answer.
    func service(now: Int64) -> [(request: ControlRequest?, peer: PeerCredentials, answer: Answer)] {
        connections.removeAll { $0.answer?.isSent == true || $0.deadline <= now }
        for _ in 0..<Self.maximumConnections * 2 {
            guard let stream = try? listener.accept() else { break }
            if connections.count < Self.maximumConnections {
                connections.append(Connection(stream: stream, deadline: now + Self.readDeadline))
            }
        }
        var requests: [(ControlRequest?, PeerCredentials, Answer)] = []
        for connection in connections where connection.answer == nil {
            let room = ControlRequest.maximumRequestBytes - connection.received.count
            // Nothing yet (or a failed read, which the deadline ends): the next round looks again.
            guard let bytes = try? connection.stream.receive(limit: room) else { continue }
            connection.received += bytes
            let line = connection.received.firstIndex(of: UInt8(ascii: "\n"))
            guard line != nil || bytes.isEmpty || connection.received.count >= ControlRequest.maximumRequestBytes else { continue }
            let answer = Answer(connection.stream)
            connection.answer = answer
            connection.deadline = now + Self.answerDeadline
            let request = line.flatMap { ControlRequest(line: String(decoding: connection.received[..<$0], as: UTF8.self)) }
            requests.append((request, connection.stream.peer, answer))
        }
        return requests
    }
}

extension Supervisor {
    /// Opens the control socket where `ControlSocketLocation` puts it; a failure is a warning, never a reason
    /// not to supervise.
    func openControlSocket() {
        guard let directory = ControlSocketLocation.directory(effectiveUID: effectiveUserID, environment: ProcessEnvironment.current)
        else { return }
        let isRoot = effectiveUserID == 0
        do {
            try FileSystem.createDirectories(directory, permissions: isRoot ? 0o755 : 0o700)
            guard StreamListener.isOwnDirectory(directory) else {
                observer?.supervisorWarning("crashwatch: control socket: \(directory) is not a directory of crashwatch's own that only it may write; snapshots through the supervisor are off")
                return
            }
            // Root's socket is open to every user (each request is checked against its peer's credentials);
            // another user's sits in its private runtime directory.
            let listener = try StreamListener(path: directory + "/" + ControlSocketLocation.fileName(supervisor: SelfProcess.pid),
                                              mode: isRoot ? 0o666 : 0o600)
            control = ControlServer(listener: listener)
        } catch {
            observer?.supervisorWarning("crashwatch: control socket: \(error); snapshots through the supervisor are off")
        }
    }

    /// Serves the control socket: answers what needs no capture at once, and takes a snapshot asked for.
    func serviceControl() throws(SystemError) {
        guard let control else { return }
        for (request, peer, answer) in control.service(now: Clock.monotonicNanoseconds()) {
            switch request {
            case nil:
                answer.send(.error("not a request (expected 'snapshot PID' or 'pids')"))
            case .processes?:
                let others = followedProcesses.subtracting([mainPID]).filter { ProcFS.exists($0) }.sorted()
                answer.send(.processes((mainChildEnded ? [] : [mainPID]) + others))
            case .snapshot(let pid)?:
                if let refusal = try snapshot(pid, for: peer, answer: answer) { answer.send(.error(refusal)) }
            }
        }
    }

    /// Captures `pid` as a snapshot for `peer`, whose answer goes out when the report is written; returns why
    /// not instead, when it may not or cannot be.
    private func snapshot(_ pid: Int32, for peer: PeerCredentials, answer: ControlServer.Answer) throws(SystemError) -> String? {
        guard let status = try? ProcFS.threadStatus(pid), status.tgid == pid, !status.isDead else {
            return "no process \(pid)"
        }
        guard status.tracerPID == SelfProcess.pid, mainExecuted, detachRequested == false else {
            return "process \(pid) is not supervised by this crashwatch (pid \(SelfProcess.pid))"
        }
        if let refusal = ControlPolicy.refusal(peer: peer, target: ProcessCredentials.of(pid, status: status)) { return refusal }
        guard !reportedProcesses.contains(pid) else { return "process \(pid) is dying of a crash being reported" }
        let identity = identify(pid, status: status)
        let name = ProcFS.threadName(pid: pid, tid: pid)
        var crash = DetectedCrash(
            pid: pid, tid: pid, threadName: name, executable: identity.executable, signal: SignalInfo(signo: 0, code: 0),
            originalFault: nil, handledFaults: [], timeNanoseconds: Clock.realtimeNanoseconds(),
            crashedThreadID: pid, crashedThreadName: name)
        crash.unreadableFiles = identity.unreadable
        crash.isSnapshot = true
        crash.snapshotRequester = peer
        let job = try capture(crash, initial: [:], fatalSignal: nil, heldSince: Clock.monotonicNanoseconds()) { job in
            job.reportWritten = { result in
                switch result {
                case .success(let path): answer.send(.report(path: path))
                case .failure(let problem): answer.send(.error(problem.message))
                }
            }
        }
        return job == nil ? "the capture of process \(pid) failed (crashwatch's stderr says why)" : nil
    }
}
