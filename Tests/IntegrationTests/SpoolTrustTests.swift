// SpoolTrustTests.swift — the spool's trust model, tried as an unprivileged local user would attack a
// root-run crashwatch: future-dated report names planted in a shared sticky spool, a `.claims` or a spool
// that user owns, a link to the spool that user planted or could swap, and a set-group-ID spool whose group
// would expose root's reports; and the links that are fine (systemd's DynamicUser= state directories).
import CrashwatchTestSupport
import Foundation
import Testing

@Suite(.serialized) struct SpoolTrustTests {
    /// The unprivileged user the attacks run as.
    static let attacker: UInt32 = 65534

    /// A shared spool `<temporary>/spool` with `mode` (root-owned), under a directory everyone may traverse.
    private func sharedSpool(mode: mode_t) throws -> (TemporaryDirectory, String) {
        try #require(getuid() == 0, "needs root to act as another user; skip")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "setpriv is not installed; skip")
        let directory = try TemporaryDirectory("cw-spool-trust")
        chmod(directory.path, 0o755)
        let spool = "\(directory.path)/spool"
        try #require(mkdir(spool, 0o700) == 0)
        try #require(chmod(spool, mode) == 0)
        return (directory, spool)
    }

    /// Runs a shell command as the attacker.
    private func asAttacker(_ script: String) throws -> RunResult {
        try run("/usr/bin/setpriv", ["--reuid=\(Self.attacker)", "--regid=\(Self.attacker)", "--clear-groups", "/bin/sh", "-c", script])
    }

