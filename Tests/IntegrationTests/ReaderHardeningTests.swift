// ReaderHardeningTests.swift — the readers against careless and hostile input: a FIFO where a report path
// should be (never a hang), an overflowing `--since`, an age limit that would delete reports as they are
// written, and `symbolicate -o` writing like the spool does (0640, atomically, durably).
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct ReaderHardeningTests {
    @Test("show, export and symbolicate refuse a FIFO named as the report, at once, instead of blocking on it",
          arguments: [["show"], ["export"], ["symbolicate"]])
    func fifoReport(_ command: [String]) throws {
        let directory = try TemporaryDirectory("cw-fifo-report")
        let fifo = "\(directory.path)/report.json"
        try #require(mkfifo(fifo, 0o600) == 0)
        let started = Date()
        let spool = try ExampleSpool()
        let arguments = command[0] == "symbolicate" ? [command[0], fifo] : [command[0], "--spool", spool.path, fifo]
        let result = try run(Paths.crashwatch, arguments, timeout: 10)
        #expect(Date().timeIntervalSince(started) < 5, "\(command[0]) waited on the FIFO")
        #expect(result.termination == .exited(66), "\(result.stderr)")
        #expect(result.stderr.contains(fifo) && result.stderr.contains("not a regular file"), "\(result.stderr)")
    }

    @Test("symbolicate does not block on a FIFO named as an image path inside the report")
    func fifoImageInReport() throws {
        let directory = try TemporaryDirectory("cw-fifo-image")
        let fifo = "\(directory.path)/segv_reraise"
        try #require(mkfifo(fifo, 0o600) == 0)
        let text = try String(contentsOfFile: "\(Paths.root)/Fixtures/example-report.json", encoding: .utf8)
            .replacingOccurrences(of: "\"path\": \"/opt/demo/bin/segv_reraise\"", with: "\"path\": \"\(fifo)\"")
        try #require(text.contains(fifo))
        let report = "\(directory.path)/report.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: report))
        let started = Date()
        let result = try run(Paths.crashwatch, ["symbolicate", report], timeout: 20)
        #expect(Date().timeIntervalSince(started) < 10, "symbolicate waited on the FIFO")
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.contains("\"schemaVersion\""))
    }

    @Test("list --since a duration longer ago than the epoch lists every report (no arithmetic overflow)")
    func sinceOverflow() throws {
        let spool = try ExampleSpool()
        try spool.add(id: "11111111-0000-4000-8000-000000000001", time: "20261130T090157.123Z", pid: 4242)
        let result = try spool.crashwatch(["list", "--since", "100000000000"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.contains("4242"), "\(result.stdout)")
        // A duration that does not fit at all is a usage error, not a trap.
        let huge = try spool.crashwatch(["list", "--since", "99999999999999w"])
        #expect(huge.termination == .exited(64), "\(huge.stderr)")
    }

    @Test("an age limit under a minute is refused: it would remove reports as they are written")
    func maxAgeLowerBound() throws {
        let spool = try ExampleSpool()
        for age in ["0", "59s"] {
            let result = try spool.crashwatch(["prune", "--max-age", age])
            #expect(result.termination == .exited(64), "\(age): \(result.stderr)")
            #expect(result.stderr.contains("at least 1m"), "\(result.stderr)")
        }
        let fine = try spool.crashwatch(["prune", "--max-age", "1m"])
        #expect(fine.termination == .exited(0), "\(fine.stderr)")
    }

    @Test("symbolicate -o writes mode 0640 whatever the umask, atomically, leaving no temporary file")
    func symbolicateOutput() throws {
        let directory = try TemporaryDirectory("cw-symbolicate-out")
        let output = "\(directory.path)/out.json"
        let result = try run("/bin/sh", ["-c", "umask 000; exec '\(Paths.crashwatch)' symbolicate -o '\(output)' '\(Paths.root)/Fixtures/example-report.json'"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let mode = ((try FileManager.default.attributesOfItem(atPath: output))[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o640, "mode \(String(mode, radix: 8))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.json"])
    }
}

@Suite struct LatestReportTests {
    @Test("show latest and export latest skip a corrupt newest file, quarantine it with its reason, and show the newest good one",
          arguments: ["show", "export"])
    func corruptNewest(_ command: String) throws {
        let spool = try ExampleSpool()
        try spool.add(id: "11111111-0000-4000-8000-000000000001", time: "20261130T090157.123Z", pid: 4242)
        let bad = "20261201T090000.000Z-7-broken-22222222-0000-4000-8000-000000000002.json"
        try Data("{ this is not a report".utf8).write(to: URL(fileURLWithPath: "\(spool.path)/\(bad)"))
        chmod("\(spool.path)/\(bad)", 0o640)
        let result = try spool.crashwatch([command, "latest"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.contains("4242"), "\(result.stdout)")
        #expect(result.stderr.contains("quarantined \(bad)"), "\(result.stderr)")
        let quarantine = try FileManager.default.contentsOfDirectory(atPath: "\(spool.path)/.quarantine")
        #expect(quarantine.contains(bad) && quarantine.contains("\(bad).reason"), "\(quarantine)")
        // Only bad files: a clear error, nothing shown.
        let empty = try ExampleSpool()
        let worse = "20261201T090000.000Z-7-broken-33333333-0000-4000-8000-000000000003.json"
        try Data("[]".utf8).write(to: URL(fileURLWithPath: "\(empty.path)/\(worse)"))
        let none = try empty.crashwatch([command, "latest"])
        #expect(none.termination == .exited(66) && none.stderr.contains("no crash reports"), "\(none.stderr)")
    }
}

@Suite struct RedactionTests {
    @Test("--redact-args redacts a command line joined into one string (exec -a, setproctitle), not only separate arguments")
    func joinedArguments() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/bin/bash"), "bash is not installed; skip")
        let (result, reports, _) = try runCapturing("/bin/bash", ["-c", "exec -a 'app --password hunter2' '\(Paths.fixture("null_deref"))'"],
                                                    options: ["--redact-args"])
        #expect(result.termination == .signaled(SIGSEGV))
        let report = try #require(reports.first, "\(result.stderr)")
        let process = report.json["process"] as? [String: Any]
        let commandLine = process?["commandLine"] as? [String]
        #expect(commandLine == ["app <redacted>"], "\(commandLine ?? [])")
        #expect(process?["redacted"] as? Bool == true)
        #expect(!String(decoding: report.data, as: UTF8.self).contains("hunter2"))
    }
}

@Suite struct RawArgumentTests {
    @Test("run passes argument bytes that are not UTF-8 to the command untouched, and runs a command whose path is not UTF-8")
    func bytesUntouched() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/bin/bash"), "bash is not installed; skip")
        let printed = try run("/bin/bash", ["-c", "exec '\(Paths.crashwatch)' run -- /bin/sh -c 'printf %s \"$1\" | od -An -tx1' sh $'a\\xff\\xfeb'"])
        #expect(printed.termination == .exited(0), "\(printed.stderr)")
        #expect(printed.stdout.split(separator: " ").map(String.init).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                    .filter { !$0.isEmpty } == ["61", "ff", "fe", "62"], "\(printed.stdout)")

        let directory = try TemporaryDirectory("cw-raw-path")
        let name = "\(directory.path)/x"
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: name)
        // Rename to a name with the byte 0xff, which no Swift String can hold.
        let renamed = try run("/bin/bash", ["-c", "mv '\(name)' '\(directory.path)'/$'x\\xff'"])
        try #require(renamed.termination == .exited(0), "\(renamed.stderr)")
        let result = try run("/bin/bash", ["-c", "exec '\(Paths.crashwatch)' run -- '\(directory.path)'/$'x\\xff'"])
        #expect(result.termination == .exited(0), "exit \(result.termination): \(result.stderr)")
    }

    @Test("a report records argument bytes that are not UTF-8 exactly, as hex beside the readable command line")
    func reportKeepsExactBytes() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/bin/bash"), "bash is not installed; skip")
        let spool = try TemporaryDirectory("cw-raw-report")
        let crash = "exec '\(Paths.crashwatch)' run --spool '\(spool.path)' -- '\(Paths.fixture("null_deref"))' $'a\\xff\\xfeb' plain"
        let crashed = try run("/bin/bash", ["-c", crash])
        #expect(crashed.termination == .signaled(SIGSEGV), "\(crashed.stderr)")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: spool.path).first { $0.hasSuffix(".json") })
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool.path)/\(name)"))
        #expect(try SchemaValidator().validate(reportJSON: data).isEmpty)
        let process = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["process"] as? [String: Any])
        #expect(process["commandLine"] as? [String] == [Paths.fixture("null_deref"), "a\u{FFFD}\u{FFFD}b", "plain"])
        let hex = try #require(process["commandLineHex"] as? [String])
        #expect(hex.dropFirst() == ["61fffe62", "706c61696e"], "\(hex)")
        #expect(hex.first == Array(Paths.fixture("null_deref").utf8).map { String(format: "%02x", $0) }.joined())
        // show prints the exact bytes as a shell takes them back.
        let shown = try run(Paths.crashwatch, ["show", "--spool", spool.path, "\(spool.path)/\(name)"])
        #expect(shown.termination == .exited(0), "\(shown.stderr)")
        #expect(shown.stdout.contains("$'a\\xff\\xfeb' plain"), "\(shown.stdout)")
        // A UTF-8 command line needs no hex.
        let (_, plain, _) = try runCapturing(Paths.fixture("null_deref"), ["é"])
        #expect((plain.first?.json["process"] as? [String: Any])?["commandLineHex"] is NSNull)
    }
}

