// StormTests.swift — the spool under load, at library level: eight writer threads pruning after every write
// while two reader threads claim, read and acknowledge; afterwards every report is accounted for exactly once
// and no file is torn, partial or left behind.
import CrashwatchSpool
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// Writers, readers and retention on one spool at the same time.
@Suite struct SpoolStormTests {
    /// 8 writers × 100 reports with retention after each write (200 reports, 60 per executable) and 2
    /// readers acknowledging what they claim: acknowledged + pruned + remaining == 800, nothing twice.
    ///
    /// Takes a few seconds: 800 atomic writes (two fsyncs each) and 800 prunes of a directory of hundreds.
    @Test func writersReadersAndRetentionTogether() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let policy = RetentionPolicy(maxReports: 200, maxPerExecutable: 60)
        let writers = 8
        let perWriter = 100
        // Writer w's report j: written j-th by w, its time grows with j. Writers 0-3 stand for one executable in
        // a crash loop (half of all reports, so the flood guard bites); writers 4-7 each for their own.
        let names = (0..<writers * perWriter).map { index in
            let writer = index / perWriter
            return ReportFileName(timeNanoseconds: fixedNow + Int64(index % perWriter) * 1_000_000_000 + Int64(writer) * 1_000_000,
                                  pid: Int32(1000 + writer), executable: writer < 4 ? "/usr/bin/loop" : "/usr/bin/writer\(writer)",
                                  id: testID(index))
        }

        let pruned = Locked<[ReportFileName: PruneReason]>([:])
        let acknowledged = Locked<Set<ReportFileName>>([])
        let problems = Locked<[String]>([])
        let writersLeft = Locked(writers)
        let written = Locked(0)

        runOnThreads(writers + 2) { thread in
            if thread < writers {
                for name in names[(thread * perWriter)..<((thread + 1) * perWriter)] {
                    do {
                        try spool.write(bytes: reportBytes(for: name), name: name)
                        written.withLock { $0 += 1 }
                        let result = try spool.prune(policy: policy, now: fixedNow + 3_600_000_000_000)
                        if !result.failures.isEmpty { problems.withLock { $0.append("prune failed: \(result.failures)") } }
                        for file in result.removed {
                            guard let removed = ReportFileName(parsing: file.name) else {
                                problems.withLock { $0.append("pruned a non-report \(file.name) (\(file.reason))") }
                                continue
                            }
                            let previous = pruned.withLock { $0.updateValue(file.reason, forKey: removed) }
                            if previous != nil { problems.withLock { $0.append("pruned twice: \(removed)") } }
                        }
                    } catch {
                        problems.withLock { $0.append("writer \(thread): \(error)") }
                    }
                }
                writersLeft.withLock { $0 -= 1 }
            } else {
                // Readers start once half the reports are written, so that retention has work to do while they
                // claim, and stop when the writers are done: what is left stays in the spool.
                while written.current < writers * perWriter / 2 { sched_yield() }
                while writersLeft.current > 0 {
                    do {
                        let batch = try spool.claim(limit: 1 + thread % 4)
                        if batch.isEmpty { sched_yield() }
                        for claim in batch {
                            let bytes = try claim.bytes()
                            if bytes != reportBytes(for: claim.name) {
                                problems.withLock { $0.append("torn or partial: \(claim.name) has \(bytes.count) bytes") }
                            }
                            try spool.acknowledge(claim)
                            let inserted = acknowledged.withLock { $0.insert(claim.name).inserted }
                            if !inserted { problems.withLock { $0.append("read twice: \(claim.name)") } }
                        }
                    } catch {
                        problems.withLock { $0.append("reader \(thread): \(error)") }
                    }
                }
            }
        }

        #expect(problems.current == [])
        let remaining = try spool.reports()
        #expect(try spool.claims().isEmpty)  // every claim was acknowledged
        for entry in remaining {
            #expect(try spool.read(entry.name) == reportBytes(for: entry.name), "torn or partial: \(entry.name)")
        }
        let ackedNames = acknowledged.current
        let prunedNames = Set(pruned.current.keys)
        let remainingNames = Set(remaining.map(\.name))
        #expect(ackedNames.isDisjoint(with: prunedNames))
        #expect(ackedNames.isDisjoint(with: remainingNames))
        #expect(prunedNames.isDisjoint(with: remainingNames))
        #expect(ackedNames.count + prunedNames.count + remainingNames.count == names.count)
        #expect(ackedNames.union(prunedNames).union(remainingNames) == Set(names))
        #expect(remaining.count <= policy.maxReports)
        #expect(Dictionary(grouping: remaining, by: { $0.name.tag }).values.allSatisfy { $0.count <= 60 })
        // The flood guard had work to do (the crash loop writes half of all reports, four times as fast as
        // any other executable); the count limit usually too, depending on the schedule; nothing else ran.
        let reasons = Set(pruned.current.values)
        #expect(reasons.contains(.flood))
        #expect(reasons.isSubset(of: [.flood, .count]))
        #expect(!ackedNames.isEmpty)
        // Nothing but reports and the claims directory is left: no temporary or partial files.
        #expect(Set(Probe.names(temporary.path)) == Set(remaining.map(\.name.text) + [".claims"]))
        #expect(Probe.names(temporary.join(".claims")) == [])
    }
}
