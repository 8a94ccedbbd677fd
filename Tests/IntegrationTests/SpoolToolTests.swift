// SpoolToolTests.swift — the readers' tools beyond list and show, on real reports: the quarantine's way out
// (list, show, requeue, drop), --json on prune, ack, release and ship, claim's default holder from a shell,
// symbolicate ID --in-place with a relative --debug-dir, and `debug` (gdb on a kept core).
import CrashwatchTestSupport
import Foundation
import Testing

/// The quarantine's way out, and --json on the commands that print results.
@Suite(.serialized) struct QuarantineCommandTests {
    @Test("quarantine list|show|requeue|drop: a repaired file goes back into the spool, checked as a report again")
    func requeue() throws {
        let spool = try ExampleSpool()
        defer { spool.directory.remove() }
        let good = try spool.add(id: "88888888-0000-4000-8000-000000000008", time: "20261130T090000.000Z", pid: 81)
        let goodBytes = try Data(contentsOf: URL(fileURLWithPath: spool.directory.join(good)))
        // A truncated report: `list` quarantines it.
        try goodBytes.prefix(100).write(to: URL(fileURLWithPath: spool.directory.join(good)))
        let other = try spool.add(id: "99999999-0000-4000-8000-000000000009", time: "20261130T100000.000Z", pid: 82)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: spool.directory.join(other)))
        #expect(try spool.crashwatch(["list"]).stdout.hasPrefix("No crash reports"))

        let listed = try spool.crashwatch(["quarantine", "list", "--json"])
        #expect(listed.termination == .exited(0), "\(listed.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(items.map { $0["name"] as? String } == [good, other])
        #expect(items.allSatisfy { ($0["reason"] as? String)?.contains("not a valid report") == true && $0["kind"] as? String == "regular" },
                "\(listed.stdout)")
        #expect(items.first?["bytes"] as? Int == 100)
        let text = try spool.crashwatch(["quarantine", "list"]).stdout
        #expect(text.split(separator: "\n").count == 2 && text.contains("  100 bytes  \(good)  not a valid report"), "\(text)")

        #expect(try spool.crashwatch(["quarantine", "show", "8888"]).stdout == String(decoding: goodBytes.prefix(100), as: UTF8.self))
        // Still truncated: requeue refuses (65) and the file stays.
        let refused = try spool.crashwatch(["quarantine", "requeue", "8888"])
        #expect(refused.termination == .exited(65) && refused.stderr.contains("stays in quarantine: not a valid report"), "\(refused.stderr)")
        // Repaired: back in the spool, listed and shown again; its reason file is gone.
        try goodBytes.write(to: URL(fileURLWithPath: "\(spool.path)/.quarantine/\(good)"))
        let requeued = try spool.crashwatch(["quarantine", "requeue", "--json", "88888888"])
        #expect(requeued.stdout == "{\"action\": \"requeued\", \"name\": \"\(good)\", \"reason\": null}\n", "\(requeued.stdout)\(requeued.stderr)")
        #expect(FileManager.default.fileExists(atPath: spool.directory.join(good)))
        #expect(!FileManager.default.fileExists(atPath: "\(spool.path)/.quarantine/\(good).reason"))
        #expect(try spool.crashwatch(["show", "--json", "8888"]).stdout == String(decoding: goodBytes, as: UTF8.self))
        // A valid report under another id's name is refused: the name would lie.
        try goodBytes.write(to: URL(fileURLWithPath: "\(spool.path)/.quarantine/\(other)"))
        let lying = try spool.crashwatch(["quarantine", "requeue", other])
        #expect(lying.termination == .exited(65) && lying.stderr.contains("is not the one in its name"), "\(lying.stderr)")
        // drop deletes the file and its reason.
        #expect(try spool.crashwatch(["quarantine", "drop", "9999"]).stdout == "dropped \(other)\n")
        #expect(try spool.crashwatch(["quarantine", "list"]).stdout.hasPrefix("No quarantined files"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(spool.path)/.quarantine").isEmpty)
        // Names that could leave the spool are refused; unknown ones are 66.
        #expect(try spool.crashwatch(["quarantine", "drop", "../\(good)"]).termination == .exited(66))
        #expect(try spool.crashwatch(["quarantine", "drop", "abcd"]).termination == .exited(66))
        #expect(try spool.crashwatch(["quarantine", "frobnicate"]).termination == .exited(64))
    }

    @Test("ship --json prints one JSON line per outcome")
    func shipJSON() throws {
        let spool = try CrashedSpool()
        defer { spool.directory.remove() }
        // Nothing listens on port 1: both reports are kept for a later attempt, each said in one line.
        let result = try spool.crashwatch("ship", ["--endpoint", "http://127.0.0.1:1", "--once", "--json"])
        #expect(result.termination == .exited(75), "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(result.stdout)")
        for line in lines {
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(event["event"] as? String == "kept" && event["attempt"] as? Int == 1, "\(line)")
            #expect((event["name"] as? String)?.contains(event["id"] as? String ?? "?") == true)
            #expect((event["error"] as? String)?.isEmpty == false && event["retryInMs"] is Int)
        }
    }

    @Test("claim's default holder is the shell that runs it: three claims in a row take three reports, ack settles them")
    func claimInAScript() throws {
        let spool = try ExampleSpool()
        defer { spool.directory.remove() }
        let ids = ["c0000000-0000-4000-8000-00000000000c", "c1000000-0000-4000-8000-00000000000c", "c2000000-0000-4000-8000-00000000000c"]
        for (index, id) in ids.enumerated() { try spool.add(id: id, time: "20261130T09000\(index).000Z", pid: 100 + index) }
        let crashwatch = "'\(Paths.crashwatch)' --spool '\(spool.path)'"
        let script = """
            set -e
            a=$(\(crashwatch.replacingOccurrences(of: "' --spool", with: "' claim --spool")) | cut -d' ' -f1)
            b=$(\(crashwatch.replacingOccurrences(of: "' --spool", with: "' claim --spool")) | cut -d' ' -f1)
            c=$(\(crashwatch.replacingOccurrences(of: "' --spool", with: "' claim --spool")) | cut -d' ' -f1)
            echo "$a $b $c"
            \(crashwatch.replacingOccurrences(of: "' --spool", with: "' ack --spool")) "$a"
            """
        // The pipeline's subshell runs crashwatch: its parent is the script's shell only where the shell
        // execs the last command of the subshell; --holder $$ says it everywhere. Both are tried.
        let explicit = script.replacingOccurrences(of: "claim --spool '\(spool.path)'", with: "claim --spool '\(spool.path)' --holder $$")
            .replacingOccurrences(of: "ack --spool '\(spool.path)'", with: "ack --spool '\(spool.path)' --holder $$")
        let result = try run("/bin/sh", ["-c", explicit])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == ids.joined(separator: " "), "three claims in a row, three reports: \(result.stdout)")
        #expect(lines.last?.hasPrefix("acknowledged ") == true && lines.last?.contains(ids[0]) == true)
        // The script exited: its two other claims are stale, taken again by the next claimer.
        let next = try spool.crashwatch(["claim", "--limit", "5", "--holder", String(getpid())])
        #expect(next.stdout.split(separator: "\n").map { String($0.prefix(36)) } == [ids[1], ids[2]], "\(next.stdout)")

        // Without --holder: the default is the parent process, the shell running the lines.
        let plain = try ExampleSpool()
        defer { plain.directory.remove() }
        for (index, id) in ids.enumerated() { try plain.add(id: id, time: "20261130T09000\(index).000Z", pid: 100 + index) }
        let bare = "'\(Paths.crashwatch)' claim --spool '\(plain.path)'"
        let threeInARow = try run("/bin/sh", ["-c", "\(bare); \(bare); \(bare); '\(Paths.crashwatch)' ack --spool '\(plain.path)' c100"])
        #expect(threeInARow.termination == .exited(0), "\(threeInARow.stderr)")
        let claimed = threeInARow.stdout.split(separator: "\n").map { String($0.prefix(36)) }
        #expect(Array(claimed.prefix(3)) == ids, "\(threeInARow.stdout)")
        #expect(threeInARow.stdout.contains("acknowledged "), "ack from the same shell settles its claim")
    }

    @Test("prune, ack and release print JSON with --json")
    func jsonOutputs() throws {
        let spool = try ExampleSpool()
        defer { spool.directory.remove() }
        let old = try spool.add(id: "aaaaaaaa-0000-4000-8000-00000000000a", time: "20261130T090000.000Z", pid: 91)
        let new = try spool.add(id: "bbbbbbbb-0000-4000-8000-00000000000b", time: "20261130T100000.000Z", pid: 92)
        let dry = try spool.crashwatch(["prune", "--max-reports", "1", "--dry-run", "--json"])
        let dryObject = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any], "\(dry.stdout)")
        #expect(dryObject["dryRun"] as? Bool == true)
        #expect((dryObject["removed"] as? [[String: Any]])?.map { $0["name"] as? String } == [old])
        let pruned = try spool.crashwatch(["prune", "--max-reports", "1", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(pruned.stdout.utf8)) as? [String: Any], "\(pruned.stdout)")
        #expect(object["dryRun"] as? Bool == false && object["kept"] as? Int == 1)
        #expect((object["removed"] as? [[String: Any]])?.first?["reason"] as? String != nil)
        #expect(!FileManager.default.fileExists(atPath: spool.directory.join(old)))

        let claim = try spool.crashwatch(["claim", "--holder", String(getpid())])
        #expect(claim.stdout.hasPrefix("bbbbbbbb-"), "\(claim.stdout)\(claim.stderr)")
        let released = try spool.crashwatch(["release", "--json", "--holder", String(getpid()), "bbbb"])
        #expect(released.stdout == "{\"action\": \"released\", \"name\": \"\(new)\", \"reason\": null}\n", "\(released.stderr)")
        _ = try spool.crashwatch(["claim", "--holder", String(getpid())])
        let acked = try spool.crashwatch(["ack", "--json", "--holder", String(getpid()), "bbbb"])
        #expect(acked.stdout == "{\"action\": \"acknowledged\", \"name\": \"\(new)\", \"reason\": null}\n", "\(acked.stderr)")
    }
}

