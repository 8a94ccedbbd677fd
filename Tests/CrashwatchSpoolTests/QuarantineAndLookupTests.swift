// QuarantineAndLookupTests.swift — setting bad files aside with a reason, refusing planted links there,
// reading reports safely (no links, no FIFOs, a size limit), and finding reports by id prefix.
@testable import CrashwatchSpool
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// Quarantining files with a reason, and listing the quarantine.
@Suite struct SpoolQuarantineTests {
    /// A quarantined file moves into `.quarantine/` with a 0640 one-line reason file: RFC 3339 time, reason.
    @Test func quarantineMovesFileAndRecordsReason() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let bad = reportName(1, minutesAgo: 2)
        let good = reportName(2, minutesAgo: 1)
        try spool.write(bytes: Array("{not json".utf8), name: bad)
        try spool.write(bytes: reportBytes(for: good), name: good)

        try spool.quarantine(name: bad.text, reason: "invalid JSON at byte 1:\nexpected a string", now: fixedNow + 123_456_789)
        #expect(try spool.reports().map(\.name) == [good])
        let quarantine = temporary.join(".quarantine")
        #expect(Probe.names(quarantine) == [bad.text, bad.text + ".reason"])
        #expect(Probe.contents(quarantine + "/" + bad.text) == Array("{not json".utf8))
        #expect(Probe.permissions(quarantine + "/" + bad.text) == 0o640)
        let reasonPath = quarantine + "/" + bad.text + ".reason"
        #expect(Probe.permissions(reasonPath) == 0o640)
        #expect(Probe.contents(reasonPath) == Array("2023-11-14T22:13:20.123Z invalid JSON at byte 1: expected a string\n".utf8))
        #expect(Probe.permissions(quarantine) == Probe.permissions(temporary.path))

