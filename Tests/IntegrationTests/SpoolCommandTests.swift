// SpoolCommandTests.swift — the spool's readers end to end: list and show compared in full against
// expected text, quarantine of every kind of bad file, symlink attacks, permissions, retention through
// `prune`, claim/ack/release, and a storm of concurrent writers and readers.
import CrashwatchTestSupport
import Foundation
import Testing

/// A spool filled with copies of Fixtures/example-report.json under chosen ids, times, pids and executables.
struct ExampleSpool: Sendable {
    let directory: TemporaryDirectory
    var path: String { directory.path }
    static let example = (try? String(contentsOfFile: "\(Paths.root)/Fixtures/example-report.json", encoding: .utf8)) ?? ""

    init() throws { directory = try TemporaryDirectory("cw-spool-cli") }

    /// Adds a report; `time` is `YYYYMMDDTHHMMSS.mmmZ`. Returns the file name.
    @discardableResult
    func add(id: String, time: String, pid: Int, executable: String = "/opt/demo/bin/segv_reraise", signal: String = "SIGSEGV") throws -> String {
        let d = Array(time)
        let rfc = "\(String(d[0..<4]))-\(String(d[4..<6]))-\(String(d[6..<8]))T\(String(d[9..<11])):\(String(d[11..<13])):\(String(d[13..<19]))Z"
        var text = Self.example
            .replacingOccurrences(of: "3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13", with: id)
            .replacingOccurrences(of: "\"captureTime\": \"2026-11-30T09:01:57.123Z\"", with: "\"captureTime\": \"\(rfc)\"")
            .replacingOccurrences(of: "\"pid\": 4242", with: "\"pid\": \(pid)")
            .replacingOccurrences(of: "\"executable\": \"/opt/demo/bin/segv_reraise\"", with: "\"executable\": \"\(executable)\"")
        if signal != "SIGSEGV" { text = text.replacingOccurrences(of: "\"name\": \"SIGSEGV\"", with: "\"name\": \"\(signal)\"") }
        // The executable's tag, sanitised as crashwatch names reports.
        let tag = String((executable as NSString).lastPathComponent.map { $0.isASCII && ($0.isLetter || $0.isNumber || "_.+".contains($0)) ? $0 : "_" })
        let name = "\(time)-\(pid)-\(tag)-\(id).json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(path)/\(name)"))
        chmod("\(path)/\(name)", 0o640)
        return name
    }

    /// Runs `crashwatch ARGS --spool SPOOL`.
    func crashwatch(_ arguments: [String]) throws -> RunResult {
        guard let command = arguments.first else { return try run(Paths.crashwatch, []) }
        return try run(Paths.crashwatch, [command, "--spool", path] + arguments.dropFirst())
    }
}

@Suite struct SpoolCommandTests {
    static let ids = ["11111111-0000-4000-8000-000000000001", "22222222-0000-4000-8000-000000000002",
                      "33333333-0000-4000-8000-000000000003"]

    func threeReports() throws -> ExampleSpool {
        let spool = try ExampleSpool()
        try spool.add(id: Self.ids[0], time: "20261130T090157.123Z", pid: 4242)
        try spool.add(id: Self.ids[1], time: "20261130T100000.500Z", pid: 77, executable: "/usr/local/bin/worker")
        try spool.add(id: Self.ids[2], time: "20261201T080000.000Z", pid: 9, executable: "/srv/app/bin/api server", signal: "SIGABRT")
        return spool
    }

