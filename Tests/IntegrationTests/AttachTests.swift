// AttachTests.swift — `crashwatch attach PID` on a real running process (the attach_target fixture): a crash
// reported as under `run`, detaching that leaves it running with every signal it was sent, and the
// supervisor's control socket (snapshots for root or the owner, refusals, silent clients). Each scenario is a
// bash script run to completion, so no process of the test runner is ever traced.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite("attach", .serialized)
struct AttachTests {
    /// Helpers every scenario script starts with: $1 the fixture, $2 crashwatch, $3 a scratch directory.
    static let prelude = """
        set -u
        T=$1; CW=$2; D=$3
        wait_for() { for _ in $(seq 1500); do eval "$1" && return 0; sleep 0.01; done; echo "timed out: $1"; exit 1; }
        traced_by() { grep -q "^TracerPid:[[:space:]]*$2\\$" /proc/$1/status 2>/dev/null; }
        # Every thread of process $1 asleep, in three looks 20 ms apart: crashwatch is done starting (its warm-up
        # run, its code pages let go again) and idles.
        asleep() { ! awk '/^State:/{print $2}' /proc/$1/task/*/status 2>/dev/null | grep -qv '^S$'; }
        idle() { for _ in 1 2 3; do asleep $1 || return 1; sleep 0.02; done; }
        start_target() { mkdir -p "$D/$1"; "$T" "$D/$1" > "$D/$1.out" & tp=$!; wait_for "grep -q ready $D/$1.out"; }

        """

