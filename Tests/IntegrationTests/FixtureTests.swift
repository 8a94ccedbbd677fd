// FixtureTests.swift — every crash fixture run bare and under `crashwatch run`: the same exit status and
// output, and exactly the crash lines its header promises (none where none is due).
import CrashwatchTestSupport
import Foundation
import Testing

/// Fixtures that need a special harness (stdin, a copy of their binary) and are tested elsewhere.
private let speciallyRun: Set<String> = ["sigecho", "deleted_exe"]

@Suite struct FixtureTests {
    static let fixtures = Fixture.all.filter { $0.expectedExit != nil && !speciallyRun.contains($0.name) }

    @Test("bare and supervised runs agree, with the promised crash lines", arguments: fixtures)
    func bareAndSupervised(_ fixture: Fixture) throws {
        let (bare, supervised) = try runBareAndSupervised(Paths.fixture(fixture.name), fixture.arguments,
                                                          environment: fixture.environment)
        try check(fixture, bare: bare, supervised: supervised)
    }

    @Test("a deleted executable is supervised like any other")
    func deletedExecutable() throws {
        let fixture = Fixture("deleted_exe")
        // The fixture unlinks its own binary: give each run a fresh copy (its directory kept to the end).
        var directories: [TemporaryDirectory] = []
        defer { directories.forEach { $0.remove() } }
        func copy() throws -> String {
            let directory = try TemporaryDirectory("cw-deleted")
            let path = directory.join("deleted_exe")
            directories.append(directory)
            try FileManager.default.copyItem(atPath: Paths.fixture("deleted_exe"), toPath: path)
            return path
        }
        let bare = try run(try copy())
        let supervisedCopy = try copy()
        let spool = try TemporaryDirectory("cw-spool")
        let supervised = try run(Paths.crashwatch, ["run", "--spool", spool.path, "--", supervisedCopy])
        #expect(!FileManager.default.fileExists(atPath: supervisedCopy), "the fixture should have deleted itself")
        try check(fixture, bare: bare, supervised: supervised)
    }

    private func check(_ fixture: Fixture, bare: RunResult, supervised: RunResult) throws {
        let expectedExit = try #require(fixture.expectedExit)
        #expect(bare.termination == expectedExit, "bare run: \(bare.stderr)")
        #expect(supervised.termination == bare.termination, "supervised run: \(supervised.stderr)")
        #expect(supervised.stdout == bare.stdout)
        if let expected = fixture.expectedStdout {
            #expect(bare.stdout == expected)
        }

        let lines = supervised.crashLines
        #expect(lines.count == fixture.expectedCrashes, "stderr: \(supervised.stderr)")
        let abnormal = supervised.crashwatchLines.filter { $0.contains(" killed by ") }
        if let signal = fixture.keys["ABNORMAL-EXIT"] {
            #expect(abnormal.count == 1 && abnormal.first?.contains("killed by \(signal) (abnormal exit, not a crash)") == true,
                    "stderr: \(supervised.stderr)")
        } else {
            #expect(abnormal.isEmpty, "stderr: \(supervised.stderr)")
        }
        // One "report written" line per crash and per abnormal exit, and nothing else: no errors, no warnings.
        let written = supervised.crashwatchLines.filter { $0.hasPrefix("crashwatch: report written to ") }
        #expect(written.count == lines.count + abnormal.count, "stderr: \(supervised.stderr)")
        #expect(supervised.crashwatchLines.count == lines.count + written.count + abnormal.count, "stderr: \(supervised.stderr)")

        guard let line = lines.first else { return }
        #expect(line.signal == fixture.keys["CRASH-SIGNAL"])
        #expect(line.code == fixture.keys["CRASH-CODE"])
        if let address = fixture.keys["CRASH-ADDR"] { #expect(line.address == address) }
        switch fixture.keys["CRASH-THREAD"] {
        case "main": #expect(line.tid == line.pid, "the crash is on the main thread")
        case let name?: #expect(line.threadName == name)
                        #expect(line.tid != line.pid)
        case nil: break
        }
        // The line is printed before the stacks are unwound: it names the handled fault the supervisor remembers,
        // where the report may find its handler returned (STDERR-ORIGINAL-*, recover_then_abort).
        #expect(line.originalSignal == fixture.keys["STDERR-ORIGINAL-SIGNAL"] ?? fixture.keys["ORIGINAL-SIGNAL"])
        #expect(line.originalCode == fixture.keys["STDERR-ORIGINAL-CODE"] ?? fixture.keys["ORIGINAL-CODE"])
    }
}