    private func names(in spool: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test("future-dated names planted by another user in a sticky spool neither evict the real report nor get deleted")
    func plantedFutureNames() throws {
        let (directory, spool) = try sharedSpool(mode: 0o1777)
        _ = directory
        var planted: [String] = []
        for index in 1...3 {
            let name = "22001231T00000\(index).000Z-1-evil-00000000-0000-4000-8000-00000000000\(index).json"
            planted.append(name)
            let made = try asAttacker("umask 022; cp '\(Paths.root)/Fixtures/example-report.json' '\(spool)/\(name)'")
            try #require(made.termination == .exited(0), "\(made.stderr)")
        }
        let result = try run(Paths.crashwatch, ["run", "--spool", spool, "--max-reports", "1", "--", Paths.fixture("null_deref")])
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let after = names(in: spool)
        #expect(Set(planted).isSubset(of: after), "a planted file was deleted: \(after)")
        let real = after.filter { !planted.contains($0) }
        #expect(real.count == 1 && real.first?.contains("-null_deref-") == true, "\(after)\n\(result.stderr)")

        let prune = try run(Paths.crashwatch, ["prune", "--spool", spool, "--max-reports", "1"])
        #expect(prune.termination == .exited(0), "\(prune.stderr)")
        #expect(prune.stdout.contains("0 removed, 1 kept") && prune.stdout.contains("3 foreign"), "\(prune.stdout)")
        #expect(prune.stdout.contains("owned by another user"), "\(prune.stdout)")
        #expect(names(in: spool) == after)
    }

    @Test("another user's honest report (its name, owner and content agree) counts and ages out; a planted one does not")
    func honestForeignReportAgesOut() throws {
        let (directory, spool) = try sharedSpool(mode: 0o1777)
        _ = directory
        let theirs = try asAttacker("exec '\(Paths.crashwatch)' run --spool '\(spool)' -- '\(Paths.fixture("null_deref"))'")
        #expect(theirs.termination == .signaled(SIGSEGV), "\(theirs.stderr)")
        let honest = try #require(names(in: spool).first, "\(theirs.stderr)")
        // The same content under a name dated in the future, by the same user: does not agree.
        let planted = "22001231T000000.000Z" + honest.dropFirst(20)
        let copied = try asAttacker("cp '\(spool)/\(honest)' '\(spool)/x' && mv '\(spool)/x' '\(spool)/\(planted)'")
        try #require(copied.termination == .exited(0), "\(copied.stderr)")
        let ours = try run(Paths.crashwatch, ["run", "--spool", spool, "--max-reports", "1", "--", Paths.fixture("null_deref")])
        #expect(ours.termination == .signaled(SIGSEGV), "\(ours.stderr)")
        let after = names(in: spool)
        #expect(!after.contains(honest), "the other user's older honest report was not pruned: \(after)")
        #expect(after.contains(planted) && after.count == 2, "\(after)")
        // A reader (shipper) takes root's report, never the planted one.
        let claim = try run(Paths.crashwatch, ["claim", "--spool", spool, "--limit", "10", "--holder", "1"])
        #expect(claim.termination == .exited(0), "\(claim.stderr)")
        #expect(claim.stdout.split(separator: "\n").count == 1 && !claim.stdout.contains(planted), "\(claim.stdout)")
        #expect(names(in: spool) == [planted])
    }

    @Test("another user's files larger than any report are not read: prune leaves them at once, whatever their name")
    func oversizedForeignFilesAreNotRead() throws {
        let (directory, spool) = try sharedSpool(mode: 0o1777)
        _ = directory
        // 40 sparse files of 1 GiB each: reading them would take minutes and 40 GiB of memory.
        let made = try asAttacker("for i in $(seq 10 49); do truncate -s 1G '\(spool)'/20261130T0901$i.000Z-1-big-00000000-0000-4000-8000-0000000000$i.json; done")
        try #require(made.termination == .exited(0), "\(made.stderr)")
        let started = Date()
        let prune = try run(Paths.crashwatch, ["prune", "--spool", spool, "--max-reports", "1"], timeout: 30)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(prune.termination == .exited(0), "\(prune.stderr)")
        #expect(prune.stdout.contains("40 foreign"), "\(prune.stdout)")
        #expect(names(in: spool).count == 40)
    }

    @Test("the report just written survives retention even when a newer-named report fills the count limit")
    func justWrittenSurvives() throws {
        let spool = try ExampleSpool()
        let future = try spool.add(id: "11111111-0000-4000-8000-000000000001", time: "22001231T000000.000Z", pid: 1)
        let result = try run(Paths.crashwatch, ["run", "--spool", spool.path, "--max-reports", "1", "--", Paths.fixture("null_deref")])
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let after = names(in: spool.path)
        #expect(after.contains { $0.contains("-null_deref-") }, "the report just written was pruned: \(after)\n\(result.stderr)")
        // The next prune, with no report to protect, applies the limit as usual.
        let prune = try spool.crashwatch(["prune", "--max-reports", "1"])
        #expect(prune.termination == .exited(0), "\(prune.stderr)")
        #expect(names(in: spool.path) == [future])
    }

    @Test("a .claims another user created in a sticky spool is refused, so no reader follows that user's links")
    func foreignClaims() throws {
        let (directory, spool) = try sharedSpool(mode: 0o1777)
        _ = directory
        try FileManager.default.copyItem(atPath: "\(Paths.root)/Fixtures/example-report.json",
                                         toPath: "\(spool)/20261130T090157.123Z-4242-segv_reraise-3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13.json")
        let made = try asAttacker("mkdir -m 0755 '\(spool)/.claims'")
        try #require(made.termination == .exited(0), "\(made.stderr)")
        let claim = try run(Paths.crashwatch, ["claim", "--spool", spool])
        #expect(claim.termination != .exited(0), "\(claim.stdout)")
        #expect(claim.stderr.contains("\(spool)/.claims belongs to uid \(Self.attacker)"), "\(claim.stderr)")
        #expect(claim.stderr.split(separator: "\n").count == 1, "\(claim.stderr)")
        #expect(names(in: spool).count == 1, "the report moved")
    }

    @Test("in a 1777 spool, the .claims crashwatch creates is closed to others: they cannot plant or swap claims")
    func claimsClosedToOthers() throws {
        let (directory, spool) = try sharedSpool(mode: 0o1777)
        _ = directory
        let name = "20261130T090157.123Z-4242-segv_reraise-3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13.json"
        try FileManager.default.copyItem(atPath: "\(Paths.root)/Fixtures/example-report.json", toPath: "\(spool)/\(name)")
        // A careless umask 000 must not open .claims to everyone.
        let claim = try run("/bin/sh", ["-c", "umask 000; exec '\(Paths.crashwatch)' claim --spool '\(spool)' --holder 1"])
        #expect(claim.termination == .exited(0), "\(claim.stderr)")
        #expect(claim.stdout.contains("/.claims/\(name)."), "\(claim.stdout)")
        var info = stat()
        try #require(stat("\(spool)/.claims", &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o1770, "mode \(String(info.st_mode & 0o7777, radix: 8))")
        let plant = try asAttacker("ln -s /etc/shadow '\(spool)/.claims/\(name).1-1'")
        #expect(plant.termination != .exited(0), "the attacker planted a link in .claims")
    }

    @Test("a spool owned by another user is refused by writers and readers")
    func foreignSpool() throws {
        let (directory, spool) = try sharedSpool(mode: 0o755)
        _ = directory
        try #require(chown(spool, Self.attacker, Self.attacker) == 0)
        let list = try run(Paths.crashwatch, ["list", "--spool", spool])
        #expect(list.termination != .exited(0))
        #expect(list.stderr.contains("\(spool) belongs to uid \(Self.attacker)"), "\(list.stderr)")
        let crash = try run(Paths.crashwatch, ["run", "--spool", spool, "--", Paths.fixture("null_deref")])
        #expect(crash.termination == .signaled(SIGSEGV), "the app's status must not change: \(crash.stderr)")
        #expect(crash.stderr.contains("belongs to uid \(Self.attacker)"), "\(crash.stderr)")
        #expect(names(in: spool).isEmpty)
    }

    @Test("a DynamicUser= state directory (root's link /var/lib/NAME → private/NAME in root's directory) is a usable spool")
    func dynamicUserStateDirectory() throws {
        let (directory, _) = try sharedSpool(mode: 0o700)
        let lib = "\(directory.path)/var-lib"
        try FileManager.default.createDirectory(atPath: "\(lib)/private/demo", withIntermediateDirectories: true)
        chmod(lib, 0o755)
        chmod("\(lib)/private", 0o700)
        try FileManager.default.createSymbolicLink(atPath: "\(lib)/demo", withDestinationPath: "private/demo")
        let spool = "\(lib)/demo"
        let result = try run(Paths.crashwatch, ["run", "--spool", spool, "--", Paths.fixture("null_deref")])
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        #expect(result.stderr.contains("report written to \(spool)/"), "\(result.stderr)")
        #expect(names(in: "\(lib)/private/demo").count == 1)
        let list = try run(Paths.crashwatch, ["list", "--spool", spool])
        #expect(list.termination == .exited(0) && list.stdout.contains("null_deref"), "\(list.stdout)\(list.stderr)")
    }

    @Test("a link to the spool that another user owns, or in a directory others may write, is refused in one line; the app's status stays",
          arguments: ["owned by nobody", "in a world-writable directory"])
    func plantedSpoolLink(how: String) throws {
        let (directory, spool) = try sharedSpool(mode: 0o755)
        let holder = "\(directory.path)/links"
        try #require(mkdir(holder, 0o755) == 0)
        let link = "\(holder)/spool"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: spool)
        if how == "owned by nobody" {
            try #require(lchown(link, Self.attacker, Self.attacker) == 0)
        } else {
            try #require(chmod(holder, 0o777) == 0)
        }
        let expected = how == "owned by nobody"
            ? "symbolic link \(link) belongs to uid \(Self.attacker), neither root nor this user"
            : "symbolic link \(link) is in \(holder), which group or others may write without the sticky bit (mode 0777)"
        let crash = try run(Paths.crashwatch, ["run", "--spool", link, "--", Paths.fixture("null_deref")])
        #expect(crash.termination == .signaled(SIGSEGV), "the app's status must not change: \(crash.stderr)")
        #expect(crash.stderr.contains(expected), "\(crash.stderr)")
        #expect(names(in: spool).isEmpty, "a report went through the link")
        let list = try run(Paths.crashwatch, ["list", "--spool", link])
        #expect(list.termination == .exited(74), "\(list.stdout)")
        #expect(list.stderr.contains(expected) && list.stderr.split(separator: "\n").count == 1, "\(list.stderr)")
    }