    /// Runs `script` (after `prelude`) and returns its output as lines.
    static func scenario(_ script: String, in directory: TemporaryDirectory, timeout: Double = 240) throws -> [String] {
        let result = try run("/bin/bash", ["-c", prelude + script, "bash", Paths.fixture("attach_target"), Paths.crashwatch, directory.path],
                             timeout: timeout)
        #expect(result.succeeded, "\(result.stdout)\n\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    static func report(in spool: String) throws -> [String: Any] {
        let names = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
        try #require(names.count == 1, "one report in \(spool): \(names)")
        let data = try Data(contentsOf: URL(fileURLWithPath: spool + "/" + names[0]))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The crashed thread's name and top function, the signal, and the set of thread names: what must agree.
    static func essentials(_ report: [String: Any]) throws -> [String] {
        let signal = try #require(report["signal"] as? [String: Any])
        let threads = try #require(report["threads"] as? [[String: Any]])
        let crashed = try #require(threads.first { $0["crashed"] as? Bool == true })
        let top = ((crashed["frames"] as? [[String: Any]])?.first?["function"] as? String) ?? "?"
        return ["\(report["kind"] ?? "")", "\(signal["name"] ?? "")", "\(signal["codeName"] ?? "")", "\(signal["faultAddress"] ?? "")",
                "\(crashed["name"] ?? "")", top, threads.map { "\($0["name"] ?? "")" }.sorted().joined(separator: ",")]
    }

    @Test("a crash of a process crashwatch attached to gives the report run gives, and its exit status is printed")
    func crashUnderAttachMatchesRun() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Paths.fixture("attach_target")), "make fixtures builds it")
        let directory = try TemporaryDirectory("cw-attach")
        defer { directory.remove() }
        let lines = try Self.scenario("""
            start_target attached
            "$CW" attach --spool "$D/spool-attach" $tp 2> "$D/attach.err" & cw=$!
            wait_for "traced_by $tp $cw"
            touch "$D/attached/crash"
            wait $cw; echo "attach-status $?"
            wait $tp; echo "target-status $?"
            mkdir -p "$D/run"; touch "$D/run/crash"
            "$CW" run --spool "$D/spool-run" -- "$T" "$D/run" > /dev/null 2> "$D/run.err"; echo "run-status $?"
            """, in: directory)
        #expect(lines.contains("attach-status 0"))
        #expect(lines.contains("target-status 139"))  // it died of its SIGSEGV, as it would have
        #expect(lines.contains("run-status 139"))
        let attachErr = try String(contentsOfFile: directory.join("attach.err"), encoding: .utf8)
        #expect(attachErr.contains("was killed by SIGSEGV"), "\(attachErr)")
        let attached = try Self.essentials(Self.report(in: directory.join("spool-attach")))
        let supervised = try Self.essentials(Self.report(in: directory.join("spool-run")))
        #expect(attached == supervised)
        #expect(attached.prefix(6) == ["crash", "SIGSEGV", "SEGV_MAPERR", "0x0", "attach_target", "crash_on_request"])
    }

    @Test("attach and detach 100 times: no signal lost, no thread left stopped, the output unchanged, crashwatch's memory flat")
    func attachDetachCycles() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Paths.fixture("attach_target")), "make fixtures builds it")
        let directory = try TemporaryDirectory("cw-attach")
        defer { directory.remove() }
        let lines = try Self.scenario("""
            start_target t
            mkfifo "$D/idle"; exec 9<> "$D/idle"
            # Real-time signals queue (standard ones coalesce): the target must count every one sent.
            ( n=0; while [ ! -e "$D/senderstop" ]; do
                for _ in 1 2 3 4 5 6 7 8; do kill -s RTMIN $tp 2>/dev/null && n=$((n+1)); done
                read -t 0.001 -u 9 || true
              done; echo $n > "$D/sent" ) & sender=$!
            for i in $(seq 100); do
              "$CW" attach --spool "$D/spool" $tp 2>> "$D/cw.err" & cw=$!
              wait_for "traced_by $tp $cw"
              # Read once it idles: during its start-up its resident set swings with the warm-up (5–16 MB).
              wait_for "idle $cw"
              echo "rss $(awk '/^VmRSS:/{print $2}' /proc/$cw/status)"
              kill -TERM $cw; wait $cw; echo "detach-status $?"
              traced_by $tp 0 || echo "still traced after detach $i"
              for task in /proc/$tp/task/*; do
                case $(awk '/^State:/{print $2}' $task/status) in t|T) echo "stopped $task after detach $i";; esac
              done
            done
            touch "$D/senderstop"; wait $sender
            touch "$D/t/stop"; wait $tp; echo "target-status $?"
            echo "sent $(cat "$D/sent")"; cat "$D/t.out"
            """, in: directory, timeout: 600)
        #expect(lines.filter { $0 == "detach-status 0" }.count == 100)
        #expect(!lines.contains { $0.hasPrefix("stopped ") || $0.hasPrefix("still traced") }, "\(lines.filter { $0.hasPrefix("st") })")
        #expect(lines.contains("target-status 0"))
        let sent = try #require(lines.first { $0.hasPrefix("sent ") }.flatMap { Int($0.dropFirst(5)) })
        #expect(sent > 100)
        #expect(lines.contains("rt \(sent)"), "sent \(sent), the target counted: \(lines.filter { $0.hasPrefix("rt ") })")
        #expect(lines.contains("ready"))
        let rss = lines.compactMap { $0.hasPrefix("rss ") ? Int($0.dropFirst(4)) : nil }
        try #require(rss.count == 100)
        // Each attach is its own crashwatch: the last ones are no bigger than the first ones (medians: a look that
        // lands on a moment of work is 1–2 MB above the rest, early or late; growth would move them all).
        let median = { (values: ArraySlice<Int>) in values.sorted()[values.count / 2] }
        #expect(median(rss.suffix(10)) <= median(rss.prefix(10)) + 1024, "\(rss)")
    }

    @Test("attach and detach during signal, thread and fork churn: every signal in order, every thread joined, every fork's status right")
    func churn() throws {
        let churn = Paths.fixture("snapshot_churn")
        try #require(FileManager.default.isExecutableFile(atPath: churn), "make fixtures builds it")
        let directory = try TemporaryDirectory("cw-attach")
        defer { directory.remove() }
        // The churn and the sender go on until their standard input ends (`snapshot_churn - - -`, `send PID -`), which
        // is after the last cycle: every cycle attaches and detaches in the middle of it, however slow the machine.
        let lines = try Self.scenario("""
            C=\(churn)
            mkfifo "$D/churn.in" "$D/send.in"
            "$C" - - - < "$D/churn.in" > "$D/churn.out" & tp=$!
            exec 7> "$D/churn.in"
            wait_for "grep -q ready $D/churn.out"
            "$C" send $tp - < "$D/send.in" > "$D/sent" & sender=$!
            exec 8> "$D/send.in"
            cycles=0
            for i in $(seq 10); do
              "$CW" attach --spool "$D/spool" $tp 2>> "$D/cw.err" & cw=$!
              wait_for "traced_by $tp $cw || ! kill -0 $cw 2> /dev/null"
              kill -HUP $cw 2> /dev/null; wait $cw; status=$?
              [ $status = 0 ] && cycles=$((cycles+1))
            done
            echo "cycles $cycles"
            exec 8>&-; wait $sender; cat "$D/sent"
            exec 7>&-; wait $tp; echo "target-status $?"
            cat "$D/churn.out"
            """, in: directory, timeout: 400)
        #expect(lines.contains("cycles 10"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("sent ") })
        #expect(lines.contains("target-status 0"))
        #expect(lines.suffix(4) == ["ready", "signals: every one, in order", "threads joined", "forks statuses right"], "\(lines)")
    }

    @Test("a job-control-stopped process stays stopped through attach and detach; a traced one is refused naming its tracer, another user's saying why")
    func stoppedAndTraced() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Paths.fixture("attach_target")), "make fixtures builds it")
        let directory = try TemporaryDirectory("cw-attach")
        defer { directory.remove() }
        let lines = try Self.scenario("""
            start_target t
            kill -STOP $tp; wait_for "grep -q '^State:[[:space:]]*T' /proc/$tp/status"
            "$CW" attach --spool "$D/spool" $tp 2> "$D/cw.err" & cw=$!
            wait_for "traced_by $tp $cw"
            kill -TERM $cw; wait $cw; echo "detach-status $?"
            for task in /proc/$tp/task/*; do echo "state $(awk '/^State:/{print $2}' $task/status)"; done
            kill -CONT $tp
            "$CW" run --spool "$D/spool" -- "$T" "$D/u" > "$D/u.out" 2> /dev/null & sup=$!
            mkdir -p "$D/u"; wait_for "grep -q ready $D/u.out"
            child=$(cat /proc/$sup/task/$sup/children | tr ' ' '\\n' | grep -v '^$' | head -1)
            "$CW" attach --spool "$D/spool" $child 2> "$D/refused.err"; echo "refused-status $?"
            echo "refused: $(cat "$D/refused.err")"
            "$CW" attach 999999999 2> /dev/null; echo "missing-status $?"
            if [ $(id -u) = 0 ]; then
              setpriv --reuid=65534 --regid=65534 --clear-groups "$CW" attach --spool "$D/nobody" $tp 2> "$D/nobody.err"; echo "nobody-status $?"
              echo "nobody: $(grep "cannot attach" "$D/nobody.err")"
            fi
            touch "$D/u/stop" "$D/t/stop"; wait $sup; echo "supervised-status $?"; wait $tp; echo "target-status $?"
            """, in: directory)
        #expect(lines.contains("detach-status 0"))
        let states = lines.filter { $0.hasPrefix("state ") }
        #expect(states.count == 4 && states.allSatisfy { $0 == "state T" }, "\(states)")
        #expect(lines.contains("refused-status 69"))
        #expect(lines.contains { $0.hasPrefix("refused: crashwatch: pid ") && $0.contains("traced already by pid") && $0.contains("crashwatch") },
                "\(lines)")
        #expect(lines.contains("missing-status 66"))
        if getuid() == 0 {
            #expect(lines.contains("nobody-status 71"))
            #expect(lines.contains { $0.hasPrefix("nobody: crashwatch: cannot attach to pid ") && $0.contains("only root (CAP_SYS_PTRACE) may trace another user's") },
                    "\(lines)")
        }
        #expect(lines.contains("supervised-status 0"))
        #expect(lines.contains("target-status 0"))
    }
}
