// ControlProtocolTests.swift — the control socket's requests, answers, locations and who may ask, as tables.
import CrashwatchSupervisor
import CrashwatchSystem
import Testing

@Suite struct ControlProtocolTests {
    @Test("requests parse from their own lines and nothing else", arguments: [
        ("snapshot 42", ControlRequest.snapshot(pid: 42)), ("pids", .processes),
    ])
    func requestsRoundTrip(_ line: String, _ request: ControlRequest) {
        #expect(ControlRequest(line: line) == request)
        #expect(request.line == line + "\n")
    }

    @Test("malformed requests are refused", arguments: [
        "", "snapshot", "snapshot 0", "snapshot -1", "snapshot +5", "snapshot 042", "snapshot 1 2", "snapshot 99999999999",
        "pids now", "SNAPSHOT 1", "snapshot  1", "hello",
    ])
    func malformedRequests(_ line: String) {
        #expect(ControlRequest(line: line) == nil)
    }

    @Test("answers are one line and parse back")
    func answersRoundTrip() {
        for answer in [ControlAnswer.report(path: "/var/lib/crashwatch/reports/x.json"), .processes([7, 9]), .processes([]),
                       .error("uid 5 may not")] {
            let line = answer.line
            #expect(line.hasSuffix("\n") && line.filter { $0 == "\n" }.count == 1)
            #expect(ControlAnswer(line: String(line.dropLast())) == answer)
        }
        #expect(ControlAnswer.error("two\nlines").line == "error two lines\n")
        #expect(ControlAnswer(line: "pids 1 x") == nil)
        #expect(ControlAnswer(line: "maybe") == nil)
    }

    @Test("root's socket is under /run/crashwatch/control, another user's in its runtime directory or nowhere")
    func locations() {
        #expect(ControlSocketLocation.directory(effectiveUID: 0, environment: ["XDG_RUNTIME_DIR": "/run/user/0"]) == "/run/crashwatch/control")
        #expect(ControlSocketLocation.directory(effectiveUID: 1000, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
                == "/run/user/1000/crashwatch/control")
        #expect(ControlSocketLocation.directory(effectiveUID: 1000, environment: [:]) == nil)
        #expect(ControlSocketLocation.directory(effectiveUID: 1000, environment: ["XDG_RUNTIME_DIR": "relative"]) == nil)
        #expect(ControlSocketLocation.candidates(supervisor: 5, supervisorUID: 0, environment: [:]) == ["/run/crashwatch/control/5.sock"])
        #expect(ControlSocketLocation.candidates(supervisor: 5, supervisorUID: 1000, environment: ["XDG_RUNTIME_DIR": "/tmp/rt"])
                == ["/run/user/1000/crashwatch/control/5.sock", "/tmp/rt/crashwatch/control/5.sock"])
    }

    static func credentials(uid: UInt32, euid: UInt32? = nil, capabilities: UInt64 = 0, dumpable: Bool? = true) -> ProcessCredentials {
        let effective = euid ?? uid
        return ProcessCredentials(uids: [uid, effective, effective, effective], gids: [uid, uid, uid, uid], groups: [],
                                  permittedCapabilities: capabilities, dumpable: dumpable)
    }

    @Test("root may look at anything; the owner at its plain processes; nobody else")
    func whoMayAsk() {
        let root = PeerCredentials(pid: 1, uid: 0, gid: 0), owner = PeerCredentials(pid: 2, uid: 1000, gid: 1000)
        let other = PeerCredentials(pid: 3, uid: 1001, gid: 1001)
        let plain = Self.credentials(uid: 1000)
        #expect(ControlPolicy.refusal(peer: root, target: plain) == nil)
        #expect(ControlPolicy.refusal(peer: owner, target: plain) == nil)
        #expect(ControlPolicy.refusal(peer: other, target: plain) != nil)
        #expect(ControlPolicy.refusal(peer: owner, target: nil) != nil)
        for privileged in [Self.credentials(uid: 1000, euid: 0), Self.credentials(uid: 1000, capabilities: 1 << 21),
                           Self.credentials(uid: 1000, dumpable: false)] {
            #expect(ControlPolicy.refusal(peer: owner, target: privileged) != nil)
            #expect(ControlPolicy.refusal(peer: root, target: privileged) == nil)
        }
    }
}
