// GroupIndexTests.swift — the spool's group index: counting (a report replaced under its id moves, never adds),
// first and last seen, versions, the bounds (groups evicted least recently seen first), the parse of a hostile
// index, concurrent writers under the real flock (no count lost), the rebuild of a missing or damaged index
// from real report files, and retention keeping each group's newest report before older duplicates.
import CrashwatchModel
import CrashwatchSpool
import CrashwatchTestSupport
import Foundation
import Testing

/// A sighting of bug `bug` (its fingerprint is the hash of a frame named after it), report `index`, at `minute`.
private func sighting(bug: String, index: Int, minute: Int64, version: String? = nil, id: String? = nil) -> GroupSighting {
    var report = SampleReport.report
    report.id = id ?? testID(index).uuidString.lowercased()
    report.captureTime = RFC3339.format(nanosecondsSinceEpoch: fixedNow + minute * 60_000_000_000)
    report.process.app = AppRecord(name: "app", version: version, release: nil)
    report.fingerprint = FingerprintRecord(algorithm: Fingerprint.algorithm,
                                           value: Fingerprint.value(kind: "crash", signal: "SIGSEGV", program: "app", frames: [bug]),
                                           kind: "crash", signal: "SIGSEGV", program: "app", frames: [bug])
    return GroupSighting(report, reportName: "report-\(index).json")
}

@Suite struct GroupIndexTests {
    @Test("counts, first and last seen, versions and the newest report per fingerprint")
    func counting() {
        var index = GroupIndex()
        index.record(sighting(bug: "a", index: 0, minute: 5, version: "1.0"))
        index.record(sighting(bug: "a", index: 1, minute: 9, version: "1.1"))
        index.record(sighting(bug: "a", index: 2, minute: 1, version: "1.0"))  // written late, captured early
        index.record(sighting(bug: "b", index: 3, minute: 7))
        let groups = index.newestFirst
        #expect(groups.map(\.topFrame) == ["a", "b"])
        #expect(groups.map(\.count) == [3, 1])
        #expect(groups[0].firstSeenMs == (fixedNow / 1_000_000) + 60_000 && groups[0].lastSeenMs == (fixedNow / 1_000_000) + 540_000)
        #expect(groups[0].versions == ["1.1", "1.0"])
        #expect(groups[0].newestReport == "report-1.json")
        #expect(index.newestReports == ["report-1.json", "report-3.json"])
    }

    @Test("a report written again under its id is counted once; with another fingerprint its count moves")
    func replacement() {
        var index = GroupIndex()
        let id = testID(7).uuidString.lowercased()
        index.record(sighting(bug: "minimal+0x1189", index: 7, minute: 1, id: id))
        index.record(sighting(bug: "minimal+0x1189", index: 7, minute: 1, id: id))
        #expect(index.groups.map(\.count) == [1])
        index.record(sighting(bug: "crash_here", index: 7, minute: 1, id: id))
        #expect(index.groups.map(\.topFrame) == ["crash_here"])
        #expect(index.groups.map(\.count) == [1])
    }

    @Test("a restricted report is counted with no more than its file name shows: no frame, no version, no path")
    func restricted() {
        var report = SampleReport.report
        report.process.app = AppRecord(name: "app", version: "2.0", release: nil)
        let open = GroupSighting(report, reportName: "r.json")
        let closed = GroupSighting(report, reportName: "r.json", restricted: true)
        #expect(closed.fingerprint.value == open.fingerprint.value)
        #expect(closed.fingerprint.frames.isEmpty && closed.version == nil && closed.executable == "segv_reraise")
        var index = GroupIndex()
        index.record(closed)
        #expect(index.groups[0].topFrame == nil && index.groups[0].versions.isEmpty && index.groups[0].executable == "segv_reraise")
    }

    @Test("beyond the bound, the least recently seen groups go; versions keep the newest eight")
    func bounds() {
        var index = GroupIndex()
        for bug in 0..<(GroupIndex.maximumGroups + 5) {
            index.record(sighting(bug: "bug\(bug)", index: bug, minute: Int64(bug)))
        }
        #expect(index.groups.count == GroupIndex.maximumGroups)
        #expect(!index.groups.contains { $0.topFrame == "bug4" } && index.groups.contains { $0.topFrame == "bug5" })
        #expect(index.recent.count == GroupIndex.maximumRecent)
        var versions = GroupIndex()
        for release in 0..<12 { versions.record(sighting(bug: "a", index: release, minute: 1, version: "v\(release)")) }
        #expect(versions.groups[0].versions == (4..<12).map { "v\($0)" })
    }

