// ClaimTests.swift — readers' claims on a real spool: claim, read, acknowledge and release; claims by id;
// holders that died (gone pid, reused pid, zombie) and live ones that must be respected; planted links;
// and eight threads claiming from one spool without ever sharing a report.
@testable import CrashwatchSpool
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// Claiming, acknowledging and releasing reports.
@Suite struct SpoolClaimTests {
    /// A spool holding `count` reports one minute apart (report i is `count - i` minutes old), oldest first.
    static func spool(with count: Int, in temporary: TemporaryDirectory) throws -> (Spool, [ReportFileName]) {
        let spool = try Spool(path: temporary.path)
        let names = (0..<count).map { reportName($0, minutesAgo: Int64(count - $0)) }
        for name in names { try spool.write(bytes: reportBytes(for: name), name: name) }
        return (spool, names)
    }

    /// This process as a claim holder.
    static var me: ClaimHolder { get throws { try ClaimHolder.current() } }

    /// A live process other than this one: the parent (the test runner's driver), alive while tests run.
    static var other: ClaimHolder { get throws { try ClaimHolder(process: getppid()) } }

    /// Claiming takes the oldest reports into `.claims/<name>.<holder>`, readable there and gone from the listing.
    @Test func claimTakesOldestIntoClaims() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 3, in: temporary)
        let me = try Self.me
        #expect(me.pid == getpid())

        let claimed = try spool.claim(limit: 2)
        #expect(claimed.map(\.name) == Array(names[0..<2]))
        #expect(claimed.allSatisfy { $0.holder == me })
        let claim = claimed[0]
        #expect(claim.entryName == "\(names[0].text).\(getpid())-\(me.startTicks)")
        #expect(claim.path == temporary.join(".claims/\(claim.entryName)"))
        #expect(Probe.isRegularFile(claim.path))
        #expect(Probe.permissions(claim.path) == 0o640)
        #expect(try claim.bytes() == reportBytes(for: names[0]))
        #expect(Probe.permissions(temporary.join(".claims")) == Probe.permissions(temporary.path))
        #expect(try spool.reports().map(\.name) == [names[2]])
        let listed = try spool.claims()
        #expect(listed.map(\.claim) == claimed)
        #expect(listed.map(\.bytes) == claimed.map { Int64(reportBytes(for: $0.name).count) })
        #expect(listed.allSatisfy { !$0.isStale })

        // What is left is claimed next; then nothing.
        #expect(try spool.claim().map(\.name) == [names[2]])
        #expect(try spool.claim(limit: 5).isEmpty)
        #expect(try spool.claim(limit: 0).isEmpty)
    }

    /// A pending report (a minimal one its crashwatch is replacing with the full report) is listed but not
    /// claimed — by the oldest-first claim or by id — until it is replaced or its writer lets go (or dies).
    @Test func pendingReportIsNotClaimedUntilReplaced() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 2, in: temporary)
        let minimal = reportName(2, minutesAgo: 3)
        let pending = try spool.writePending(bytes: reportBytes(for: minimal), name: minimal)
        #expect(pending.path == temporary.join(minimal.text))
        #expect(spool.isPending(minimal))
        #expect(!spool.isPending(names[0]))
        // Whole in the spool before it is flushed; flushing it after (`synchronize`) keeps it pending, unchanged.
        #expect(try spool.read(minimal) == reportBytes(for: minimal))
        try spool.synchronize(pending)
        #expect(spool.isPending(minimal))
        #expect(try spool.read(minimal) == reportBytes(for: minimal))
        #expect(try spool.reports().map(\.name) == [minimal] + names)
        #expect(throws: SpoolError.reportPending(spool: temporary.path, name: minimal.text)) {
            try spool.claim(id: minimal.idText)
        }
        #expect(try spool.claim(limit: 5).map(\.name) == names)
        #expect(try spool.claim(limit: 5).isEmpty)

        // The full report replaces it: claimable at once, though the minimal one's lock still lives.
        let full = reportBytes(for: minimal) + Array(" ".utf8)
        try spool.write(bytes: full, name: minimal)
        #expect(!spool.isPending(minimal))
        let claimed = try spool.claim(limit: 5)
        #expect(claimed.map(\.name) == [minimal])
        #expect(try claimed.first?.bytes() == full)
        withExtendedLifetime(pending) {}
    }

    /// A writer that lets go of its pending report without replacing it (it died) leaves it claimable as it is.
    @Test func pendingReportIsClaimableOnceItsWriterLetsGo() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let minimal = reportName(0, minutesAgo: 1)
        var pending: PendingReport? = try spool.writePending(bytes: reportBytes(for: minimal), name: minimal)
        #expect(try spool.claim().isEmpty)
        #expect(pending != nil)
        pending = nil
        #expect(!spool.isPending(minimal))
        #expect(try spool.claim().map(\.name) == [minimal])
    }

    /// Acknowledging removes a claim for good; a second acknowledgement finds it gone.
    /// A shared spool's subdirectories get its bits exactly, whatever the creator's umask (022 here) takes away:
    /// otherwise the group that may claim could not claim, quarantine or record attempts after the first one.
    @Test func subdirectoriesKeepTheGroupsWriteBit() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, _) = try Self.spool(with: 2, in: temporary)
        #expect(chmod(temporary.path, 0o1770) == 0)
        let claim = try spool.claim(limit: 1)[0]
        try spool.recordFailedAttempt(claim, error: "HTTP 503", nextAttempt: 0)
        try spool.quarantine(claim, reason: "test")
        for name in [".claims", ".attempts", ".quarantine"] {
            #expect(Probe.permissions(temporary.join(name)) == 0o1770, "\(name)")
        }
    }

    /// The destinations that took a report ride in its attempts record: merged across attempts, kept without a
    /// failure (count 0), gone with the report; a damaged record (too many lines, a stray line) counts as none.
    @Test func deliveriesRideInTheAttemptsRecord() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 2, in: temporary)
        let claims = try spool.claim(limit: 2)
        try spool.recordDelivered(claims[1], to: ["otlp"])
        #expect(spool.attempts(of: names[1]) == DeliveryAttempts(count: 0, lastAttempt: 0, nextAttempt: 0, lastError: "", delivered: ["otlp"]))
        try spool.recordFailedAttempt(claims[0], error: "sentry: HTTP 503", nextAttempt: 9, now: 5, delivered: ["otlp"])
        let second = try spool.recordFailedAttempt(claims[0], error: "sentry: HTTP 503", nextAttempt: 19, now: 15, delivered: ["otlp"])
        #expect(second == DeliveryAttempts(count: 2, lastAttempt: 15, nextAttempt: 19, lastError: "sentry: HTTP 503", delivered: ["otlp"]))
        #expect(try String(contentsOfFile: temporary.join(".attempts/\(names[0].text)"), encoding: .utf8)
                == "2 15 19 sentry: HTTP 503\ndelivered otlp\n")
        try spool.acknowledge(claims[0])
        #expect(spool.attempts(of: names[0]) == nil)
        for damaged in ["1 2 3 e\nsent otlp\n", "1 2 3 e\n" + String(repeating: "delivered x\n", count: 9), "0 0 0 \n", "1 2 3 e\ndelivered \n"] {
            #expect(DeliveryAttempts(parsing: Array(damaged.utf8)) == nil, "\(damaged)")
        }
    }

    @Test func acknowledgeRemovesForGood() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 2, in: temporary)
        let claim = try #require(try spool.claim().first)
        try spool.acknowledge(claim)
        #expect(Probe.names(temporary.join(".claims")) == [])
        #expect(try spool.reports().map(\.name) == [names[1]])
        #expect(throws: SpoolError.claimLost(spool: temporary.path, name: names[0].text)) { try spool.acknowledge(claim) }
        #expect(throws: SpoolError.claimLost(spool: temporary.path, name: names[0].text)) { try spool.release(claim) }
        #expect(throws: SpoolError.claimLost(spool: temporary.path, name: names[0].text)) { try claim.bytes() }
    }

    /// Releasing puts the report back under its own name, unchanged and claimable again.
    @Test func releasePutsBack() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 2, in: temporary)
        let claim = try #require(try spool.claim().first)
        try spool.release(claim)
        #expect(Probe.names(temporary.join(".claims")) == [])
        #expect(try spool.reports().map(\.name) == names)
        #expect(Probe.contents(spool.path(of: names[0])) == reportBytes(for: names[0]))
        #expect(Probe.permissions(spool.path(of: names[0])) == 0o640)
        #expect(try spool.claim().map(\.name) == [names[0]])
    }

    /// A claim whose holder's pid does not exist is stale: listed so, and taken over first by the next claim.
    @Test func staleClaimOfGonePIDIsTakenOver() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 3, in: temporary)
        let dead = ClaimHolder(pid: impossiblePID, startTicks: 12345)
        #expect(!dead.isAlive)
        // The dead reader had claimed the newest report.
        let held = try spool.claim(id: names[2].idText, holder: dead)
        #expect(held.holder == dead)
        #expect(try spool.claims().map(\.isStale) == [true])

        let me = try Self.me
        let taken = try spool.claim()
        #expect(taken.map(\.name) == [names[2]])  // stale claims come before unclaimed reports
        #expect(taken.map(\.holder) == [me])
        #expect(Probe.names(temporary.join(".claims")) == ["\(names[2].text).\(me.text)"])
        #expect(try taken[0].bytes() == reportBytes(for: names[2]))
        #expect(try spool.claims().map(\.isStale) == [false])
    }

    /// A holder whose pid is alive but started at another time (the pid was reused) is stale too.
    @Test func staleClaimOfReusedPIDIsTakenOver() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 1, in: temporary)
        let me = try Self.me
        let impostor = ClaimHolder(pid: me.pid, startTicks: me.startTicks + 1)
        #expect(!impostor.isAlive)
        _ = try spool.claim(limit: 1, holder: impostor)
        #expect(try spool.claims().map(\.isStale) == [true])
        #expect(try spool.claim().map(\.holder) == [me])
        #expect(try spool.claims().map(\.name) == names)
    }

    /// A zombie (exited, not yet reaped) no longer holds anything; nor does a process that exited and was reaped.
    @Test func exitedHolderIsDead() throws {
        var child: pid_t = 0
        let path = strdup("/bin/true")
        defer { free(path) }
        try #require(posix_spawn(&child, "/bin/true", nil, nil, [path, nil], environ) == 0)
        // Wait until it has exited without reaping it (WNOWAIT), then read its identity as a zombie. Tests of
        // other targets in this process may reap every child; then there is no zombie to look at.
        var info = siginfo_t()
        guard waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) == 0,
              let statText = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
              let ticks = ProcessClock.startTicks(statText: statText)
        else {
            try Test.cancel("the child was reaped elsewhere before it could be seen as a zombie")
        }
        let zombie = ClaimHolder(pid: child, startTicks: ticks)
        #expect(statText.contains(") Z "))
        #expect(!zombie.isAlive)
        var status: Int32 = 0
        waitpid(child, &status, 0)
        #expect(!zombie.isAlive)
    }

    /// The `/proc/PID/stat` verdict: same start time and running is alive; other start time, zombie or dead is not.
    @Test(arguments: [
        ("42 (sh) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0", true),
        ("42 (a) b) R 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0", true),  // ")" in the name
        ("42 (sh) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 778 0 0", false),
        ("42 (sh) Z 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0", false),
        ("42 (sh) X 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0", false),
        ("garbage", true),  // unreadable: never take a claim on a guess
    ])
    func holderVerdictFromStat(text: String, alive: Bool) {
        #expect(ClaimHolder.isAlive(statText: text, startTicks: 777) == alive)
    }

    /// Holders parse from and print to `<pid>-<start ticks>` exactly.
    @Test func holderText() {
        #expect(ClaimHolder(parsing: "4242-1234567") == ClaimHolder(pid: 4242, startTicks: 1_234_567))
        #expect(ClaimHolder(pid: 4242, startTicks: 0).text == "4242-0")
        for bad in ["", "4242", "4242-", "-5", "0-5", "04242-5", "4242-05", "4242-5-6", "4242-x", "2147483648-1", "+1-1"] {
            #expect(ClaimHolder(parsing: bad) == nil, "\(bad)")
        }
    }

    /// By id: a prefix claims the one report; claiming your own claim again returns it; another live
    /// process's claim is refused, naming its pid.
    @Test func claimByID() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 3, in: temporary)
        let claim = try spool.claim(id: names[1].idText.uppercased())
        #expect(claim.name == names[1])
        #expect(try spool.claim(id: names[1].idText) == claim)
        let other = try Self.other
        _ = try spool.claim(id: names[2].idText, holder: other)
        #expect(throws: SpoolError.claimedByAnother(spool: temporary.path, name: names[2].text, pid: other.pid)) {
            try spool.claim(id: names[2].idText)
        }
        #expect(throws: SpoolError.noSuchReport(spool: temporary.path, id: "ffff")) { try spool.claim(id: "ffff") }
        // testID gives ids 00000000-0000-4000-8000-00000000000N: "0" matches all three.
        #expect(throws: SpoolError.ambiguous(spool: temporary.path, prefix: "0", count: 3)) { try spool.claim(id: "0") }
        #expect(throws: SpoolError.invalidID(spool: temporary.path, id: "../x")) { try spool.claim(id: "../x") }
    }

    /// Acknowledging or releasing another live process's claim by id is refused; its own holder may.
    @Test func settlingAnotherLiveHoldersClaimIsRefused() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 2, in: temporary)
        let other = try Self.other
        _ = try spool.claim(limit: 2, holder: other)
        let refused = SpoolError.claimedByAnother(spool: temporary.path, name: names[0].text, pid: other.pid)
        #expect(throws: refused) { try spool.acknowledge(id: names[0].idText) }
        #expect(throws: refused) { try spool.release(id: names[0].idText) }
        #expect(refused.description == "\(names[0].text) in spool \(temporary.path) is claimed by pid \(other.pid), which is still running")
        #expect(try spool.claims().count == 2)
        // The holder itself (e.g. `crashwatch ack --holder PID`) may.
        #expect(try spool.acknowledge(id: names[0].idText, holder: other) == names[0])
        #expect(try spool.release(id: names[1].idText, holder: other) == names[1])
        #expect(try spool.claims().isEmpty)
        #expect(try spool.reports().map(\.name) == [names[1]])
    }

    /// A dead holder's claim may be acknowledged or released by id by anyone.
    @Test func settlingADeadHoldersClaimIsAllowed() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 2, in: temporary)
        _ = try spool.claim(limit: 2, holder: ClaimHolder(pid: impossiblePID, startTicks: 1))
        #expect(try spool.acknowledge(id: String(names[0].idText.prefix(36))) == names[0])
        #expect(try spool.release(id: names[1].idText) == names[1])
        #expect(try spool.claims().isEmpty)
        #expect(try spool.reports().map(\.name) == [names[1]])
        #expect(Probe.contents(spool.path(of: names[1])) == reportBytes(for: names[1]))
    }

    /// Acknowledging or releasing a report nobody claimed says so; an unknown id says that.
    @Test func settlingUnclaimedReports() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.spool(with: 1, in: temporary)
        let notClaimed = SpoolError.notClaimed(spool: temporary.path, name: names[0].text)
        #expect(throws: notClaimed) { try spool.acknowledge(id: names[0].idText) }  // no .claims yet
        _ = try spool.claim(id: names[0].idText)
        try spool.release(id: names[0].idText)
        #expect(throws: notClaimed) { try spool.release(id: names[0].idText) }  // .claims exists now
        #expect(throws: SpoolError.noSuchReport(spool: temporary.path, id: "abc")) { try spool.acknowledge(id: "abc") }
        #expect(Probe.contents(spool.path(of: names[0])) == reportBytes(for: names[0]))
    }

    /// A link planted under a report's name is never claimed: skipped by `claim()`, refused by `claim(id:)`.
    @Test func plantedLinkIsNeverClaimed() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spoolPath = temporary.join("spool")
        let spool = try Spool(path: spoolPath)
        let victim = temporary.join("victim")
        try Probe.writeFile(victim, Array("secret".utf8))
        let planted = reportName(1, minutesAgo: 10)
        try Probe.symlink(spoolPath + "/" + planted.text, to: victim)
        let real = reportName(2, minutesAgo: 5)
        try spool.write(bytes: reportBytes(for: real), name: real)

        #expect(try spool.claim(limit: 10).map(\.name) == [real])
        #expect(throws: SpoolError.notARegularFile(spool: spoolPath, name: planted.text, kind: .symbolicLink)) {
            try spool.claim(id: planted.idText)
        }
        #expect(Probe.isSymbolicLink(spoolPath + "/" + planted.text))
        #expect(Probe.contents(victim) == Array("secret".utf8))
    }

    /// `.claims` planted as a link (to a directory or dangling) or as a file is refused; nothing is moved.
    @Test(arguments: ["directory", "dangling", "file"])
    func plantedClaimsDirectoryIsRefused(kind: String) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spoolPath = temporary.join("spool")
        let spool = try Spool(path: spoolPath)
        let name = reportName(1, minutesAgo: 1)
        try spool.write(bytes: reportBytes(for: name), name: name)
        let elsewhere = temporary.join("elsewhere")
        switch kind {
        case "directory":
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
            try Probe.symlink(spoolPath + "/.claims", to: elsewhere)
        case "dangling": try Probe.symlink(spoolPath + "/.claims", to: elsewhere)
        default: try Probe.writeFile(spoolPath + "/.claims", [1])
        }
        let expected = SpoolError.unsafeSubdirectory(spool: spoolPath, name: ".claims", kind: kind == "file" ? .regular : .symbolicLink)
        #expect(throws: expected) { try spool.claim() }
        #expect(throws: expected) { try spool.claim(id: name.idText) }
        #expect(throws: expected) { try spool.claims() }
        #expect(try spool.reports().map(\.name) == [name])
        #expect(Probe.names(elsewhere) == [])
        if kind != "file" {
            #expect(expected.description == "\(spoolPath)/.claims is a symbolic link, not a directory; refusing to use it (remove it)")
        }
    }

    /// A `.claims` that others may write without the sticky bit is refused like an unsafe spool.
    @Test func writableClaimsDirectoryIsRefused() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        try FileManager.default.createDirectory(atPath: temporary.join(".claims"), withIntermediateDirectories: false)
        try Probe.chmod(temporary.join(".claims"), 0o777)
        #expect(throws: SpoolError.unsafePermissions(path: temporary.join(".claims"), permissions: 0o777)) { try spool.claim() }
    }

    /// Eight threads claiming from 500 reports get every report exactly once between them.
    @Test func concurrentClaimersNeverShare() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let names = (0..<500).map { reportName($0, minutesAgo: Int64(500 - $0) % 7, executable: "/bin/w\($0 % 5)", pid: Int32($0)) }
        for name in names { try spool.write(bytes: reportBytes(for: name), name: name) }

        let claimed = Locked<[[ReportFileName]]>(Array(repeating: [], count: 8))
        let errors = Locked<[String]>([])
        runOnThreads(8) { thread in
            var mine: [ReportFileName] = []
            while true {
                do {
                    let batch = try spool.claim(limit: 1 + thread % 3)
                    if batch.isEmpty { break }
                    for claim in batch {
                        if try claim.bytes() != reportBytes(for: claim.name) { errors.withLock { $0.append("torn \(claim.name)") } }
                        mine.append(claim.name)
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                    break
                }
            }
            claimed.withLock { $0[thread] = mine }
        }
        #expect(errors.current == [])
        let all = claimed.current.flatMap { $0 }
        #expect(all.count == 500)
        #expect(Set(all) == Set(names))
        #expect(claimed.current.filter { !$0.isEmpty }.count >= 2)  // the work really was shared
        #expect(try spool.reports().isEmpty)
        #expect(try spool.claims().count == 500)
        for info in try spool.claims() { try spool.acknowledge(info.claim) }
        #expect(Probe.names(temporary.join(".claims")) == [])
    }
}