        #expect(try spool.quarantined() == [
            QuarantinedFile(name: bad.text, kind: .regular, bytes: 9, time: "2023-11-14T22:13:20.123Z",
                            reason: "invalid JSON at byte 1: expected a string"),
        ])
        // Quarantined files take no part in listing, claiming or pruning.
        #expect(try spool.claim(limit: 10).map(\.name) == [good])
        #expect(try spool.prune(policy: RetentionPolicy(maxReports: 1, maxAge: .zero)).removed.isEmpty)
    }

    /// A claimed report a shipper cannot use is quarantined from `.claims`.
    @Test func quarantineAClaim() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let name = reportName(1, minutesAgo: 1)
        try spool.write(bytes: Array("garbage".utf8), name: name)
        let claim = try #require(try spool.claim().first)
        try spool.quarantine(claim, reason: "not JSON", now: fixedNow)
        #expect(Probe.names(temporary.join(".claims")) == [])
        #expect(try spool.quarantined().map(\.name) == [name.text])
        #expect(try spool.quarantined().map(\.reason) == ["not JSON"])
        #expect(throws: SpoolError.claimLost(spool: temporary.path, name: name.text)) { try spool.acknowledge(claim) }
    }

    /// `.quarantine` planted as a link or a file is refused: the bad file stays where it was, nothing is written.
    @Test(arguments: [true, false])
    func plantedQuarantineIsRefused(asLink: Bool) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spoolPath = temporary.join("spool")
        let spool = try Spool(path: spoolPath)
        let name = reportName(1, minutesAgo: 1)
        try spool.write(bytes: [1], name: name)
        let elsewhere = temporary.join("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        if asLink { try Probe.symlink(spoolPath + "/.quarantine", to: elsewhere) } else {
            try Probe.writeFile(spoolPath + "/.quarantine", [])
        }
        let expected = SpoolError.unsafeSubdirectory(spool: spoolPath, name: ".quarantine", kind: asLink ? .symbolicLink : .regular)
        #expect(throws: expected) { try spool.quarantine(name: name.text, reason: "x") }
        #expect(throws: expected) { try spool.quarantined() }
        #expect(try spool.reports().map(\.name) == [name])
        #expect(Probe.names(elsewhere) == [])
        #expect(expected.description.hasPrefix("\(spoolPath)/.quarantine is a "))
    }

    /// Names that are not report names (paths, dot names, foreign files) are refused before anything moves.
    @Test(arguments: ["", ".", "..", "../x", "a/b", ".claims", ".quarantine", "notes.txt",
                      "/etc/passwd", "20240229T235959.123Z-1-app-0f8fad5b-d9cb-469f-a165-70867728950e.json/"])
    func invalidNamesAreRefused(name: String) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        #expect(throws: SpoolError.invalidName(spool: temporary.path, name: name)) {
            try spool.quarantine(name: name, reason: "x")
        }
        #expect(Probe.names(temporary.path) == [])
    }

    /// A link planted under a report's name is quarantined as the link itself; its target is untouched.
    @Test func quarantineMovesALinkWithoutFollowingIt() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spoolPath = temporary.join("spool")
        let spool = try Spool(path: spoolPath)
        let victim = temporary.join("victim")
        try Probe.writeFile(victim, Array("secret".utf8))
        let name = reportName(1, minutesAgo: 1)
        try Probe.symlink(spoolPath + "/" + name.text, to: victim)
        try spool.quarantine(name: name.text, reason: "a symbolic link", now: fixedNow)
        #expect(Probe.isSymbolicLink(spoolPath + "/.quarantine/" + name.text))
        #expect(Probe.contents(victim) == Array("secret".utf8))
        #expect(try spool.quarantined().map(\.kind) == [.symbolicLink])
    }

    /// A file that is gone (claimed or removed meanwhile) cannot be quarantined, and says so.
    @Test func missingFile() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let name = reportName(1, minutesAgo: 1)
        let error = try #require(throws: SpoolError.self) { try spool.quarantine(name: name.text, reason: "x") }
        guard case .quarantineFile(temporary.path, name.text, let system) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(system.isNotFound)
    }

    /// Reason lines keep one line whatever the reason holds, and parse back; times format as RFC 3339.
    @Test func reasonLines() {
        #expect(Spool.reasonLine(reason: "a\r\nb\tc\u{7f}", now: 0) == "1970-01-01T00:00:00.000Z a  b c \n")
        #expect(Spool.reasonLine(reason: String(repeating: "é", count: 3000), now: 0).utf8.count == 25 + 4096 + 1)
        #expect(Spool.parseReasonLine(Array("2024-02-29T23:59:59.123Z why not\n".utf8)) == ("2024-02-29T23:59:59.123Z", "why not"))
        #expect(Spool.parseReasonLine([]) == (nil, nil))
        #expect(rfc3339(nanoseconds: 1_709_251_199_123_999_999) == "2024-02-29T23:59:59.123Z")
        #expect(rfc3339(nanoseconds: .max) == "2262-04-11T23:47:16.854Z")
    }
}

