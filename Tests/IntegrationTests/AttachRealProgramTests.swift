// AttachRealProgramTests.swift — `crashwatch attach` on real programs: a Python process that crashes for real
// (ctypes.string_at(0)) reported as the same crash under `run`; a PostgreSQL backend and an nginx worker that
// keep serving through attach and detach, then crash (a SIGSEGV sent to them: neither handles it, so it is a
// crash by DESIGN.md's rule, reported with its sender) and are replaced by their postmaster/master. Skipped,
// saying why, when the program is not installed (`make bench-deps` installs nginx and PostgreSQL).
import CrashwatchTestSupport
import Foundation
import Testing

@Suite("attach to real programs", .serialized)
struct AttachRealProgramTests {
    @Test("a Python process attached to crashes (ctypes.string_at(0)) with the report run gives")
    func pythonCrash() throws {
        let python = try #require((FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : Paths.which("python3")), "python3 is needed")
        let directory = try TemporaryDirectory("cw-attach-py")
        defer { directory.remove() }
        let script = directory.join("app.py")
        try """
            import ctypes, os, sys, time
            print("ready", flush=True)
            while not os.path.exists(sys.argv[1]):
                time.sleep(0.005)
            ctypes.string_at(0)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let lines = try AttachTests.scenario("""
            P=\(python); S=\(script)
            "$P" "$S" "$D/crash-attached" > "$D/py.out" & tp=$!
            wait_for "grep -q ready $D/py.out"
            "$CW" attach --spool "$D/spool-attach" $tp 2> "$D/attach.err" & cw=$!
            wait_for "traced_by $tp $cw"
            touch "$D/crash-attached"
            wait $cw; echo "attach-status $?"
            wait $tp; echo "target-status $?"
            touch "$D/crash-run"
            "$CW" run --spool "$D/spool-run" -- "$P" "$S" "$D/crash-run" > /dev/null 2> "$D/run.err"; echo "run-status $?"
            """, in: directory)
        #expect(lines.contains("attach-status 0"))
        #expect(lines.contains("target-status 139"))
        #expect(lines.contains("run-status 139"))
        let attached = try AttachTests.essentials(AttachTests.report(in: directory.join("spool-attach")))
        let supervised = try AttachTests.essentials(AttachTests.report(in: directory.join("spool-run")))
        #expect(attached == supervised)
        #expect(attached.prefix(3) == ["crash", "SIGSEGV", "SEGV_MAPERR"])
    }

    @Test("an nginx worker keeps serving through attach and detach, and its crash while attached is reported")
    func nginxWorker() throws {
        guard let nginx = Paths.which("nginx", extra: ["/usr/sbin/nginx"]), let curl = Paths.which("curl") else {
            print("skipped: needs nginx and curl (make bench-deps installs nginx)")
            return
        }
        let directory = try TemporaryDirectory("cw-attach-nginx")
        defer { directory.remove() }
        chmod(directory.path, 0o755)  // the workers run as nobody and read the page
        let lines = try AttachTests.scenario("""
            N=\(nginx); C=\(curl)
            port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
            mkdir -p "$D/www"; echo hello > "$D/www/index.html"; chmod -R a+rX "$D/www"
            cat > "$D/nginx.conf" <<EOF
            daemon off;
            master_process on;
            worker_processes 2;
            pid $D/nginx.pid;
            error_log $D/error.log warn;
            events { worker_connections 64; }
            http { access_log off; server { listen 127.0.0.1:$port; root $D/www; } }
            EOF
            "$N" -p "$D" -e "$D/error.log" -c "$D/nginx.conf" & master=$!
            get() { "$C" -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/"; }
            wait_for '[ "$(get)" = 200 ]'
            worker=$(cat /proc/$master/task/$master/children | tr ' ' '\\n' | grep -v '^$' | head -1)
            ok=0
            for i in $(seq 5); do
              "$CW" attach --spool "$D/spool" $worker 2>> "$D/cw.err" & cw=$!
              wait_for "traced_by $worker $cw"
              for _ in $(seq 20); do [ "$(get)" = 200 ] && ok=$((ok+1)); done
              kill -INT $cw; wait $cw; echo "detach-status $?"
            done
            echo "served $ok"
            traced_by $worker 0 && echo "worker untraced"
            [ "$(get)" = 200 ] && echo "serving after detach"
            "$CW" attach --spool "$D/spool" $worker 2> "$D/crash.err" & cw=$!
            wait_for "traced_by $worker $cw"
            kill -SEGV $worker
            wait $cw; echo "crash-attach-status $?"
            wait_for '[ "$(get)" = 200 ]' && echo "serving after the crash"
            kill -QUIT $master; wait $master
            cat "$D/crash.err"
            """, in: directory)
        #expect(lines.filter { $0 == "detach-status 0" }.count == 5)
        #expect(lines.contains("served 100"), "\(lines)")
        #expect(lines.contains("worker untraced"))
        #expect(lines.contains("serving after detach"))
        #expect(lines.contains("crash-attach-status 0"))
        #expect(lines.contains { $0.contains("was killed by SIGSEGV") }, "\(lines)")
        #expect(lines.contains("serving after the crash"))
        let report = try AttachTests.report(in: directory.join("spool"))
        #expect(report["kind"] as? String == "crash")
        let signal = try #require(report["signal"] as? [String: Any])
        #expect(signal["name"] as? String == "SIGSEGV")
        #expect((signal["senderPID"] as? Int ?? 0) > 0)
    }

    @Test("a PostgreSQL backend keeps its query through attach and detach, and its crash while attached is reported")
    func postgresBackend() throws {
        let bin = "/usr/lib/postgresql/15/bin"
        guard FileManager.default.isExecutableFile(atPath: bin + "/postgres"), let psql = Paths.which("psql"),
              let setpriv = Paths.which("setpriv"), getuid() == 0 else {
            print("skipped: needs PostgreSQL 15 (make bench-deps installs it), psql, setpriv and root")
            return
        }
        let directory = try TemporaryDirectory("cw-attach-pg")
        defer { directory.remove() }
        chmod(directory.path, 0o755)  // the server runs as postgres
        let lines = try AttachTests.scenario("""
            B=\(bin); Q=\(psql); AS="\(setpriv) --reuid=postgres --regid=postgres --clear-groups"
            W=$D/pg; mkdir -p $W/sock; chown -R postgres: $W
            (cd $W && HOME=$W $AS $B/initdb -D $W/data -U postgres --auth=trust --no-locale -E UTF8 --no-sync) > $W/initdb.log 2>&1 || { echo "initdb failed"; cat $W/initdb.log; exit 1; }
            (cd $W && exec $AS $B/postgres -D $W/data -c listen_addresses= -c unix_socket_directories=$W/sock -c port=5432) > $W/server.log 2>&1 & pm=$!
            q() { "$Q" -h $W/sock -p 5432 -U postgres -tAc "$1" postgres 2> /dev/null; }
            wait_for '[ "$(q "select 1")" = 1 ]'
            "$Q" -h $W/sock -p 5432 -U postgres -tAc "select pg_sleep(20)" postgres > $W/sleep.out 2>&1 & sleeper=$!
            backend() { q "select pid from pg_stat_activity where query like 'select pg_sleep(%' and pid <> pg_backend_pid()"; }
            wait_for '[ -n "$(backend)" ]'; bp=$(backend)
            for i in 1 2 3; do
              "$CW" attach --spool "$D/spool" $bp 2>> "$D/cw.err" & cw=$!
              wait_for "traced_by $bp $cw"
              [ "$(q "select 1")" = 1 ] && echo "serving while attached"
              kill -TERM $cw; wait $cw; echo "detach-status $?"
            done
            [ "$(backend)" = "$bp" ] && echo "the query runs on after detach"
            "$CW" attach --spool "$D/spool" $bp 2> "$D/crash.err" & cw=$!
            wait_for "traced_by $bp $cw"
            kill -SEGV $bp
            wait $cw; echo "crash-attach-status $?"
            wait $sleeper; echo "client-status $?"
            wait_for '[ "$(q "select 1")" = 1 ]' && echo "serving after the crash"
            kill -INT $pm; wait $pm
            cat "$D/crash.err"
            """, in: directory, timeout: 300)
        #expect(lines.filter { $0 == "detach-status 0" }.count == 3)
        #expect(lines.filter { $0 == "serving while attached" }.count == 3)
        #expect(lines.contains("the query runs on after detach"), "\(lines)")
        #expect(lines.contains("crash-attach-status 0"))
        #expect(!lines.contains("client-status 0"))  // its backend died under it
        #expect(lines.contains { $0.contains("was killed by SIGSEGV") }, "\(lines)")
        #expect(lines.contains("serving after the crash"))
        let report = try AttachTests.report(in: directory.join("spool"))
        #expect(report["kind"] as? String == "crash")
        #expect((report["signal"] as? [String: Any])?["name"] as? String == "SIGSEGV")
        #expect(((report["process"] as? [String: Any])?["uid"] as? Int) == Int(getpwnam("postgres")?.pointee.pw_uid ?? 0))
    }
}
