// RetentionPolicyTests.swift — the retention decision as a pure function of names, sizes and "now": the
// flood guard per executable, then age, count and bytes.
import CrashwatchSpool
import Testing

/// The retention decision as a pure function of names, sizes and the current time.
@Suite struct RetentionPolicyTests {
    /// Ten reports one minute apart, the newest one minute before `fixedNow`; entry i is `10 - i` minutes old.
    static let ten = (0..<10).map { index in
        SpoolEntry(name: ReportFileName(timeNanoseconds: fixedNow - Int64(10 - index) * minute, pid: 100, executable: "/usr/bin/app", id: testID(index)),
                   bytes: 1000 + Int64(index))
    }

    /// The default policy keeps 50 reports, has no byte or age limit, and removes nothing from ten.
    @Test func defaults() {
        let policy = RetentionPolicy()
        #expect(policy.maxReports == 50)
        #expect(policy.maxBytes == nil)
        #expect(policy.maxAge == nil)
        #expect(policy.staleTemporaryAge == .seconds(3600))
        #expect(policy.removals(from: Self.ten, now: fixedNow).isEmpty)
    }

    /// A count limit of 3 removes the seven oldest of ten, whatever order they are listed in.
    @Test func countKeepsTheNewest() {
        let removals = RetentionPolicy(maxReports: 3).removals(from: Self.ten.shuffled(), now: fixedNow)
        #expect(removals.map(\.entry) == Array(Self.ten[0..<7]))
        #expect(removals.allSatisfy { $0.reason == .count })
    }

    /// A count limit below 1 is clamped to 1: the newest report always stays.
    @Test(arguments: [0, -5, Int.min])
    func countClampsToOne(maxReports: Int) {
        let policy = RetentionPolicy(maxReports: maxReports)
        #expect(policy.maxReports == 1)
        #expect(policy.removals(from: Self.ten, now: fixedNow).map(\.entry) == Array(Self.ten[0..<9]))
    }

    /// A byte limit removes the oldest reports until the rest fit, and not one more.
    @Test func bytesRemoveOldestUntilTheRestFit() {
        // The newest four are 1006…1009 bytes: 4030 in all.
        let removals = RetentionPolicy(maxBytes: 4030).removals(from: Self.ten, now: fixedNow)
        #expect(removals.map(\.entry) == Array(Self.ten[0..<6]))
        #expect(removals.allSatisfy { $0.reason == .bytes })
        #expect(RetentionPolicy(maxBytes: 4029).removals(from: Self.ten, now: fixedNow).count == 7)
    }

    /// Even a byte limit of 0 keeps the newest report.
    @Test func bytesNeverRemoveTheNewest() {
        let removals = RetentionPolicy(maxBytes: 0).removals(from: Self.ten, now: fixedNow)
        #expect(removals.map(\.entry) == Array(Self.ten[0..<9]))
        #expect(RetentionPolicy(maxBytes: -1).maxBytes == 0)
    }

    /// An age limit removes reports strictly older than it, possibly all of them, never future-dated ones.
    @Test func ageRemovesStrictlyOlder() {
        // Entries are 10…1 minutes old; a 4-minute limit keeps the ones exactly 4 minutes old and younger.
        let removals = RetentionPolicy(maxAge: .seconds(240)).removals(from: Self.ten, now: fixedNow)
        #expect(removals.map(\.entry) == Array(Self.ten[0..<6]))
        #expect(removals.allSatisfy { $0.reason == .age })
        // Age may remove everything: nothing recent is worth keeping.
        #expect(RetentionPolicy(maxAge: .seconds(1)).removals(from: Self.ten, now: fixedNow).count == 10)
        // A report from the future (clock skew) is not old.
        #expect(RetentionPolicy(maxAge: .seconds(1)).removals(from: Self.ten, now: 0).isEmpty)
    }

    /// With all three limits, age applies first, then count, then bytes, each report named once.
    @Test func eachReportGetsTheFirstLimitItBreaks() {
        let policy = RetentionPolicy(maxReports: 5, maxBytes: 2020, maxAge: .seconds(8 * 60))
        let removals = policy.removals(from: Self.ten, now: fixedNow)
        #expect(removals.map(\.reason) == [.age, .age, .count, .count, .count, .bytes, .bytes, .bytes])
        #expect(removals.map(\.entry) == Array(Self.ten[0..<8]))
    }

