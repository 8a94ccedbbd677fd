// ControlSocketTests.swift — a `crashwatch run` supervisor's control socket on a real process: a snapshot
// for root (a report of kind `snapshot`, the process left running) where eu-stack cannot attach, refusals for
// another user and for a process it does not trace, and silent clients that do not delay crash handling.
// The clients are python3 (a real peer with its own credentials); the scenario is one bash script.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite("control socket", .serialized)
struct ControlSocketTests {
    @Test("run's supervisor takes snapshots for root where eu-stack fails, refuses others, and silent clients do not stall it")
    func supervisorSnapshots() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Paths.fixture("attach_target")), "make fixtures builds it")
        try #require(getuid() == 0, "the foreign-user check needs root (setpriv)")
        let directory = try TemporaryDirectory("cw-control")
        defer { directory.remove() }
        let lines = try AttachTests.scenario("""
            "$CW" run --spool "$D/spool" -- "$T" "$D/t" > "$D/t.out" 2> "$D/cw.err" & cw=$!
            mkdir -p "$D/t"; wait_for "grep -q ready $D/t.out"
            tp=$(cat /proc/$cw/task/$cw/children | tr ' ' '\\n' | grep -v '^$' | head -1)
            sock=/run/crashwatch/control/$cw.sock
            wait_for "test -S $sock"
            ask() { /usr/bin/python3 -c '
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\\n")
            data = b""
            while b"\\n" not in data:
                chunk = s.recv(4096)
                if not chunk: break
                data += chunk
            print(data.decode().strip())' "$sock" "$1"; }
            echo "target $tp"
            echo "pids: $(ask pids)"
            echo "snapshot: $(ask "snapshot $tp")"
            echo "untraced: $(ask "snapshot $$")"
            echo "garbage: $(ask "hello")"
            export sock; export -f ask
            echo "foreign: $(setpriv --reuid 65534 --regid 65534 --clear-groups bash -c "ask 'snapshot $tp'")"
            if command -v eu-stack > /dev/null; then eu-stack -p $tp > /dev/null 2>&1; echo "eu-stack-status $?"; fi
            # Released: no thread in a stop (its main thread polls every millisecond, so it may be R or S).
            stopped=""; for task in /proc/$tp/task/*; do
              case $(awk '/^State:/{print $2}' $task/status) in t|T) stopped="$stopped ${task##*/}";; esac
            done
            test -z "$stopped" && echo "target running after the snapshot" || echo "stopped after the snapshot:$stopped"
            # Ten clients that connect and say nothing (more than the socket serves at once).
            silent=""
            for _ in $(seq 10); do
              /usr/bin/python3 -c 'import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(60)' "$sock" & silent="$silent $!"
            done
            sleep 0.5
            start=$(date +%s%N); touch "$D/t/crash"; wait $cw; echo "run-status $?"
            echo "crash-ms $(( ($(date +%s%N) - start) / 1000000 ))"
            kill $silent 2> /dev/null
            test -e $sock && echo "socket left behind"
            true
            """, in: directory)
        let target = try #require(lines.first { $0.hasPrefix("target ") }.map { String($0.dropFirst(7)) })
        #expect(lines.contains("pids: pids \(target)"))
        let answer = try #require(lines.first { $0.hasPrefix("snapshot: ") })
        #expect(answer.hasPrefix("snapshot: ok \(directory.join("spool"))/"), "\(answer)")
        #expect(lines.contains { $0.hasPrefix("untraced: error ") && $0.contains("not supervised by this crashwatch") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("garbage: error not a request") })
        #expect(lines.contains { $0.hasPrefix("foreign: error uid 65534 may not look at a process of uid 0") }, "\(lines)")
        if lines.contains(where: { $0.hasPrefix("eu-stack-status") }) {
            #expect(!lines.contains("eu-stack-status 0"), "a process has one tracer: eu-stack cannot attach")
        }
        #expect(lines.contains("target running after the snapshot"), "\(lines)")
        #expect(lines.contains("run-status 139"))
        let milliseconds = try #require(lines.first { $0.hasPrefix("crash-ms ") }.flatMap { Int($0.dropFirst(9)) })
        #expect(milliseconds < 10_000, "the crash waited on silent clients: \(milliseconds) ms")
        #expect(!lines.contains("socket left behind"))

        let spool = directory.join("spool")
        let names = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
        let reports = try names.map { name in
            try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: spool + "/" + name))) as? [String: Any])
        }
        #expect(reports.map { "\($0["kind"] ?? "")" }.sorted() == ["crash", "snapshot"])
        let snapshot = try #require(reports.first { $0["kind"] as? String == "snapshot" })
        #expect(answer.hasSuffix(names[reports.firstIndex { $0["kind"] as? String == "snapshot" }!]))
        let threads = try #require(snapshot["threads"] as? [[String: Any]])
        #expect(threads.count == 4)
        #expect(threads.allSatisfy { $0["crashed"] as? Bool == false && !(($0["frames"] as? [Any]) ?? []).isEmpty })
        #expect(threads.filter { $0["name"] as? String == "attach-idle" }.count == 3)
        #expect((snapshot["signal"] as? [String: Any])?["name"] as? String == "none")
        #expect(snapshot["holdDurationMs"] is Double)
    }

    @Test("snapshot --unit says exactly what is wrong: PID and --unit together, a unit systemd does not know")
    func unitErrors() throws {
        let both = try run(Paths.crashwatch, ["snapshot", "--unit", "app.service", "1234"])
        #expect(both.termination == .exited(64) && both.stderr.contains("--unit takes the place of PID"), "\(both.stderr)")
        let missing = try run(Paths.crashwatch, ["snapshot", "--unit", "crashwatch-no-such-unit-\(getpid()).service"])
        if Paths.which("systemctl", extra: ["/usr/bin/systemctl", "/bin/systemctl"]) == nil {
            #expect(missing.termination == .exited(71) && missing.stderr.contains("--unit needs systemctl"), "\(missing.stderr)")
        } else {
            // Without a running systemd, systemctl's own words say so; with one, the unit is not found.
            #expect(missing.termination == .exited(66) && missing.stderr.contains("no unit crashwatch-no-such-unit-"), "\(missing.stderr)")
        }
    }
}