/// `symbolicate` as a reader: by id from the spool, `--in-place`, a relative `--debug-dir`.
@Suite(.serialized) struct SymbolicateReaderTests {
    @Test("symbolicate ID --in-place replaces the spool's copy under its name and recounts its group; --debug-dir may be relative")
    func inPlace() throws {
        let (result, bare, spool) = try runCapturing(Paths.fixture("stripped_debuglink"), options: ["--symbolicate", "none"])
        defer { spool.remove() }
        let report = try #require(bare.first, "\(result.stderr)")
        let id = try #require(report.json["id"] as? String)
        let name = (report.path as NSString).lastPathComponent
        let groupsBefore = try run(Paths.crashwatch, ["list", "--group", "--json", "--spool", spool.path])
        let before = try #require(try JSONSerialization.jsonObject(with: Data(groupsBefore.stdout.utf8)) as? [[String: Any]])
        #expect(before.count == 1 && before.first?["count"] as? Int == 1, "\(groupsBefore.stdout)")

        // From the fixtures directory, `debug` is the separate debug info: a relative --debug-dir.
        let symbolicated = try run(Paths.crashwatch, ["symbolicate", "--spool", spool.path, "--debug-dir", "debug", "--in-place", String(id.prefix(8))],
                                   workingDirectory: Paths.fixtures)
        #expect(symbolicated.termination == .exited(0), "\(symbolicated.stderr)")
        #expect(symbolicated.stdout == "symbolicated \(name)\n")
        // Same name, no second file, no temporary file left; the names are in it now.
        let files = try FileManager.default.contentsOfDirectory(atPath: spool.path).filter { !$0.hasPrefix(".") || $0.hasPrefix(".tmp") }
        #expect(files == [name], "\(files)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report.path))
        #expect(try SchemaValidator().validate(reportJSON: data).isEmpty)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let updated = WrittenReport(path: report.path, data: data, json: json)
        #expect(json["id"] as? String == id, "the report keeps its identity")
        let crashed = try #require(updated.crashedThreads.first)
        let own = updated.frames(of: crashed).filter { (updated.image(of: $0)?["name"] as? String) == "stripped_debuglink" }
        #expect(!own.isEmpty && own.allSatisfy { $0["function"] is String }, "\(own)")
        // The group index follows the new fingerprint: still one group, counted once, named by the function now.
        let groupsAfter = try run(Paths.crashwatch, ["list", "--group", "--json", "--spool", spool.path])
        let after = try #require(try JSONSerialization.jsonObject(with: Data(groupsAfter.stdout.utf8)) as? [[String: Any]])
        let fingerprint = (json["fingerprint"] as? [String: Any])?["value"] as? String
        #expect(after.count == 1 && after.first?["count"] as? Int == 1 && after.first?["fingerprint"] as? String == fingerprint,
                "\(groupsAfter.stdout)")
        #expect(fingerprint != nil && fingerprint != before.first?["fingerprint"] as? String, "names change the fingerprint")

