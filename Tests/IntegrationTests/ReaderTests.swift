// ReaderTests.swift — the readers as coredumpctl users expect them: `list MATCH…` for every kind of MATCH
// (PID, executable path and name, unit=, kind=, uid=, signal=), --since/--until in coredumpctl's forms, -r,
// -n, the KIND/UNIT/VERSION columns and --columns, kind and unit in --json; show by PID and MATCH, --brief,
// --thread and the pager (through script(1)) — on reports of real fixture
// crashes under `crashwatch run`, and on example reports where a field (unit, kind) needs a chosen value.
import CrashwatchTestSupport
import Foundation
import Testing

/// A spool holding two real crashes: null_deref (SIGSEGV) and abort (SIGABRT), in that order.
struct CrashedSpool {
    let directory: TemporaryDirectory
    var path: String { directory.path }
    /// The crash lines of null_deref's and abort's runs.
    let segv: CrashLine
    let abrt: CrashLine

    init() throws {
        directory = try TemporaryDirectory("cw-readers")
        let first = try run(Paths.crashwatch, ["run", "--spool", directory.path, "--", Paths.fixture("null_deref")])
        let second = try run(Paths.crashwatch, ["run", "--spool", directory.path, "--", Paths.fixture("abort")])
        segv = try #require(first.crashLines.first, "\(first.stderr)")
        abrt = try #require(second.crashLines.first, "\(second.stderr)")
    }

    /// Runs `crashwatch COMMAND --spool SPOOL ARGS…`.
    func crashwatch(_ command: String, _ arguments: [String] = []) throws -> RunResult {
        try run(Paths.crashwatch, [command, "--spool", path] + arguments)
    }

    /// The pids `list --json ARGS…` prints, in its order (the run must succeed).
    func listedPIDs(_ arguments: [String]) throws -> [Int32] {
        let result = try crashwatch("list", ["--json"] + arguments)
        #expect(result.termination == .exited(0), "\(arguments): \(result.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return items.compactMap { ($0["pid"] as? Int).map(Int32.init) }
    }
}

@Suite(.serialized) struct ReaderTests {
    @Test("list MATCH: a PID, an executable path or name, signal=, kind=, uid= — every one must hold")
    func matches() throws {
        let spool = try CrashedSpool()
        defer { spool.directory.remove() }
        let (segv, abrt) = (spool.segv.pid, spool.abrt.pid)
        #expect(try spool.listedPIDs([]) == [abrt, segv])
        #expect(try spool.listedPIDs([String(segv)]) == [segv])
        #expect(try spool.listedPIDs(["pid=\(abrt)"]) == [abrt])
        #expect(try spool.listedPIDs(["abort"]) == [abrt])
        #expect(try spool.listedPIDs([Paths.fixture("null_deref")]) == [segv])
        #expect(try spool.listedPIDs(["exe=null_deref"]) == [segv])
        #expect(try spool.listedPIDs(["/elsewhere/null_deref"]) == [])
        #expect(try spool.listedPIDs(["signal=SIGABRT"]) == [abrt])
        #expect(try spool.listedPIDs(["signal=11"]) == [segv])
        #expect(try spool.listedPIDs(["signal=segv"]) == [segv])
        #expect(try spool.listedPIDs(["kind=crash"]) == [abrt, segv])
        #expect(try spool.listedPIDs(["kind=hang"]) == [])
        #expect(try spool.listedPIDs(["uid=\(getuid())"]) == [abrt, segv])
        #expect(try spool.listedPIDs(["uid=\(getuid() + 1)"]) == [])
        #expect(try spool.listedPIDs(["unit=nothing.service"]) == [])
        // Several MATCHes: all must hold.
        #expect(try spool.listedPIDs(["abort", "signal=SIGABRT", "kind=crash"]) == [abrt])
        #expect(try spool.listedPIDs(["abort", "signal=SIGSEGV"]) == [])
        // -r: oldest first; -n keeps the newest N, -r then prints them oldest first.
        #expect(try spool.listedPIDs(["-r"]) == [segv, abrt])
        #expect(try spool.listedPIDs(["-n", "1"]) == [abrt])
        #expect(try spool.listedPIDs(["-r", "-n", "1"]) == [abrt])
        // Mistakes are usage errors that say what a MATCH is.
        for bad in ["colour=red", "kind=crashed", "signal=SIGNOPE", "uid=me", "0"] {
            let result = try spool.crashwatch("list", [bad])
            #expect(result.termination == .exited(64), "\(bad)")
            #expect(result.stderr.contains("crashwatch: "), "\(bad): \(result.stderr)")
        }
    }

