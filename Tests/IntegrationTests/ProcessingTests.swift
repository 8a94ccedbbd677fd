// ProcessingTests.swift — capture raw, process apart, seen from outside: the minimal report is durable
// before the process is released and the worker's full report replaces it; a worker that is killed
// leaves the minimal report with the reason; crashes of several processes are each processed while the
// supervisor goes on serving the rest; the capture caps hold. (SilentServer: HostileInputTests.swift.)
import CrashwatchTestSupport
import Foundation
import Testing

/// A shell snippet to put before `exec crashwatch …`: a background watcher that runs `action` (with `$c`, the
/// worker's pid) on each `crashwatch __process` child of that crashwatch — every 5 ms, looking at its children
/// only — until `action` exits, and ends with crashwatch (a zombie or gone), so that it never outlives the run:
/// it holds the test runner's descriptors, which would keep the runner waiting for it.
func workerWatcher(_ action: String) -> String {
    """
    ( while [ -e /proc/$$/stat ] && [ "$(cut -d' ' -f3 /proc/$$/stat)" != Z ]; do \
        for c in $(cat /proc/$$/task/*/children 2>/dev/null); do \
          case "$(tr '\\0' ' ' < /proc/$c/cmdline 2>/dev/null)" in "crashwatch __process "*) \(action);; esac; \
        done; sleep 0.005; done ) & true
    """
}