        // --in-place needs a spool report, not a file; and excludes --output.
        let onFile = try run(Paths.crashwatch, ["symbolicate", "--in-place", report.path])
        #expect(onFile.termination == .exited(64), "\(onFile.stderr)")
        #expect(try run(Paths.crashwatch, ["symbolicate", "--spool", spool.path, "--in-place", "-o", "/dev/null", id]).termination == .exited(64))
    }
}

/// `debug`: gdb on a kept core.
@Suite(.serialized) struct DebugCommandTests {
    @Test("debug ID opens gdb on the core core-handler --keep-core kept (gdb -batch -ex bt through it); no kept core says how")
    func keptCore() throws {
        try Cores.requireDumpedHere()
        guard Paths.which("gdb") != nil else {
            Issue.record("gdb is not installed")
            return
        }
        let directory = try TemporaryDirectory("cw-debug")
        defer { directory.remove() }
        _ = try run("/bin/sh", ["-c", "ulimit -c unlimited; exec '\(Paths.fixture("null_deref"))'"], workingDirectory: directory.path)
        let core = "\(directory.path)/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("core") }))
        let spool = "\(directory.path)/spool", kept = "\(directory.path)/kept"
        try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
        let handled = try run("/bin/sh", ["-c", "exec '\(Paths.crashwatch)' core-handler --spool '\(spool)' --keep-core '\(kept)' 1 1 11 1796000000 < '\(core)'"])
        #expect(handled.termination == .exited(0), "\(handled.stderr)")
        let reportPath = handled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any])
        let id = try #require(report["id"] as? String)
        #expect(report["coreFile"] is String)

        let debugged = try run(Paths.crashwatch, ["debug", "--spool", spool, "--ex", "bt", String(id.prefix(8))])
        #expect(debugged.termination == .exited(0), "\(debugged.stderr)")
        let frames = debugged.stdout.split(separator: "\n").filter { $0.hasPrefix("#") }
        #expect(frames.first?.contains("crash_here () at ") == true && frames.first?.hasSuffix("null_deref.c:21") == true, "\(debugged.stdout)")
        #expect(frames.contains { $0.contains(" in middle () ") } && frames.contains { $0.contains(" in main () ") }, "\(debugged.stdout)")
        #expect(debugged.stdout.contains("Program terminated with signal SIGSEGV"), "\(debugged.stdout)")
        // The inflated core was private and is gone.
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()))?.filter { $0.hasPrefix("crashwatch-debug.") } ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")

        // A report whose coreFile names another file is refused: the path is the report's word.
        let tampered = "\(spool)/" + (reportPath as NSString).lastPathComponent
        let text = try String(contentsOfFile: tampered, encoding: .utf8)
            .replacingOccurrences(of: report["coreFile"] as! String, with: "/etc/passwd")
        try Data(text.utf8).write(to: URL(fileURLWithPath: tampered))
        let refused = try run(Paths.crashwatch, ["debug", "--spool", spool, "--ex", "bt", id])
        #expect(refused.termination == .exited(65) && refused.stderr.contains("not a core kept for report"), "\(refused.stderr)")

        // A live capture keeps no core: debug says how to keep one.
        let live = try CrashedSpool()
        defer { live.directory.remove() }
        let none = try live.crashwatch("debug", ["--ex", "bt", String(live.segv.pid)])
        #expect(none.termination == .exited(66) && none.stderr.contains("has no kept core") && none.stderr.contains("--keep-core"), "\(none.stderr)")
    }
}
