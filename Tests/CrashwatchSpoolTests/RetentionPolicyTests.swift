// RetentionPolicyTests.swift — the retention decision as a pure function of names, sizes and "now".
import CrashwatchSpool
import Testing

/// The retention decision as a pure function of names, sizes and the current time.
@Suite struct RetentionPolicyTests {
    /// Ten reports one minute apart, the newest one minute before `fixedNow`; entry i is `10 - i` minutes old.
    static let ten = (0..<10).map { index in
        SpoolEntry(name: ReportFileName(timeNanoseconds: fixedNow - Int64(10 - index) * minute, pid: 100, id: testID(index)),
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
}