@Suite(.serialized) struct ProcessingTests {
    @Test("a processing worker killed mid-way leaves what it had — its report from before symbols — with the reason, and the exact exit status")
    func workerKilled() throws {
        let server = try SilentServer()
        defer { server.stop() }
        // The worker waits on the silent debuginfod for the stripped binary's debug info; a watcher kills
        // it there. It is the only process whose command line is `crashwatch __process`.
        // `$$` stays the shell's pid in the subshell, and the shell becomes crashwatch by exec: the watcher
        // kills only this run's worker, never another test's.
        // Killed once it has a socket open: it asks the server, its stacks unwound.
        let watcher = workerWatcher("if ls -l /proc/$c/fd 2>/dev/null | grep -q socket:; then kill -9 $c; exit 0; fi")
        let started = Date()
        let (result, reports, _) = try runCapturing(
            Paths.fixture("stripped_debuglink"), options: ["--debuginfod", "http://127.0.0.1:\(server.port)", "--capture-timeout", "8"],
            shellPrefix: watcher)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 8, "the supervisor waited for the deadline instead of the dead worker")
        #expect(reports.count == 1, "\(result.stderr)")
        let report = try #require(reports.first)
        let diagnostics = report.json["diagnostics"] as? [String: Any]
        // Killed while asking debuginfod, after unwinding: the unwound stack stays, without symbols.
        #expect(diagnostics?["processing"] as? String == "unwound", "\(report.json)")
        let errors = report.json["softErrors"] as? [[String: Any]] ?? []
        #expect(errors.contains { $0["stage"] as? String == "processing" && ($0["message"] as? String)?.contains("died of SIGKILL") == true }, "\(errors)")
        #expect(errors.contains { ($0["message"] as? String)?.contains("symbols were not looked up") == true }, "\(errors)")
        let crashed = try #require(report.crashedThreads.first)
        #expect((crashed["registers"] as? [[String: Any]])?.isEmpty == false)
        let frames = report.frames(of: crashed)
        #expect(frames.count >= 5, "\(frames)")
        #expect(frames.prefix(4).allSatisfy { report.image(of: $0)?["name"] as? String == "stripped_debuglink" }, "\(frames)")
        #expect(report.json["holdDurationMs"] as? Double ?? -1 >= 0)
    }

    @Test("the worker's standard streams are not the ones crashwatch shares with the program: /dev/null, and its own file for errors")
    func workerStreams() throws {
        let server = try SilentServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory("cw-worker-fds")
        // The worker waits on the silent debuginfod; a watcher records where its fds 0, 1 and 2 lead (a sample
        // taken as it exits, with fewer than three, is taken again).
        let watcher = workerWatcher("""
            l=$(for fd in 0 1 2; do readlink /proc/$c/fd/$fd; done); \\
            if [ "$(echo "$l" | wc -l)" = 3 ]; then echo "$l" > '\(directory.path)/fds'; exit 0; fi
            """)
        let (result, reports, _) = try runCapturing(
            Paths.fixture("stripped_debuglink"), options: ["--debuginfod", "http://127.0.0.1:\(server.port)", "--capture-timeout", "3"],
            shellPrefix: watcher)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        #expect(reports.count == 1)
        let links = try String(contentsOfFile: "\(directory.path)/fds", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(links.count == 3 && links[0] == "/dev/null" && links[1] == "/dev/null", "\(links)")
        #expect(links.last?.hasPrefix("/memfd:crashwatch-worker-stderr") == true, "\(links)")
    }

    @Test("processing runs in the background: the worker SCHED_BATCH at nice 19 and yielding on SIGALRM unless starved, the final report's writer a SCHED_BATCH nice 19 thread")
    func processingInTheBackground() throws {
        let directory = try TemporaryDirectory("cw-worker-policy")
        // A watcher samples crashwatch's worker child (1,000 threads to process: it lives long enough) and
        // crashwatch's own threads: policy (stat field 41), nice (field 19) and, for the worker, how long it
        // has waited on a run queue (schedstat field 2) and SigCgt.
        let watcher = """
            ( n=0; seen=0; while [ $n -lt 3000 ]; do found=0; \
                for c in $(cat /proc/$$/task/*/children 2>/dev/null); do \
                  case "$(tr '\\0' ' ' < /proc/$c/cmdline 2>/dev/null)" in "crashwatch __process "*) \
                    s=$(cat /proc/$c/stat 2>/dev/null); r=$(cat /proc/$c/schedstat 2>/dev/null); \
                    g=$(grep SigCgt /proc/$c/status 2>/dev/null); \
                    if [ -n "$s" ] && [ -n "$r" ]; then found=1; set -- $r; d=$2; set -- $s; \
                      echo "${41} ${19} $d ${g#SigCgt:}" >> '\(directory.path)/worker'; fi;; esac; \
                done; \
                if [ $found = 1 ]; then seen=1; elif [ $seen = 1 ]; then exit 0; fi; \
                for t in /proc/$$/task/*; do s=$(cat $t/stat 2>/dev/null); \
                  if [ -n "$s" ]; then set -- $s; echo "${41} ${19}" >> '\(directory.path)/threads'; fi; done; \
                n=$((n+1)); sleep 0.005; done ) </dev/null >/dev/null 2>&1 & true
            """
        let (result, reports, _) = try runCapturing(Paths.fixture("threads1000"), shellPrefix: watcher)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let report = try #require(reports.first, "\(result.stderr)")
        #expect((report.json["diagnostics"] as? [String: Any])?["processing"] as? String == "complete")
        // A sample taken as the worker exits can lose its SigCgt (its status gone after its stat was read).
        let worker = try String(contentsOfFile: "\(directory.path)/worker", encoding: .utf8).split(separator: "\n")
            .map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) }.filter { $0.count >= 3 }
        #expect(!worker.isEmpty, "the worker was never seen")
        // SCHED_BATCH at nice 19; SCHED_OTHER (at nice 0 as root) only once promoted, which a worker that has
        // waited 50 ms on a run queue is (a busy machine: the whole test suite runs beside this test).
        let promotedNice = getuid() == 0 ? "0" : "19"
        for sample in worker {
            let background = sample[0] == "3" && sample[1] == "19"
            let starved = sample[0] == "0" && sample[1] == promotedNice && (Int64(sample[2]) ?? 0) >= 50_000_000
            #expect(background || starved, "policy, nice, run-queue wait: \(sample)")
        }
        // SIGALRM is signal 14: bit 13 of the caught mask, once the worker has set its timer (a worker promoted
        // before it got there sets none: it does not yield).
        if worker.allSatisfy({ $0[0] == "3" }) {
            #expect(worker.contains { $0.count == 4 && (UInt64($0[3], radix: 16) ?? 0) & (1 << 13) != 0 }, "SigCgt: \(worker.suffix(3))")
        }
        let threads = try String(contentsOfFile: "\(directory.path)/threads", encoding: .utf8).split(separator: "\n")
        #expect(threads.contains("3 19"), "no SCHED_BATCH nice 19 thread in crashwatch: \(Set(threads))")
    }

    @Test("a worker starved by a busy program is promoted within a second, not halfway to its deadline: SCHED_OTHER, the report complete")
    func starvedWorkerPromoted() throws {
        let directory = try TemporaryDirectory("cw-worker-starved")
        // crashwatch, its worker and a busy loop share CPU 0 (the shell pins itself; what it starts and
        // execs inherits it): the worker, SCHED_BATCH at nice 19 and yielding every 0.25 ms, gets almost none
        // of it. A watcher samples the worker's policy and nice with the time, and ends the loop once the
        // worker is gone (or after 15 s).
        let watcher = """
            taskset -p -c 0 $$ >/dev/null; ( while :; do :; done ) & BUSY=$!; \
            ( n=0; seen=0; while [ $n -lt 1500 ]; do found=0; \
                for c in $(cat /proc/$$/task/*/children 2>/dev/null); do \
                  case "$(tr '\\0' ' ' < /proc/$c/cmdline 2>/dev/null)" in "crashwatch __process "*) \
                    s=$(cat /proc/$c/stat 2>/dev/null); \
                    if [ -n "$s" ]; then found=1; set -- $s; echo "$(date +%s%N) ${41} ${19}" >> '\(directory.path)/worker'; fi;; esac; \
                done; \
                if [ $found = 1 ]; then seen=1; elif [ $seen = 1 ]; then break; fi; \
                n=$((n+1)); sleep 0.01; done; kill $BUSY ) </dev/null >/dev/null 2>&1 & true
            """
        let (result, reports, _) = try runCapturing(Paths.fixture("threads64"), shellPrefix: watcher)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let report = try #require(reports.first, "\(result.stderr)")
        #expect((report.json["diagnostics"] as? [String: Any])?["processing"] as? String == "complete")
        let samples = try String(contentsOfFile: "\(directory.path)/worker", encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: " ").map(String.init) }.filter { $0.count == 3 }
        let start = try #require(samples.first.flatMap { Int64($0[0]) }, "the worker was never seen")
        // Promoted: SCHED_OTHER (policy 0), at nice 0 as root, else its nice stays (19).
        let promoted = samples.first { $0[1] == "0" }
        let promotedAfter = promoted.flatMap { Int64($0[0]) }.map { Double($0 - start) / 1e9 }
        #expect(promotedAfter.map { $0 < 1 } == true,
                "promoted after \(promotedAfter.map { "\($0) s" } ?? "never") (halfway to the deadline is 5 s): \(samples.prefix(3))")
        #expect(promoted.map { $0[2] == (getuid() == 0 ? "0" : "19") } == true, "\(promoted ?? [])")
    }

    @Test("a worker that cannot finish in time is killed at the capture deadline; the report keeps what was done and says so")
    func workerDeadline() throws {
        let server = try SilentServer()
        defer { server.stop() }
        let started = Date()
        let (result, reports, _) = try runCapturing(
            Paths.fixture("stripped_debuglink"), options: ["--debuginfod", "http://127.0.0.1:\(server.port)", "--capture-timeout", "2"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        #expect(elapsed < 3, "took \(elapsed) s with --capture-timeout 2")
        let report = try #require(reports.first, "\(result.stderr)")
        let processing = (report.json["diagnostics"] as? [String: Any])?["processing"] as? String
        let errors = report.json["softErrors"] as? [[String: Any]] ?? []
        if processing == "minimal" || processing == "unwound" {
            #expect(errors.contains { ($0["message"] as? String)?.contains("deadline") == true }, "\(errors)")
            if processing == "unwound" { #expect(report.frames(of: try #require(report.crashedThreads.first)).count >= 5) }
        } else {
            // The worker gave up on debuginfod in time: the frames are there, without lines.
            #expect(processing == "complete")
            #expect(report.functions(of: try #require(report.crashedThreads.first)).count > 1)
        }
    }

    @Test("crashes of several processes at once are each processed in full; the supervisor serves them all")
    func parallelCrashes() throws {
        let crasher = Paths.fixture("null_deref")
        let (result, reports, _) = try runCapturing("/bin/sh", ["-c", "'\(crasher)' & '\(crasher)' & '\(crasher)' & wait"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(reports.count == 3, "\(result.stderr)")
        for report in reports {
            #expect((report.json["diagnostics"] as? [String: Any])?["processing"] as? String == "complete")
            let functions = report.functions(of: try #require(report.crashedThreads.first))
            #expect(functions.starts(with: ["crash_here", "middle", "outer", "main"]), "\(functions)")
        }
        #expect(Set(reports.map { ($0.json["process"] as? [String: Any])?["pid"] as? Int ?? 0 }).count == 3)
    }

    @Test("as root, a program running as another user is processed with that user's identity, in full")
    func workerAsTheProgramsUser() throws {
        try #require(getuid() == 0, "needs root to run the program as nobody; skip")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "setpriv is not installed; skip")
        let (result, reports, _) = try runCapturing("/usr/bin/setpriv",
                                                    ["--reuid=65534", "--regid=65534", "--clear-groups", Paths.fixture("null_deref")])
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let report = try #require(reports.first, "\(result.stderr)")
        #expect((report.json["process"] as? [String: Any])?["uid"] as? Int == 65534)
        #expect((report.json["diagnostics"] as? [String: Any])?["processing"] as? String == "complete", "\(report.json["softErrors"] ?? "")")
        #expect(report.functions(of: try #require(report.crashedThreads.first)).starts(with: ["crash_here", "middle", "outer", "main"]))
    }

    @Test("a stack cut at --max-stack-bytes keeps its top 256 KiB too: an 8 KiB window and the top hold a 256 KiB thread stack whole")
    func stackCap() throws {
        // (Where neither part holds a return address, the unwind stops at "stack capture limit": StackWindowTests.)
        let (result, reports, _) = try runCapturing(Paths.fixture("stack_overflow_thread"), options: ["--max-stack-bytes", "8K"])
        #expect(result.termination == .signaled(SIGSEGV))
        let report = try #require(reports.first, "\(result.stderr)")
        let crashed = try #require(report.crashedThreads.first)
        #expect(report.functions(of: crashed).first == "recurse")
        #expect(report.frames(of: crashed).count == 256, "\(report.frames(of: crashed).count) frames")
        #expect(crashed["unwindStopReason"] as? String == "frame limit reached", "\(crashed["unwindStopReason"] ?? "")")
    }

    @Test("compressed debug files used by a report are inflated into the debug cache after it, and used from there")
    func debugCache() throws {
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
        let buildID = try #require(try Readelf.buildID(of: libc), "no libc build-id")
        let debugFile = "/usr/lib/debug/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug"
        try #require(FileManager.default.fileExists(atPath: debugFile), "libc6-dbg is not installed; skip")
        let cache = try TemporaryDirectory("cw-debug-cache")
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: cache.path)
        let entry = "\(cache.path)/\(buildID).debug"

        let (first, firstReports, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--debug-cache", cache.path])
        #expect(first.termination == .signaled(SIGSEGV))
        #expect(firstReports.count == 1)
        // The inflation runs after the report, in a process of its own: wait for it, bounded.
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: entry) && Date() < deadline { usleep(50_000) }
        try #require(FileManager.default.fileExists(atPath: entry), "nothing was cached: \((try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? [])")
        let mode = ((try FileManager.default.attributesOfItem(atPath: entry))[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600)
        let sections = try run("/usr/bin/readelf", ["-SW", entry]).stdout
        #expect(sections.contains(".debug_info") && !sections.split(separator: "\n").contains { $0.contains(".debug_info") && $0.contains(" C ") },
                "the cached copy is still compressed")
        #expect(try Readelf.buildID(of: entry) == buildID)

        // The next crash symbolizes libc from the cache: the same lines as the first.
        let (_, secondReports, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--debug-cache", cache.path])
        let frames = { (report: WrittenReport) in report.frames(of: report.crashedThreads[0]).map { "\($0["function"] ?? "?") \($0["line"] ?? "?")" } }
        #expect(frames(try #require(secondReports.first)) == frames(try #require(firstReports.first)))

        // An entry of another build under libc's name is refused (its build-id does not match): lines stay right.
        try FileManager.default.removeItem(atPath: entry)
        try FileManager.default.copyItem(atPath: Paths.fixture("fifo_debuglink.debug"), toPath: entry)
        let (_, thirdReports, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--debug-cache", cache.path])
        #expect(frames(try #require(thirdReports.first)) == frames(try #require(firstReports.first)))
    }

    @Test("a debug cache that is not crashwatch's own (group- or world-accessible), or 'none', is not used")
    func debugCacheRefused() throws {
        // The crash uses libc's compressed debug file, which a cache crashwatch accepts receives (the control
        // below): without libc6-dbg nothing would be cached anywhere and the test would prove nothing.
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
        let buildID = try #require(try Readelf.buildID(of: libc), "no libc build-id")
        try #require(FileManager.default.fileExists(atPath: "/usr/lib/debug/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug"),
                     "libc6-dbg is not installed; skip")
        let open = try TemporaryDirectory("cw-debug-cache-open")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: open.path)
        let (result, reports, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--debug-cache", open.path])
        #expect(result.termination == .signaled(SIGSEGV) && reports.count == 1)
        // The event to wait for: a later crash with a cache crashwatch accepts has had libc inflated into it
        // (bounded). Any inflation into the refused directory would have started before that one.
        let control = try TemporaryDirectory("cw-debug-cache-control")
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: control.path)
        let (_, controlReports, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--debug-cache", control.path])
        #expect(controlReports.count == 1)
        let entry = "\(control.path)/\(buildID).debug"
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: entry) && Date() < deadline { usleep(50_000) }
        try #require(FileManager.default.fileExists(atPath: entry), "the control cache was not filled within 10 s")
        #expect(try FileManager.default.contentsOfDirectory(atPath: open.path).isEmpty)

        let parent = try TemporaryDirectory("cw-debug-cache-none")
        let (_, noneReports, _) = try runCapturing(Paths.fixture("null_deref"), options: ["--debug-cache", "none"],
                                                   environment: ["XDG_CACHE_HOME": parent.path])
        #expect(noneReports.count == 1)
        let bad = try run(Paths.crashwatch, ["run", "--debug-cache", "relative/dir", "--", "/bin/true"])
        #expect(bad.termination == .exited(64) && bad.stderr.contains("--debug-cache"), "\(bad.stderr)")
    }

    @Test("capture limits are options with checked values")
    func limitOptions() throws {
        for bad in ["0", "12", "5G", "lots"] {
            let result = try run(Paths.crashwatch, ["run", "--max-stack-bytes", bad, "--", "/bin/true"])
            #expect(result.termination == .exited(64), "\(bad): \(result.stderr)")
            #expect(result.stderr.contains("--max-stack-bytes"), "\(result.stderr)")
        }
        let url = try run(Paths.crashwatch, ["run", "--debuginfod", "file:///etc", "--", "/bin/true"])
        #expect(url.termination == .exited(64) && url.stderr.contains("--debuginfod"), "\(url.stderr)")
    }
}