/// Reading reports safely and finding them by id.
@Suite struct SpoolLookupTests {
    /// `read` returns exactly the bytes, up to and including `maxBytes`.
    @Test func readsExactBytesUpToTheLimit() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let name = reportName(1, minutesAgo: 1)
        try spool.write(bytes: Array(repeating: 7, count: 10), name: name)
        #expect(try spool.read(name) == Array(repeating: 7, count: 10))
        #expect(try spool.read(name, maxBytes: 10) == Array(repeating: 7, count: 10))
        #expect(throws: SpoolError.tooLarge(spool: temporary.path, name: name.text, bytes: 10, limit: 9)) {
            try spool.read(name, maxBytes: 9)
        }
        let empty = reportName(2, minutesAgo: 1)
        try spool.write(bytes: [UInt8](), name: empty)
        #expect(try spool.read(empty, maxBytes: 0) == [])
    }

    /// A link, a FIFO (never opened, so nothing blocks) and a directory under a report's name are refused.
    @Test func readRefusesLinksFIFOsAndDirectories() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spoolPath = temporary.join("spool")
        let spool = try Spool(path: spoolPath)
        let victim = temporary.join("victim")
        try Probe.writeFile(victim, Array("secret".utf8))
        let link = reportName(1, minutesAgo: 1)
        let fifo = reportName(2, minutesAgo: 1)
        let directory = reportName(3, minutesAgo: 1)
        try Probe.symlink(spoolPath + "/" + link.text, to: victim)
        try Probe.fifo(spoolPath + "/" + fifo.text)
        try FileManager.default.createDirectory(atPath: spoolPath + "/" + directory.text, withIntermediateDirectories: false)

        let linkError = SpoolError.notARegularFile(spool: spoolPath, name: link.text, kind: .symbolicLink)
        #expect(throws: linkError) { try spool.read(link) }
        #expect(linkError.description == "\(link.text) in spool \(spoolPath) is a symbolic link; crashwatch never follows links in the spool")
        #expect(throws: SpoolError.notARegularFile(spool: spoolPath, name: fifo.text, kind: .other)) { try spool.read(fifo) }
        #expect(throws: SpoolError.notARegularFile(spool: spoolPath, name: directory.text, kind: .directory)) {
            try spool.read(directory)
        }
        let missing = reportName(4, minutesAgo: 1)
        let error = try #require(throws: SpoolError.self) { try spool.read(missing) }
        #expect(error.systemError?.isNotFound == true)
    }

    /// A unique prefix (any case) finds its report; a shared one is ambiguous; none, or junk, is refused.
    @Test func findByPrefix() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let ids = ["5ec7d9f7-0000-4000-8000-000000000001", "5ec7aaaa-0000-4000-8000-000000000002", "0f8fad5b-d9cb-469f-a165-70867728950e"]
        var names: [ReportFileName] = []
        for (index, id) in ids.enumerated() {
            let name = ReportFileName(timeNanoseconds: fixedNow + Int64(index) * minute, pid: 9, executable: "app", id: UUID(uuidString: id)!)
            try spool.write(bytes: [1], name: name)
            names.append(name)
        }
        #expect(try spool.find(idPrefix: "5ec7d") == names[0])
        #expect(try spool.find(idPrefix: "5EC7A") == names[1])
        #expect(try spool.find(idPrefix: ids[2]) == names[2])
        #expect(try spool.latest() == names[2])
        #expect(throws: SpoolError.ambiguous(spool: temporary.path, prefix: "5ec7", count: 2)) { try spool.find(idPrefix: "5ec7") }
        #expect(throws: SpoolError.noSuchReport(spool: temporary.path, id: "5ec8")) { try spool.find(idPrefix: "5ec8") }
        for junk in ["", "../5ec7", "5ec7/", "xyz", "5ec7d9f7-0000-4000-8000-0000000000011", "*"] {
            #expect(throws: SpoolError.invalidID(spool: temporary.path, id: junk)) { try spool.find(idPrefix: junk) }
        }
        #expect(SpoolError.ambiguous(spool: "/s", prefix: "5ec7", count: 2).description
            == "2 reports in spool /s have ids starting with 5ec7; give more of the id")
        // Claimed reports are not in the spool's listing any more.
        _ = try spool.claim(id: "0f8f")
        #expect(throws: SpoolError.noSuchReport(spool: temporary.path, id: "0f8f")) { try spool.find(idPrefix: "0f8f") }
        #expect(try spool.latest() == names[1])
    }

    /// An empty spool has no latest report.
    @Test func latestOfEmptySpool() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        #expect(try Spool(path: temporary.path).latest() == nil)
    }
}