@Suite(.serialized) struct DyingSupervisorTests {
    @Test("crashwatch SIGKILLed while it holds a process for an outside SIGQUIT: the process still dies of SIGQUIT")
    func fatalSignalSurvives() throws {
        let directory = try TemporaryDirectory("cw-dying-supervisor")
        // threads1000 wait: 1,001 threads make the hold long enough for the watcher to land in it.
        let script = """
            cd '\(directory.path)'
            '\(Paths.fixture("clean_exec"))' '\(Paths.crashwatch)' run --spool spool -- '\(Paths.fixture("threads1000"))' wait > out 2> err &
            CW=$!
            i=0; until grep -q ready out 2>/dev/null; do i=$((i+1)); [ $i -gt 400 ] && exit 3; sleep 0.02; done
            APP=$(cat /proc/$CW/task/*/children | tr ' ' '\\n' | grep . | head -1)
            [ -n "$APP" ] || exit 4
            echo "$APP" > app.pid
            kill -QUIT $APP
            i=0; until grep -q 'crashed:' err 2>/dev/null; do i=$((i+1)); [ $i -gt 20000 ] && break; done
            kill -9 $CW
            i=0; while [ -e /proc/$APP ] && ! grep -q '^State:.*Z' /proc/$APP/status 2>/dev/null; do
              i=$((i+1)); [ $i -gt 100 ] && { echo ALIVE; kill -9 $APP; exit 1; }; sleep 0.05
            done
            echo GONE
            """
        let result = try run("/bin/bash", ["-c", script], timeout: 60)
        #expect(result.termination == .exited(0) && result.stdout.contains("GONE"),
                "exit \(result.termination), stdout \(result.stdout), stderr \(result.stderr)")
    }
}