    @Test("list prints every report newest first, in aligned columns, without color in a pipe")
    func listText() throws {
        let spool = try threeReports()
        let result = try spool.crashwatch(["list"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout == """
            TIME (UTC)            PID  KIND   SIGNAL   UNIT          VERSION  EXECUTABLE                  TOP FRAME                       ID
            2026-12-01 08:00:00     9  crash  SIGABRT  demo.service  2.4.1    /srv/app/bin/api server     store_byte (segv_reraise.c:31)  33333333
            2026-11-30 10:00:00    77  crash  SIGSEGV  demo.service  2.4.1    /usr/local/bin/worker       store_byte (segv_reraise.c:31)  22222222
            2026-11-30 09:01:57  4242  crash  SIGSEGV  demo.service  2.4.1    /opt/demo/bin/segv_reraise  store_byte (segv_reraise.c:31)  11111111

            """)
        #expect(!result.stdout.contains("\u{1b}["))
        let colored = try spool.crashwatch(["list", "--color", "always", "--limit", "1"])
        #expect(colored.stdout.contains("\u{1b}[") && colored.stdout.contains("33333333") && !colored.stdout.contains("22222222"))
    }

    @Test("list --json gives the same fields; --limit and --since select")
    func listJSON() throws {
        let spool = try threeReports()
        let result = try spool.crashwatch(["list", "--json", "--since", "2026-11-30T09:30:00Z"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(items.map { $0["id"] as? String } == [Self.ids[2], Self.ids[1]])
        #expect(items[1]["executable"] as? String == "/usr/local/bin/worker" && items[1]["pid"] as? Int == 77)
        #expect(items[1]["signal"] as? String == "SIGSEGV" && items[1]["code"] as? String == "SI_TKILL")
        #expect(items[1]["topFrame"] as? String == "store_byte (segv_reraise.c:31)")
        let limited = try spool.crashwatch(["list", "--json", "-n", "1"])
        #expect((try JSONSerialization.jsonObject(with: Data(limited.stdout.utf8)) as? [Any])?.count == 1)
        #expect(try spool.crashwatch(["list", "--since", "the day before"]).termination == .exited(64))
    }

    @Test("show renders one report for people; by unique id prefix, file name or latest")
    func show() throws {
        let spool = try threeReports()
        let byPrefix = try spool.crashwatch(["show", "2222"])
        #expect(byPrefix.termination == .exited(0), "\(byPrefix.stderr)")
        let expectedHead = """
                    Report: 22222222-0000-4000-8000-000000000002
                      Time: 2026-11-30 10:00:00.500 UTC (capture took 18.8 ms)
                   Process: 77 (segv_reraise), parent 4200
                Executable: /usr/local/bin/worker
                   Command: /opt/demo/bin/segv_reraise --mode 'write "quoted"'
                 Directory: /srv/demo
                       App: demo 2.4.1 (2.4.1+g1a2b3c)
                    Signal: 11 (SIGSEGV), code -6 (SI_TKILL), Segmentation fault: sent by tkill() or raise() by pid 4242 uid 1000
            Original fault: SIGSEGV (SEGV_MAPERR) at 0x0 on thread 4242 at 2026-11-30 09:01:57.120 UTC
            """
        #expect(byPrefix.stdout.hasPrefix(expectedHead), "\(byPrefix.stdout)")
        #expect(byPrefix.stdout.contains("Crashed thread ") && byPrefix.stdout.contains("store_byte (segv_reraise.c:31)"))
        #expect(byPrefix.stdout.contains("Images"))
        // The app's annotations and breadcrumbs (the example report has three and two), after where it died.
        #expect(byPrefix.stdout.contains("\n\nAnnotations (3)\n  region        = eu-west-1\n  request_id    = 7f3a-19\n"
            + "  session_token = <redacted>\n\nBreadcrumbs (2)\n"), "\(byPrefix.stdout)")
        #expect(byPrefix.stdout.contains("  info     GET /orders/42\n") && byPrefix.stdout.contains("  warning  cache miss for user 42\n"))
        let brief = try spool.crashwatch(["show", "--brief", "2222"])
        #expect(brief.termination == .exited(0) && !brief.stdout.contains("Annotations") && !brief.stdout.contains("GET /orders"))
        let newest = try spool.crashwatch(["show", "--breadcrumbs", "1", "2222"])
        #expect(newest.stdout.contains("Breadcrumbs (2)\n  (1 earlier)\n") && !newest.stdout.contains("GET /orders"), "\(newest.stdout)")
        let every = try spool.crashwatch(["show", "--breadcrumbs", "all", "2222"])
        #expect(every.stdout.contains("GET /orders/42") && every.stdout.contains("cache miss for user 42") && !every.stdout.contains("earlier)"))
        for wrong in [["--breadcrumbs", "-1"], ["--breadcrumbs", "some"], ["--breadcrumbs", "3", "--brief"], ["--breadcrumbs", "3", "--json"]] {
            let refused = try spool.crashwatch(["show"] + wrong + ["2222"])
            #expect(refused.termination == .exited(64) && refused.stderr.contains("--breadcrumbs"), "\(wrong): \(refused.stderr)")
        }
        let latest = try spool.crashwatch(["show"])
        #expect(latest.stdout.contains("Report: 33333333-0000-4000-8000-000000000003"))
        let json = try spool.crashwatch(["show", "--json", "1111"])
        #expect(json.stdout.contains("\"id\": \"11111111-0000-4000-8000-000000000001\""))
        let text = try spool.crashwatch(["export", "--format", "text", "1111"])
        #expect(text.stdout.contains("Report: 11111111-0000-4000-8000-000000000001") && !text.stdout.contains("\u{1b}["))
        #expect(try spool.crashwatch(["show", "9999"]).termination == .exited(66))
        #expect(try spool.crashwatch(["show", "../../etc/passwd.json"]).termination == .exited(66))
        try spool.add(id: "22222222-1111-4000-8000-000000000009", time: "20261130T100001.000Z", pid: 78)
        let ambiguous = try spool.crashwatch(["show", "2222"])
        #expect(ambiguous.termination == .exited(66) && ambiguous.stderr.contains("2222"), "\(ambiguous.stderr)")
    }

    @Test("bad files are quarantined with their reason and never stop a listing")
    func quarantine() throws {
        let spool = try threeReports()
        let bad = [
            ("20261130T110000.000Z-1-bad-44444444-0000-4000-8000-000000000001.json", Data("not json".utf8)),
            ("20261130T110001.000Z-1-bad-44444444-0000-4000-8000-000000000002.json", Data(ExampleSpool.example.prefix(300).utf8)),
            ("20261130T110002.000Z-1-bad-44444444-0000-4000-8000-000000000003.json",
             Data(ExampleSpool.example.replacingOccurrences(of: "\"schemaVersion\": 1", with: "\"schemaVersion\": 99").utf8)),
        ]
        for (name, data) in bad { try data.write(to: URL(fileURLWithPath: "\(spool.path)/\(name)")) }
        // Too big: a sparse file over the 64 MiB read limit.
        let huge = "20261130T110003.000Z-1-bad-44444444-0000-4000-8000-000000000004.json"
        _ = FileManager.default.createFile(atPath: "\(spool.path)/\(huge)", contents: nil)
        truncate("\(spool.path)/\(huge)", 65 << 20)

        let result = try spool.crashwatch(["list"])
        #expect(result.termination == .exited(0))
        #expect(result.stdout.split(separator: "\n").count == 4, "the three good reports and the header: \(result.stdout)")
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: "\(spool.path)/.quarantine")
        for (name, _) in bad + [(huge, Data())] {
            #expect(quarantined.contains(name) && quarantined.contains(name + ".reason"), "\(name) not quarantined: \(quarantined)")
        }
        let reason = try String(contentsOfFile: "\(spool.path)/.quarantine/\(bad[2].0).reason", encoding: .utf8)
        #expect(reason.contains("99"), "\(reason)")
        #expect(result.stderr.split(separator: "\n").filter { $0.hasPrefix("crashwatch: quarantined ") }.count == 4)
    }