/// Pruning a spool that has claims.
@Suite struct SpoolPruneClaimTests {
    /// Prune applies the limits to unclaimed reports only and names the claims it left alone.
    @Test func pruneSkipsClaimsAndReportsThem() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try SpoolClaimTests.spool(with: 10, in: temporary)
        let claimed = try spool.claim(limit: 3)
        #expect(claimed.map(\.name) == Array(names[0..<3]))
        let result = try spool.prune(policy: RetentionPolicy(maxReports: 2), now: fixedNow)
        #expect(result.removed.map(\.name) == names[3..<8].map(\.text))
        #expect(result.kept.map(\.name) == Array(names[8...]))
        #expect(result.skippedClaimed == names[0..<3].map(\.text))
        #expect(result.failures.isEmpty)
        #expect(try spool.claims().map(\.name) == Array(names[0..<3]))
        // Age does not touch a live holder's claim either.
        let aged = try spool.prune(policy: RetentionPolicy(maxAge: .zero), now: fixedNow)
        #expect(aged.removed.map(\.name) == names[8...].map(\.text))
        #expect(aged.skippedClaimed == names[0..<3].map(\.text))
        #expect(try spool.claims().count == 3)
    }

    /// A dead holder's claim older than the age limit is removed as `.staleClaim`; a younger one stays.
    @Test func staleClaimsBeyondMaxAgeGo() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try SpoolClaimTests.spool(with: 4, in: temporary)  // 4, 3, 2, 1 minutes old
        let dead = ClaimHolder(pid: impossiblePID, startTicks: 9)
        let old = try spool.claim(id: names[0].idText, holder: dead)
        _ = try spool.claim(id: names[3].idText, holder: dead)
        let live = try spool.claim(id: names[1].idText)
        // 90 seconds: the unclaimed report (2 minutes old) and the dead holder's 4-minute-old claim go; the
        // dead holder's 1-minute-old claim and this process's claim stay.
        let result = try spool.prune(policy: RetentionPolicy(maxAge: .seconds(90)), now: fixedNow)
        #expect(result.removed == [
            PrunedFile(name: names[2].text, bytes: Int64(reportBytes(for: names[2]).count), reason: .age),
            PrunedFile(name: ".claims/" + old.entryName, bytes: Int64(reportBytes(for: names[0]).count), reason: .staleClaim),
        ])
        #expect(result.skippedClaimed == [names[1].text, names[3].text])
        #expect(try spool.claims().map(\.claim.entryName).sorted() == [live.entryName, "\(names[3].text).\(dead.text)"].sorted())
        #expect(PruneReason.staleClaim.description == "claimed by a reader that died, and older than the age limit")
    }

    /// An unusable `.claims` is reported as a failure; the spool itself is still pruned.
    @Test func unusableClaimsDirectoryDoesNotStopPruning() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try SpoolClaimTests.spool(with: 3, in: temporary)
        try Probe.symlink(temporary.join(".claims"), to: "/")
        let result = try spool.prune(policy: RetentionPolicy(maxReports: 1), now: fixedNow)
        #expect(result.removed.map(\.name) == names[0..<2].map(\.text))
        #expect(result.failures == [.unsafeSubdirectory(spool: temporary.path, name: ".claims", kind: .symbolicLink)])
    }

    /// On disk too, a crash loop loses its own oldest reports and the others stay.
    @Test func floodGuardOnDisk() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        var loop: [ReportFileName] = []
        var others: [ReportFileName] = []
        for index in 0..<30 {
            let name = reportName(index, minutesAgo: Int64(100 - 2 * index), executable: "/usr/bin/loop")
            try spool.write(bytes: [1], name: name)
            loop.append(name)
            if index % 6 == 0 {
                let other = reportName(100 + index, minutesAgo: Int64(99 - 2 * index), executable: "/usr/bin/other\(index)")
                try spool.write(bytes: [1], name: other)
                others.append(other)
            }
        }
        let result = try spool.prune(policy: RetentionPolicy(maxReports: 20, maxPerExecutable: 10), now: fixedNow)
        #expect(result.removed.map(\.name) == loop[0..<20].map(\.text))
        #expect(result.removed.allSatisfy { $0.reason == .flood })
        #expect(Set(try spool.reports().map(\.name)) == Set(loop[20...] + others))
    }
}