    @Test("list shows KIND (and UNIT, VERSION when there) and --json has kind and unit; --columns picks columns")
    func columns() throws {
        let spool = try CrashedSpool()
        defer { spool.directory.remove() }
        let text = try spool.crashwatch("list").stdout
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("TIME (UTC)") == true && lines.first?.contains("  KIND  ") == true, "\(text)")
        #expect(lines.first?.contains("UNIT") == false && lines.first?.contains("VERSION") == false, "no report has one: \(text)")
        #expect(lines.dropFirst().allSatisfy { $0.contains("  crash  SIGABRT  ") || $0.contains("  crash  SIGSEGV  ") }, "\(text)")

        let json = try spool.crashwatch("list", ["--json"]).stdout
        let items = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(items.map { $0["kind"] as? String } == ["crash", "crash"])
        #expect(items.allSatisfy { $0["unit"] is NSNull })

        let chosen = try spool.crashwatch("list", ["--columns", "pid,kind,signal"])
        let width = max(3, String(spool.abrt.pid).count, String(spool.segv.pid).count)
        let expected = ["PID".leftPadded(to: width) + "  KIND   SIGNAL",
                        String(spool.abrt.pid).leftPadded(to: width) + "  crash  SIGABRT",
                        String(spool.segv.pid).leftPadded(to: width) + "  crash  SIGSEGV"]
        #expect(chosen.stdout == expected.map { $0 + "\n" }.joined())
        #expect(try spool.crashwatch("list", ["--columns", "pid,colour"]).termination == .exited(64))
    }

    @Test("list unit=NAME matches with or without .service; kind=abnormalExit; the UNIT and VERSION columns")
    func unitsAndKinds() throws {
        let spool = try ExampleSpool()
        defer { spool.directory.remove() }
        try spool.add(id: "44444444-0000-4000-8000-000000000004", time: "20261130T090000.000Z", pid: 41)
        let other = try spool.add(id: "55555555-0000-4000-8000-000000000005", time: "20261130T100000.000Z", pid: 42)
        // The second report ran in another unit and was an abnormal exit (SIGKILL).
        let url = URL(fileURLWithPath: "\(spool.path)/\(other)")
        let text = try String(contentsOf: url, encoding: .utf8)
            .replacingOccurrences(of: "\"systemdUnit\": \"demo.service\"", with: "\"systemdUnit\": \"shop-worker.service\"")
            .replacingOccurrences(of: "\"id\": \"55555555-0000-4000-8000-000000000005\",\n  \"kind\": \"crash\"",
                                  with: "\"id\": \"55555555-0000-4000-8000-000000000005\",\n  \"kind\": \"abnormalExit\"")
        try Data(text.utf8).write(to: url)
        func pids(_ arguments: [String]) throws -> [Int] {
            let result = try spool.crashwatch(["list", "--json"] + arguments)
            #expect(result.termination == .exited(0), "\(result.stderr)")
            let items = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            return items.compactMap { $0["pid"] as? Int }
        }
        #expect(try pids(["unit=demo"]) == [41])
        #expect(try pids(["unit=demo.service"]) == [41])
        #expect(try pids(["unit=shop-worker"]) == [42])
        #expect(try pids(["kind=abnormalExit"]) == [42])
        #expect(try pids(["kind=crash"]) == [41])
        let listed = try spool.crashwatch(["list"]).stdout
        #expect(listed == """
            TIME (UTC)           PID  KIND          SIGNAL   UNIT                 VERSION  EXECUTABLE                  TOP FRAME                       ID
            2026-11-30 10:00:00   42  abnormalExit  SIGSEGV  shop-worker.service  2.4.1    /opt/demo/bin/segv_reraise  store_byte (segv_reraise.c:31)  55555555
            2026-11-30 09:00:00   41  crash         SIGSEGV  demo.service         2.4.1    /opt/demo/bin/segv_reraise  store_byte (segv_reraise.c:31)  44444444

            """)
    }

    @Test("--since and --until take coredumpctl's forms: absolute, -2h, '2h ago', today, yesterday, @SECONDS")
    func timeRanges() throws {
        let spool = try ExampleSpool()
        defer { spool.directory.remove() }
        let now = Date()
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        try spool.add(id: "66666666-0000-4000-8000-000000000006", time: formatter.string(from: now.addingTimeInterval(-3 * 86_400)), pid: 61)
        // An hour ago, or half-way back to midnight when today (UTC) began less than two hours ago: the report
        // must be today's for "--until today".
        let sinceMidnight = now.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400)
        let recent = now.addingTimeInterval(-min(3_600, sinceMidnight / 2))
        try spool.add(id: "77777777-0000-4000-8000-000000000007", time: formatter.string(from: recent), pid: 62)
        func pids(_ arguments: [String]) throws -> [Int] {
            let result = try spool.crashwatch(["list", "--json"] + arguments)
            #expect(result.termination == .exited(0), "\(arguments): \(result.stderr)")
            let items = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            return items.compactMap { $0["pid"] as? Int }
        }
        #expect(try pids(["--since", "-2h"]) == [62])
        #expect(try pids(["--since", "2h ago"]) == [62])
        #expect(try pids(["-S", "2h"]) == [62])
        #expect(try pids(["--since", "yesterday"]) == [62])
        #expect(try pids(["--until", "yesterday"]) == [61])
        #expect(try pids(["--until", "-2h"]) == [61])
        #expect(try pids(["-U", "now", "--since", "-7d"]) == [62, 61])
        #expect(try pids(["--since", "tomorrow"]) == [])
        #expect(try pids(["--until", "today", "-r"]) == [61])
        let epoch = Int(now.timeIntervalSince1970) - 7_200
        #expect(try pids(["--since", "@\(epoch)"]) == [62])
        let day = DateFormatter()
        day.timeZone = TimeZone(identifier: "UTC")
        day.locale = Locale(identifier: "en_US_POSIX")
        day.dateFormat = "yyyy-MM-dd HH:mm:ss"
        #expect(try pids(["--until", day.string(from: now.addingTimeInterval(-7_200))]) == [61])
        #expect(try spool.crashwatch(["list", "--since", "last week"]).termination == .exited(64))
        #expect(try spool.crashwatch(["list", "--since", "today", "--until", "yesterday"]).termination == .exited(64))
    }
}

/// `show` as coredumpctl's info: by PID and MATCH, the brief and one-thread pages, the pager on a terminal.
@Suite(.serialized) struct ShowReaderTests {
    @Test("show PID and show MATCH pick the latest matching report; --brief and --thread print less")
    func pickAndViews() throws {
        let spool = try CrashedSpool()
        defer { spool.directory.remove() }
        let byPID = try spool.crashwatch("show", [String(spool.segv.pid), "--json"])
        #expect(byPID.termination == .exited(0), "\(byPID.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(byPID.stdout.utf8)) as? [String: Any])
        let process = try #require(report["process"] as? [String: Any])
        #expect(process["pid"] as? Int == Int(spool.segv.pid))
        let byName = try spool.crashwatch("show", ["null_deref", "signal=SIGSEGV"])
        #expect(byName.termination == .exited(0) && byName.stdout.contains("Process: \(spool.segv.pid) (null_deref)"), "\(byName.stdout)")
        let byPath = try spool.crashwatch("show", [Paths.fixture("abort")])
        #expect(byPath.stdout.contains("Process: \(spool.abrt.pid) (abort)"), "\(byPath.stdout)\(byPath.stderr)")
        let none = try spool.crashwatch("show", ["null_deref", "signal=SIGABRT"])
        #expect(none.termination == .exited(66) && none.stderr.contains("no crash report matching null_deref signal=SIGABRT"), "\(none.stderr)")

        // --brief: the headline, then the crashed thread only (no registers, no other threads, no images).
        let brief = try spool.crashwatch("show", ["--brief", String(spool.segv.pid)])
        let lines = brief.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Process \(spool.segv.pid) (null_deref) crashed: SIGSEGV (SEGV_MAPERR) at 0x0 in crash_here (null_deref.c:21)",
                "\(brief.stdout)")
        #expect(lines.contains("Crashed thread \(spool.segv.tid) \"null_deref\""), "\(brief.stdout)")
        #expect(lines.contains { $0.hasPrefix("  * #0 ") && $0.contains("crash_here (null_deref.c:21) in null_deref") }, "\(brief.stdout)")
        #expect(!brief.stdout.contains("Registers") && !brief.stdout.contains("Images") && !brief.stdout.contains("Other threads"))
        #expect(lines.count < 20, "\(brief.stdout)")

        // --thread TID: the header and that thread with its registers; an unknown thread is exit 66.
        let thread = try spool.crashwatch("show", ["--thread", String(spool.segv.tid), String(spool.segv.pid)])
        #expect(thread.termination == .exited(0))
        #expect(thread.stdout.contains("Crashed thread \(spool.segv.tid)") && thread.stdout.contains("Registers") && thread.stdout.contains("rip"),
                "\(thread.stdout)")
        #expect(!thread.stdout.contains("Images"))
        let missing = try spool.crashwatch("show", ["--thread", "1", String(spool.segv.pid)])
        #expect(missing.termination == .exited(66) && missing.stderr.contains("has no thread 1 (threads: \(spool.segv.tid))"), "\(missing.stderr)")
        #expect(try spool.crashwatch("show", ["--brief", "--json"]).termination == .exited(64))
    }

    @Test("on a terminal show pages through $PAGER (or $SYSTEMD_PAGER); never with --no-pager or into a pipe")
    func pager() throws {
        guard let script = Paths.which("script") else {
            Issue.record("script(1) (util-linux) is needed to give show a terminal")
            return
        }
        let spool = try CrashedSpool()
        defer { spool.directory.remove() }
        let paged = spool.directory.join("paged.txt")
        // The pager copies its input to a file and says so: what reached it is exactly the page.
        let pager = "cat > \(paged); echo PAGER-RAN"
        func onTerminal(_ arguments: [String], environment: [String: String]) throws -> RunResult {
            // A terminal of 50 rows and 250 columns: each page here fits on one screen.
            let command = "stty rows 50 cols 250; " + ([Paths.crashwatch, "show", "--spool", spool.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            return try run(script, ["-qec", command, "/dev/null"], environment: environment)
        }
        let shown = try onTerminal(["--brief", "--color", "never"], environment: ["PAGER": pager, "SYSTEMD_PAGER": ""].filter { !$0.value.isEmpty })
        #expect(shown.stdout.contains("PAGER-RAN"), "\(shown.stdout)")
        let pagedText = try String(contentsOfFile: paged, encoding: .utf8)
        let direct = try spool.crashwatch("show", ["--brief"])
        #expect(pagedText == direct.stdout)
        try FileManager.default.removeItem(atPath: paged)

        let systemd = try onTerminal(["--brief"], environment: ["PAGER": "false", "SYSTEMD_PAGER": pager])
        #expect(systemd.stdout.contains("PAGER-RAN"), "$SYSTEMD_PAGER wins over $PAGER: \(systemd.stdout)")
        try FileManager.default.removeItem(atPath: paged)

        let unpaged = try onTerminal(["--brief", "--no-pager"], environment: ["PAGER": pager])
        #expect(!unpaged.stdout.contains("PAGER-RAN") && unpaged.stdout.contains("crashed: SIGABRT"), "\(unpaged.stdout)")
        #expect(!FileManager.default.fileExists(atPath: paged))
        let cat = try onTerminal(["--brief"], environment: ["PAGER": "cat"])
        #expect(!cat.stdout.contains("PAGER-RAN") && cat.stdout.contains("crashed: SIGABRT"))
        // Into a pipe: never a pager, whatever $PAGER says.
        let piped = try run(Paths.crashwatch, ["show", "--spool", spool.path, "--brief"], environment: ["PAGER": pager])
        #expect(!piped.stdout.contains("PAGER-RAN") && !FileManager.default.fileExists(atPath: paged))
        // The default pager: less -FRSX, which quits at once when the page fits (script gives a terminal).
        // (TERM names a real terminal: on a dumb one less asks for RETURN first; lines longer than the
        // terminal keep `less -F` from quitting by itself, hence the wide terminal.)
        let less = try onTerminal(["--brief"], environment: ["TERM": "xterm"])
        #expect(less.termination == .exited(0) && less.stdout.contains("crashed: SIGABRT"), "\(less.stdout)")
    }
}

extension String {
    /// The string padded on the left with spaces to `width` characters.
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