    @Test("symbolic links are never followed: not as a report, not as the quarantine, not as the spool")
    func symlinks() throws {
        let spool = try threeReports()
        let secret = try TemporaryDirectory("cw-secret")
        let target = "\(secret.path)/shadow"
        try Data("secret".utf8).write(to: URL(fileURLWithPath: target))
        let planted = "20261130T120000.000Z-1-evil-55555555-0000-4000-8000-000000000001.json"
        try FileManager.default.createSymbolicLink(atPath: "\(spool.path)/\(planted)", withDestinationPath: target)
        let listed = try spool.crashwatch(["list", "--json"])
        #expect(listed.termination == .exited(0) && !listed.stdout.contains("55555555"))
        let shown = try spool.crashwatch(["show", planted])
        #expect(shown.termination != .exited(0) && !shown.stdout.contains("secret"))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "secret")

        // A planted .quarantine symlink is refused, and the listing still completes.
        try FileManager.default.createSymbolicLink(atPath: "\(spool.path)/.quarantine", withDestinationPath: secret.path)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: "\(spool.path)/20261130T120001.000Z-1-bad-55555555-0000-4000-8000-000000000002.json"))
        let again = try spool.crashwatch(["list"])
        #expect(again.termination == .exited(0))
        #expect(again.stderr.contains(".quarantine"), "\(again.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: secret.path) == ["shadow"])

        // A link as the spool that another user owns is not followed (root's own links are: SpoolTrustTests).
        let link = "\(secret.path)/spool-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: spool.path)
        try #require(lchown(link, 65534, 65534) == 0)
        let viaLink = try run(Paths.crashwatch, ["list", "--spool", link])
        #expect(viaLink.termination == .exited(74) && viaLink.stderr.contains("symbolic link"), "\(viaLink.stderr)")
    }

    @Test("a spool others can write without the sticky bit is refused; reports are never world-readable")
    func permissions() throws {
        let spool = try threeReports()
        chmod(spool.path, 0o777)
        let refused = try spool.crashwatch(["list"])
        #expect(refused.termination == .exited(74) && refused.stderr.contains("sticky"), "\(refused.stderr)")
        chmod(spool.path, 0o1777)
        #expect(try spool.crashwatch(["list"]).termination == .exited(0))
        let (_, reports, _) = try runCapturing(Paths.fixture("null_deref"))
        #expect(!reports.isEmpty)  // runCapturing checks each report's mode is exactly 0640
    }

    @Test("prune: flood guard first, then age, count and bytes; claimed reports are kept and named")
    func prune() throws {
        let spool = try ExampleSpool()
        // A crash loop: 12 reports of one executable, then 3 of others, all recent.
        for index in 0..<12 {
            try spool.add(id: String(format: "aaaaaaaa-0000-4000-8000-%012d", index), time: String(format: "20261130T1000%02d.000Z", index),
                          pid: 100 + index, executable: "/opt/loop/bin/looper")
        }
        for index in 0..<3 {
            try spool.add(id: String(format: "bbbbbbbb-0000-4000-8000-%012d", index), time: String(format: "20261130T0900%02d.000Z", index),
                          pid: 200 + index, executable: "/opt/other\(index)/bin/svc")
        }
        let dry = try spool.crashwatch(["prune", "--max-per-exe", "4", "--max-reports", "6", "--dry-run"])
        // Flood guard: 8 of the looper's 12; then 7 left over a limit of 6: the oldest other report.
        #expect(dry.stdout.contains("9 would be removed"), "\(dry.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.path).count == 15)

        let claimed = try spool.crashwatch(["claim"])  // the oldest: bbbbbbbb-...0 (held by its parent, this test)
        #expect(claimed.stdout.hasPrefix("bbbbbbbb-0000-4000-8000-000000000000 "), "\(claimed.stdout)")
        let result = try spool.crashwatch(["prune", "--max-per-exe", "4", "--max-reports", "6"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let remaining = try FileManager.default.contentsOfDirectory(atPath: spool.path).filter { $0.hasSuffix(".json") }
        // The looper keeps its newest 4; both other services survive the flood.
        #expect(remaining.filter { $0.contains("-looper-") }.count == 4)
        #expect(remaining.filter { $0.contains("-svc-") }.count == 2)
        #expect(result.stdout.contains("kept 20261130T090000.000Z-200-svc-bbbbbbbb") && result.stdout.contains("claimed by a reader"),
                "\(result.stdout)")

        let aged = try spool.crashwatch(["prune", "--max-age", "1m"])  // every report is older than a minute
        #expect(aged.termination == .exited(0))
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.path).filter { $0.hasSuffix(".json") }.isEmpty)
        #expect(try spool.crashwatch(["prune", "--max-bytes", "lots"]).termination == .exited(64))
    }

    @Test("prune --max-bytes keeps the spool under the size, newest kept")
    func pruneBytes() throws {
        let spool = try threeReports()
        let size = try FileManager.default.attributesOfItem(atPath: "\(spool.path)/" + (try FileManager.default.contentsOfDirectory(atPath: spool.path).first!))[.size] as! Int
        let result = try spool.crashwatch(["prune", "--max-bytes", "\(size * 2 + 10)"])
        #expect(result.stdout.contains("1 removed"), "\(result.stdout)")
        let remaining = try FileManager.default.contentsOfDirectory(atPath: spool.path).sorted()
        #expect(remaining.count == 2 && remaining.last!.contains("33333333"))
    }

    @Test("claim, ack and release: one reader at a time, a dead reader's claim is taken again")
    func claims() throws {
        let spool = try threeReports()
        let first = try spool.crashwatch(["claim", "--limit", "2", "--holder", "\(getpid())"])
        let claimedIDs = first.stdout.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        #expect(claimedIDs == [Self.ids[0], Self.ids[1]])
        // Held by this live test process: another claim (by default held by its shell) gets the third report only.
        let second = try run("/bin/sh", ["-c", "'\(Paths.crashwatch)' claim --spool '\(spool.path)' --limit 5"])
        #expect(second.stdout.split(separator: "\n").map { String($0.split(separator: " ")[0]) } == [Self.ids[2]])
        // The second claimer's shell exited: its claim is stale and is taken again first.
        let third = try spool.crashwatch(["claim", "--holder", "\(getpid())"])
        #expect(third.stdout.hasPrefix(Self.ids[2]))
        // A claim held by a live process cannot be acked by someone else (here a shell, the default holder).
        let refused = try run("/bin/sh", ["-c", "'\(Paths.crashwatch)' ack --spool '\(spool.path)' 1111"])
        #expect(refused.termination == .exited(74) && refused.stderr.contains("\(getpid())"), "\(refused.stderr)")
        #expect(try spool.crashwatch(["ack", "1111", "--holder", "\(getpid())"]).termination == .exited(0))
        #expect(try spool.crashwatch(["release", "2222", "--holder", "\(getpid())"]).termination == .exited(0))
        let listed = try spool.crashwatch(["list", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(items.map { $0["id"] as? String } == [Self.ids[1]], "released back, the acked one gone, the third still claimed")
    }

    @Test("a storm of writers and claiming readers: no torn file, every report read once or pruned")
    func storm() throws {
        let spool = try ExampleSpool()
        let total = 1000, crashers = 4, crashesEach = 15
        let apiWriters = 4
        let apiEach = (total - crashers * crashesEach) / apiWriters
        let ledger = Ledger()
        let writersDone = DispatchGroup()

        // Writers: real crashes under crashwatch run (retention on), and file writers beside them.
        for _ in 0..<crashers {
            writersDone.enter()
            Thread {
                for _ in 0..<crashesEach {
                    _ = try? run(Paths.crashwatch, ["run", "--spool", spool.path, "--max-reports", "300", "--",
                                                    Paths.fixture("null_deref")])
                }
                writersDone.leave()
            }.start()
        }
        for writer in 0..<apiWriters {
            writersDone.enter()
            Thread {
                for index in 0..<apiEach {
                    let id = String(format: "%08x-0000-4000-8000-%012d", writer, index)
                    let time = String(format: "20261130T%02d%02d%02d.%03dZ", writer, index / 60 % 60, index % 60, index % 1000)
                    try? spool.add(id: id, time: time, pid: 1000 + writer)
                }
                writersDone.leave()
            }.start()
        }
        // Two readers claim and acknowledge until the writers are done and nothing is left to claim.
        let readersDone = DispatchGroup()
        for _ in 0..<2 {
            readersDone.enter()
            Thread {
                var idle = 0
                while idle < 3 {
                    let claimed = (try? spool.crashwatch(["claim", "--limit", "10", "--holder", "\(getpid())"]))?.stdout ?? ""
                    let ids = claimed.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
                    for id in ids {
                        let ack = try? spool.crashwatch(["ack", id, "--holder", "\(getpid())"])
                        ledger.record(id, acknowledged: ack?.termination == .exited(0))
                    }
                    if ids.isEmpty && writersDone.wait(timeout: .now()) == .success { idle += 1 }
                }
                readersDone.leave()
            }.start()
        }
        writersDone.wait()
        readersDone.wait()

        let names = try FileManager.default.contentsOfDirectory(atPath: spool.path)
        #expect(!names.contains { $0.hasPrefix(".tmp-") })
        let remaining = names.filter { $0.hasSuffix(".json") }
        for name in remaining {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool.path)/\(name)"))
            #expect((try? JSONSerialization.jsonObject(with: data)) != nil, "\(name) is torn")
        }
        let (acknowledged, readTwice) = ledger.snapshot()
        let claimsLeft = (try? FileManager.default.contentsOfDirectory(atPath: "\(spool.path)/.claims")) ?? []
        #expect(claimsLeft.isEmpty, "\(claimsLeft)")
        #expect(readTwice.isEmpty, "read twice: \(readTwice)")
        let remainingIDs = Set(remaining.map { String($0.dropLast(5).suffix(36)) })
        #expect(remainingIDs.isDisjoint(with: acknowledged))
        // Counts add up: every report was acknowledged once, is still in the spool, or was pruned.
        let pruned = total - acknowledged.count - remaining.count
        #expect(pruned >= 0, "acknowledged \(acknowledged.count) + remaining \(remaining.count) > written \(total)")
        #expect(acknowledged.count + remaining.count > 0)
    }
}