    @Test("the index round-trips; a damaged or hostile one is refused whole")
    func parse() throws {
        var index = GroupIndex()
        index.record(sighting(bug: "a", index: 0, minute: 1, version: "1.0"))
        #expect(GroupIndex.parse(index.encoded()) == index)
        let good = String(decoding: index.encoded(), as: UTF8.self)
        let value = index.groups[0].fingerprint
        for bad in [
            "", "{", "[]", "not json",
            good.replacingOccurrences(of: "crashwatch.groups", with: "other"),
            good.replacingOccurrences(of: "\"count\":1", with: "\"count\":0"),
            good.replacingOccurrences(of: "\"count\":1", with: "\"count\":-5"),
            good.replacingOccurrences(of: value, with: "not-a-fingerprint"),
            good.replacingOccurrences(of: "\"firstSeenMs\":", with: "\"firstSeenMs\":9"),
            good.replacingOccurrences(of: "\"version\":1", with: "\"version\":2"),
        ] {
            #expect(GroupIndex.parse(Array(bad.utf8)) == nil, "accepted: \(bad.prefix(120))")
        }
        #expect(GroupIndex.parse([UInt8](repeating: UInt8(ascii: " "), count: GroupIndex.maximumFileBytes + 1)) == nil)
        var many = index
        many.groups = (0...GroupIndex.maximumGroups).map { number in
            var group = index.groups[0]
            group.fingerprint = String(format: "%032x", number)
            return group
        }
        #expect(GroupIndex.parse(many.encoded()) == nil)
        var duplicate = index
        duplicate.groups.append(index.groups[0])
        #expect(GroupIndex.parse(duplicate.encoded()) == nil)
    }

    @Test("eight writers at once under the index's flock lose no count")
    func concurrentWriters() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let path = temporary.path
        let failures = Locked(0)
        runOnThreads(8) { writer in
            guard let spool = try? Spool(path: path) else { failures.withLock { $0 += 1 }; return }
            for number in 0..<25 {
                do { try spool.recordInGroups(sighting(bug: number % 2 == 0 ? "even" : "odd", index: writer * 100 + number, minute: 1)) } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.current == 0)
        let index = try Spool(path: path).groupIndex()
        #expect(index.groups.map(\.count).reduce(0, +) == 200)
        #expect(Set(index.groups.map(\.count)) == [104, 96])  // 13 even and 12 odd numbers per writer
        #expect(Probe.names(path + "/.groups") == ["index", "lock"])
    }

    @Test("a missing or damaged index is rebuilt from the reports in the spool")
    func rebuild() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        var written: [String] = []
        for (number, bug) in ["a", "b", "a"].enumerated() {
            let name = reportName(number, minutesAgo: Int64(10 - number))
            var report = SampleReport.report
            report.id = name.idText
            report.captureTime = RFC3339.format(nanosecondsSinceEpoch: name.timeNanoseconds)
            report.threads[0].frames[1].function = bug
            report.signal.originalFault = nil
            let bytes = try report.fingerprinted().encodedJSON()
            try spool.write(bytes: bytes, name: name)
            try spool.recordInGroups(reportBytes: bytes, name: name)
            written.append(name.text)
        }
        let stored = try spool.groupIndex()
        #expect(stored.newestFirst.map(\.count) == [2, 1])
        try Probe.writeFile(temporary.path + "/.groups/index", Array("{\"format\": \"crashwatch.groups\", \"groups\": [".utf8))
        #expect(try spool.groupIndex().newestFirst == stored.newestFirst)
        try FileManager.default.removeItem(atPath: temporary.path + "/.groups/index")
        #expect(try spool.groupIndex().newestFirst == stored.newestFirst)
        #expect(stored.newestFirst[0].newestReport == written[2])
    }

    @Test("retention keeps each group's newest report before older duplicates of busier groups")
    func retentionKeepsEachGroup() {
        // Report 0 is the only one of bug B; reports 1…9 a crash loop of bug A (9 the newest).
        let entries = RetentionPolicyTests.ten
        let keeping: Set<String> = [entries[0].name.text, entries[9].name.text]
        let count = RetentionPolicy(maxReports: 3).removals(from: entries, now: fixedNow, keeping: keeping)
        #expect(count.map(\.entry) == Array(entries[1..<8]))
        let flood = RetentionPolicy(maxPerExecutable: 2).removals(from: entries, now: fixedNow, keeping: keeping)
        #expect(flood.map(\.entry) == Array(entries[1..<9]) && flood.allSatisfy { $0.reason == .flood })
        let bytes = RetentionPolicy(maxBytes: 2100).removals(from: entries, now: fixedNow, keeping: keeping)
        #expect(bytes.map(\.entry) == Array(entries[1..<9]))
        // Without groups (no index), as before: oldest first.
        #expect(RetentionPolicy(maxReports: 3).removals(from: entries, now: fixedNow).map(\.entry) == Array(entries[0..<7]))
        // The age limit removes a group's newest report like any other.
        #expect(RetentionPolicy(maxAge: .seconds(540)).removals(from: entries, now: fixedNow, keeping: keeping).map(\.entry) == [entries[0]])
    }
}