    @Test("list, show and export as a user who may not read some reports: one stderr line counts them and says the fix")
    func unreadableReportsAreCounted() throws {
        try #require(getuid() == 0, "needs root to act as another user; skip")
        let spool = try ExampleSpool()
        let ids = ["11111111-0000-4000-8000-000000000001", "22222222-0000-4000-8000-000000000002",
                   "33333333-0000-4000-8000-000000000003"]
        var names: [String] = []
        for (index, id) in ids.enumerated() {
            names.append(try spool.add(id: id, time: "20261130T09000\(index).000Z", pid: 100 + index))
        }
        // The two older reports are readable by everyone; the newest (0640, root's group) not by nobody.
        for name in names.prefix(2) { try #require(chmod("\(spool.path)/\(name)", 0o644) == 0) }
        // The spool is root's group: joining the readers' group would not help, so it is not suggested.
        let fix = "(use sudo; a spool of group crashwatch with the set-group-ID bit lets its members read every report: README \"The spool\")"
        let line = "crashwatch: 1 report in \(spool.path) is not readable by you \(fix)\n"

        let list = try asAttacker("exec '\(Paths.crashwatch)' list --spool '\(spool.path)'")
        #expect(list.termination == .exited(0), "\(list.stderr)")
        #expect(list.stdout.contains("11111111") && list.stdout.contains("22222222") && !list.stdout.contains("33333333"), "\(list.stdout)")
        #expect(list.stderr == line)
        let json = try asAttacker("exec '\(Paths.crashwatch)' list --json --spool '\(spool.path)'")
        #expect(json.termination == .exited(0) && json.stderr == line, "\(json.stderr)")

        // show and export of the latest: the newest readable one, and a line saying newer ones were skipped.
        let newer = "crashwatch: 1 newer report in \(spool.path) is not readable by you \(fix)\n"
        let show = try asAttacker("exec '\(Paths.crashwatch)' show --spool '\(spool.path)'")
        #expect(show.termination == .exited(0), "\(show.stderr)")
        #expect(show.stdout.contains("Report: 22222222-0000-4000-8000-000000000002"), "\(show.stdout)")
        #expect(show.stderr == newer)
        let export = try asAttacker("exec '\(Paths.crashwatch)' export --spool '\(spool.path)' latest")
        #expect(export.termination == .exited(0) && export.stdout.contains("22222222") && export.stderr == newer, "\(export.stderr)")

        // Nothing readable: not "No crash reports", and not success.
        for name in names { try #require(chmod("\(spool.path)/\(name)", 0o600) == 0) }
        let none = try asAttacker("exec '\(Paths.crashwatch)' list --spool '\(spool.path)'")
        #expect(none.termination == .exited(74))
        #expect(none.stdout.isEmpty, "\(none.stdout)")
        #expect(none.stderr == "crashwatch: 3 reports in \(spool.path) are not readable by you \(fix)\n")
        let showNone = try asAttacker("exec '\(Paths.crashwatch)' show --spool '\(spool.path)'")
        #expect(showNone.termination == .exited(74) && showNone.stderr.contains("3 reports in"), "\(showNone.stderr)")
        // Root reads them all, silently; nothing was quarantined on the way.
        let root = try spool.crashwatch(["list"])
        #expect(root.termination == .exited(0) && root.stderr.isEmpty && root.stdout.contains("33333333"), "\(root.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(spool.path)/.quarantine"))
    }

    @Test("in a set-group-ID spool whose group is not crashwatch's, root's reports keep root's group, not the spool's")
    func setGroupIDSpool() throws {
        let (directory, spool) = try sharedSpool(mode: 0o2750)
        _ = directory
        try #require(chown(spool, 0, Self.attacker) == 0 && chmod(spool, 0o2750) == 0)
        let result = try run(Paths.crashwatch, ["run", "--spool", spool, "--", Paths.fixture("null_deref")])
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let report = try #require(names(in: spool).first, "\(result.stderr)")
        var info = stat()
        try #require(stat("\(spool)/\(report)", &info) == 0)
        #expect(info.st_gid == getegid(), "report group \(info.st_gid), spool group \(Self.attacker)")
        #expect(info.st_mode & 0o7777 == 0o640)
        // The attacker's group cannot read it.
        let read = try asAttacker("cat '\(spool)/\(report)' > /dev/null")
        #expect(read.termination != .exited(0))
    }

    @Test("future-dated core names planted in a sticky --keep-core directory neither evict the real kept cores nor get deleted")
    func plantedKeptCoreNames() throws {
        let (directory, kept) = try sharedSpool(mode: 0o1777)
        try Cores.requireDumpedHere()
        let cores = "\(directory.path)/cores"
        try #require(mkdir(cores, 0o700) == 0)
        _ = try run("/bin/sh", ["-c", "ulimit -c unlimited; exec '\(Paths.fixture("null_deref"))'"], workingDirectory: cores)
        let core = "\(cores)/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: cores).first { $0.hasPrefix("core") }))
        let spool = "\(directory.path)/reports"
        /// core-handler as the kernel runs it (root), for a crash at `time`; the kept core's name.
        func keep(time: Int, count: Int) throws -> String {
            let handled = try run("/bin/sh", ["-c", "exec '\(Paths.crashwatch)' core-handler --spool '\(spool)' --keep-core '\(kept)' --keep-cores \(count) 1 1 11 \(time) < '\(core)'"])
            #expect(handled.termination == .exited(0), "\(handled.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: handled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return ((try #require(report["coreFile"] as? String, "\(report["softErrors"] ?? "")")) as NSString).lastPathComponent
        }
        func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: kept)) ?? []).sorted() }

        let first = try keep(time: 1_796_000_000, count: 2)
        var planted: [String] = []
        for index in 1...3 {
            let name = "22001231T00000\(index).000Z-1-evil-00000000-0000-4000-8000-00000000000\(index).core.gz"
            planted.append(name)
            let made = try asAttacker("umask 022; echo planted > '\(kept)/\(name)'")
            try #require(made.termination == .exited(0), "\(made.stderr)")
        }
        // Two real cores and --keep-cores 2: both stay, whatever the planted names say; nothing planted is removed.
        let second = try keep(time: 1_796_000_100, count: 2)
        #expect(names() == ([first, second] + planted).sorted(), "\(names())")
        // --keep-cores 1: the older real core goes, the one just kept stays, the planted files stay untouched.
        let third = try keep(time: 1_796_000_200, count: 1)
        #expect(names() == ([third] + planted).sorted(), "\(names())")
        for name in planted {
            #expect((try? String(contentsOfFile: "\(kept)/\(name)", encoding: .utf8)) == "planted\n")
        }
    }
}