/// Where the spool commands look: the command line, then the environment, then the settings file.
@Suite struct SpoolLocationCommandTests {
    @Test("$CRASHWATCH_SPOOL beats the settings file's spool (a unit's Environment= wins over the shared file); --spool beats both")
    func environmentBeatsSettingsFile() throws {
        let fromFile = try ExampleSpool(), fromEnvironment = try ExampleSpool(), fromOption = try ExampleSpool()
        try fromFile.add(id: "aaaaaaaa-0000-4000-8000-000000000001", time: "20261130T090000.000Z", pid: 1)
        try fromEnvironment.add(id: "bbbbbbbb-0000-4000-8000-000000000002", time: "20261130T090000.000Z", pid: 2)
        try fromOption.add(id: "cccccccc-0000-4000-8000-000000000003", time: "20261130T090000.000Z", pid: 3)
        let settings = try TemporaryDirectory("cw-settings")
        let config = "\(settings.path)/crashwatch.conf"
        try Data("spool = \(fromFile.path)\n".utf8).write(to: URL(fileURLWithPath: config))

        let environment = ["CRASHWATCH_SPOOL": fromEnvironment.path]
        let list = try run(Paths.crashwatch, ["list", "--config", config], environment: environment)
        #expect(list.termination == .exited(0), "\(list.stderr)")
        #expect(list.stdout.contains("bbbbbbbb") && !list.stdout.contains("aaaaaaaa"), "\(list.stdout)")
        let option = try run(Paths.crashwatch, ["list", "--config", config, "--spool", fromOption.path], environment: environment)
        #expect(option.stdout.contains("cccccccc") && !option.stdout.contains("bbbbbbbb"), "\(option.stdout)")
        let empty = try run(Paths.crashwatch, ["list", "--config", config], environment: ["CRASHWATCH_SPOOL": ""])
        #expect(empty.stdout.contains("aaaaaaaa"), "an empty variable counts as unset: \(empty.stdout)")
    }
}

/// What the storm's readers acknowledged, shared between their threads.
private final class Ledger: @unchecked Sendable {
    private let lock = NSLock()
    private var acknowledged: [String] = []
    private var readTwice: [String] = []

    /// Notes that `id` was read (and acknowledged, when the ack succeeded).
    func record(_ id: String, acknowledged ok: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if acknowledged.contains(id) { readTwice.append(id) }
        if ok { acknowledged.append(id) }
    }

    /// The acknowledged ids and those read more than once.
    func snapshot() -> ([String], [String]) {
        lock.lock()
        defer { lock.unlock() }
        return (acknowledged, readTwice)
    }
}