    /// A crash loop: `loop` reports of `/usr/bin/loop` one minute apart, with five other executables'
    /// reports spread among them (after the loop's reports 3, 9, 15, 21 and 27), all 1000 bytes.
    static func crashLoop(loop: Int = 30) -> (all: [SpoolEntry], others: [SpoolEntry]) {
        var all: [SpoolEntry] = []
        var others: [SpoolEntry] = []
        for index in 0..<loop {
            all.append(SpoolEntry(name: reportName(index, minutesAgo: Int64(2 * loop - 2 * index), executable: "/usr/bin/loop"),
                                  bytes: 1000))
            if index % 6 == 3 {
                let other = SpoolEntry(name: reportName(1000 + index, minutesAgo: Int64(2 * loop - 2 * index - 1),
                                                        executable: "/opt/other\(index)/bin/svc"),
                                       bytes: 1000)
                all.append(other)
                others.append(other)
            }
        }
        return (all, others)
    }

    /// One executable with 30 reports and five others: with 10 per executable and 20 in all, the loop loses
    /// its 20 oldest to the flood guard and every other executable's report survives.
    @Test func floodGuardKeepsOtherExecutables() {
        let (all, others) = Self.crashLoop()
        #expect(others.count == 5)
        let removals = RetentionPolicy(maxReports: 20, maxPerExecutable: 10).removals(from: all.shuffled(), now: fixedNow)
        let loop = all.filter { $0.name.tag == "loop" }
        #expect(removals.map(\.entry) == Array(loop[0..<20]))
        #expect(removals.allSatisfy { $0.reason == .flood })
        let removed = Set(removals.map(\.entry.name))
        #expect(others.allSatisfy { !removed.contains($0.name) })
        // Without the flood guard the count limit would have taken others' reports too.
        let unguarded = Set(RetentionPolicy(maxReports: 20).removals(from: all, now: fixedNow).map(\.entry.name))
        #expect(others.contains { unguarded.contains($0.name) })
    }

    /// The flood guard runs first; count, bytes and age then apply to what is left, in that documented order.
    @Test func floodThenAgeCountBytes() {
        let (all, _) = Self.crashLoop()
        // Flood leaves the loop's newest 10 (20…2 minutes old) and the 5 others (53, 41, 29, 17, 5): 15.
        // Age (40 minutes) then takes the others at 53 and 41; count (12) takes the one at 29; bytes (11000)
        // takes the loop's report at 20, since 12 × 1000 bytes are too many.
        let policy = RetentionPolicy(maxReports: 12, maxPerExecutable: 10, maxBytes: 11_000, maxAge: .seconds(40 * 60))
        let removals = policy.removals(from: all, now: fixedNow)
        #expect(removals.map(\.reason) == Array(repeating: .flood, count: 20) + [.age, .age, .count, .bytes])
        #expect(removals.count == 24)
        let kept = Set(all.map(\.name)).subtracting(removals.map(\.entry.name))
        #expect(kept.count == 11)
        // What is kept is the newest 11 of what the flood guard left.
        let afterFlood = all.filter { entry in !removals.contains { $0.reason == .flood && $0.entry == entry } }.sorted { $0.name < $1.name }
        #expect(kept == Set(afterFlood.suffix(11).map(\.name)))
    }

    /// Each executable is limited on its own; tags compare exactly, and legacy names without a tag are not grouped.
    @Test func floodGuardGroupsByTagOnly() throws {
        var entries: [SpoolEntry] = []
        for index in 0..<4 { entries.append(SpoolEntry(name: reportName(index, minutesAgo: Int64(50 - index), executable: "/a/x"), bytes: 1)) }
        for index in 4..<7 { entries.append(SpoolEntry(name: reportName(index, minutesAgo: Int64(50 - index), executable: "/b/x"), bytes: 1)) }
        for index in 7..<10 { entries.append(SpoolEntry(name: reportName(index, minutesAgo: Int64(50 - index), executable: "/b/y"), bytes: 1)) }
        for index in 10..<15 {
            let legacy = try #require(ReportFileName(parsing: "20231114T220000.000Z-\(index)-\(testID(index).uuidString.lowercased()).json"))
            entries.append(SpoolEntry(name: legacy, bytes: 1))
        }
        // /a/x and /b/x share the tag `x` (7 reports); `y` has 3; the 5 legacy names are not one group.
        let removals = RetentionPolicy(maxPerExecutable: 2).removals(from: entries, now: fixedNow)
        #expect(removals.map(\.entry) == Array(entries[0..<5]) + [entries[7]])
        #expect(RetentionPolicy(maxPerExecutable: 0).maxPerExecutable == 1)
        #expect(RetentionPolicy(maxPerExecutable: -3).maxPerExecutable == 1)
        #expect(RetentionPolicy().maxPerExecutable == nil)
        #expect(RetentionPolicy(maxPerExecutable: 7).removals(from: entries, now: fixedNow).isEmpty)
    }
}
