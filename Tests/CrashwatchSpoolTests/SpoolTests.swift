// SpoolTests.swift — the spool on a real file system: opening safely, atomic writes with exact modes and
// bytes, links never followed, cleanup after a failed write, listing, and pruning.
import CrashwatchSpool
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// Opening a spool: creation, links followed only when trusted, and refusal of non-directories and unsafe permissions.
@Suite struct SpoolOpenTests {
    /// A missing spool and its parents are created with 0750 (less the umask); trailing slashes are dropped.
    @Test func createsMissingDirectoryAndParents() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let path = temporary.join("a/b/reports")
        let spool = try Spool(path: path + "//")
        #expect(spool.path == path)
        let expected = Spool.directoryPermissions & ~Probe.umask()
        #expect(Probe.permissions(path) == expected)
        #expect(Probe.permissions(temporary.join("a")) == expected)
        #expect(try spool.reports().isEmpty)
    }

    /// Opening without `create` fails on a missing directory and creates nothing.
    @Test func openWithoutCreateFailsOnMissingDirectory() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let path = temporary.join("missing")
        #expect(throws: SpoolError.self) { try Spool(path: path, create: false) }
        #expect(Probe.status(path) == nil)
    }

    /// A spool that group or others may write without the sticky bit is refused, naming the path and mode.
    @Test(arguments: [UInt32(0o777), 0o770, 0o757, 0o722])
    func refusesWritableByOthersWithoutSticky(permissions: UInt32) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let path = temporary.join("spool")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try Probe.chmod(path, permissions)
        let error = try #require(throws: SpoolError.self) { try Spool(path: path) }
        #expect(error == .unsafePermissions(path: path, permissions: permissions))
        #expect(error.description.contains(path))
        #expect(error.description.contains("mode 0\(String(permissions, radix: 8))"))
    }

    /// Sticky shared spools and private ones are accepted and writable.
    @Test(arguments: [UInt32(0o1777), 0o1770, 0o700, 0o750, 0o755])
    func acceptsStickyOrPrivate(permissions: UInt32) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let path = temporary.join("spool")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try Probe.chmod(path, permissions)
        let spool = try Spool(path: path)
        try spool.write(bytes: Array("{}".utf8), name: ReportFileName(timeNanoseconds: fixedNow, pid: 1, executable: "/usr/bin/app", id: testID(1)))
        #expect(try spool.reports().count == 1)
    }

    /// A report name for the link tests.
    static let linkName = ReportFileName(timeNanoseconds: fixedNow, pid: 1, executable: "/usr/bin/app", id: testID(3))

    /// A symbolic link that root (or this user) made, in a directory no one else may write, is followed, with
    /// or without a trailing slash: the report lands in the real directory.
    @Test(arguments: ["", "/"])
    func followsTrustedSymbolicLink(suffix: String) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let real = temporary.join("real")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        let link = temporary.join("link")
        try Probe.symlink(link, to: real)
        let spool = try Spool(path: link + suffix)
        #expect(spool.path == link)
        try spool.write(bytes: Array("{}".utf8), name: Self.linkName)
        #expect(Probe.isRegularFile(real + "/" + Self.linkName.text))
        #expect(Probe.isSymbolicLink(link), "the link itself stays")
    }

    /// systemd's `DynamicUser=yes` + `StateDirectory=NAME`: `/var/lib/NAME` is root's relative link to
    /// `private/NAME` in root's `/var/lib`, and `private` is 0700. Both the state directory and a spool
    /// below it (created on first use) are accepted.
    @Test func acceptsDynamicUserStateDirectory() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let lib = temporary.join("var-lib")
        try FileManager.default.createDirectory(atPath: lib + "/private/demo", withIntermediateDirectories: true)
        try Probe.chmod(lib, 0o755)
        try Probe.chmod(lib + "/private", 0o700)
        try Probe.chmod(lib + "/private/demo", 0o755)
        try Probe.symlink(lib + "/demo", to: "private/demo")
        let state = try Spool(path: lib + "/demo")
        try state.write(bytes: Array("{}".utf8), name: Self.linkName)
        #expect(Probe.isRegularFile(lib + "/private/demo/" + Self.linkName.text))
        let below = try Spool(path: lib + "/demo/reports")
        try below.write(bytes: Array("{}".utf8), name: Self.linkName)
        #expect(Probe.isRegularFile(lib + "/private/demo/reports/" + Self.linkName.text))
    }

    /// A link another user owns is refused, as the spool or on its way, dangling or not, and nothing is
    /// created through it.
    @Test(.enabled(if: geteuid() == 0, "needs root to give a link to another user"), arguments: ["link", "link/reports"])
    func refusesLinkOwnedByAnotherUser(spoolBelowLink: String) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let link = temporary.join("link")
        try Probe.symlink(link, to: temporary.join("nowhere"))
        try Probe.lchown(link, 65534)
        let path = temporary.join(spoolBelowLink)
        let error = try #require(throws: SpoolError.self) { try Spool(path: path) }
        #expect(error == .untrustedLink(path: path, link: link, owner: 65534))
        #expect(error.description == "spool \(path): symbolic link \(link) belongs to uid 65534, neither root nor this user "
            + "(uid \(geteuid())); refusing to follow it (give the real directory, or make the link root's)")
        #expect(Probe.status(temporary.join("nowhere")) == nil)
    }

    /// Root's link in a directory others may write without the sticky bit, or in another user's directory,
    /// is refused: that user could swap it. In a sticky directory (like /tmp) only its owner could, so it is
    /// followed.
    @Test(.enabled(if: geteuid() == 0, "needs root to give a directory to another user"),
          arguments: [(UInt32(0o777), UInt32(0)), (0o775, 0), (0o755, 65534), (0o1777, 0)])
    func judgesTheDirectoryHoldingTheLink(permissions: UInt32, owner: UInt32) throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let real = temporary.join("real")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        let shared = temporary.join("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        let link = shared + "/spool"
        try Probe.symlink(link, to: real)
        try Probe.lchown(shared, owner)
        try Probe.chmod(shared, permissions)
        if permissions == 0o1777 {
            #expect(throws: Never.self) { try Spool(path: link) }
            return
        }
        let error = try #require(throws: SpoolError.self) { try Spool(path: link) }
        #expect(error == .unsafeLinkDirectory(path: link, link: link, directory: shared, owner: owner, permissions: permissions))
        let why = owner == 0 ? "group or others may write without the sticky bit (mode 0\(String(permissions, radix: 8)))"
                             : "belongs to uid \(owner), neither root nor this user (uid \(geteuid()))"
        #expect(error.description == "spool \(link): symbolic link \(link) is in \(shared), which \(why), so another user "
            + "could replace the link; refusing to follow it (give the real directory)")
    }

    /// A link loop ends with ELOOP instead of walking forever.
    @Test func linkLoopFails() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        try Probe.symlink(temporary.join("a"), to: "b")
        try Probe.symlink(temporary.join("b"), to: "a")
        let error = try #require(throws: SpoolError.self) { try Spool(path: temporary.join("a")) }
        guard case .openDirectory(_, let system) = error else { Issue.record("unexpected \(error)"); return }
        #expect(system.errno == ELOOP)
    }

    /// A regular file on the way to the spool is reported as such.
    @Test func fileOnTheWayIsNotADirectory() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        try Probe.writeFile(temporary.join("file"), [1])
        let error = try #require(throws: SpoolError.self) { try Spool(path: temporary.join("file/reports")) }
        #expect(error == .openDirectory(path: temporary.join("file/reports"), SystemError("open \(temporary.join("file"))", errno: ENOTDIR)))
    }

    /// A regular file as the spool is refused as not a directory.
    @Test func refusesRegularFileAsSpool() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let path = temporary.join("file")
        try Probe.writeFile(path, [1, 2, 3])
        #expect(throws: SpoolError.notADirectory(path: path)) { try Spool(path: path) }
    }
}

/// Writing reports: exact bytes and mode, atomicity, links, failure cleanup and concurrency.
@Suite struct SpoolWriteTests {
    /// The report name most write tests use.
    static let name = ReportFileName(timeNanoseconds: 1_709_251_199_123_000_000, pid: 4242, executable: "/usr/bin/app", id: testID(7))

    /// A write leaves exactly one regular file, mode 0640, holding exactly the bytes, and no temporary file.
    @Test func writesExactlyOneFileWithExactModeAndBytes() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = try spool.write(bytes: bytes, name: Self.name)
        #expect(path == temporary.join(Self.name.text))
        #expect(Probe.names(temporary.path) == [Self.name.text])
        #expect(Probe.isRegularFile(path))
        #expect(Probe.permissions(path) == 0o640)
        #expect(Probe.contents(path) == bytes)
        #expect(try spool.reports() == [SpoolEntry(name: Self.name, bytes: 200_000)])
    }

    /// The report's mode is 0640 even when the directory's default ACL narrows what creation gives.
    @Test func modeIsExactlyOwnerReadWriteGroupReadWhateverNarrowedCreation() throws {
        // The umask is process-wide (changing it would race other tests), so narrow creation with a default
        // ACL instead: a file created 0640 in this directory comes out 0600 until fchmod sets it.
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        guard Probe.setNarrowingDefaultACL(temporary.path) else {
            try Test.cancel("the temporary directory's file system does not support POSIX ACLs")
        }
        try Probe.createFile(temporary.join("probe"), permissions: 0o640)
        try #require(Probe.permissions(temporary.join("probe")) == 0o600)
        try FileManager.default.removeItem(atPath: temporary.join("probe"))

        let spool = try Spool(path: temporary.path)
        let path = try spool.write(bytes: [1, 2, 3], name: Self.name)
        #expect(Probe.permissions(path) == 0o640)
    }

    /// `Data`, empty arrays and non-contiguous collections are written byte for byte.
    @Test func acceptsAnyByteCollection() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let data = Data("{\"schemaVersion\":1}".utf8)
        let path = try spool.write(bytes: data, name: Self.name)
        #expect(Probe.contents(path) == Array(data))
        let empty = ReportFileName(timeNanoseconds: 0, pid: 1, executable: "/usr/bin/app", id: testID(8))
        #expect(Probe.contents(try spool.write(bytes: [UInt8](), name: empty)) == [])
        let lazy = ReportFileName(timeNanoseconds: 0, pid: 2, executable: "/usr/bin/app", id: testID(9))
        #expect(Probe.contents(try spool.write(bytes: (0..<10).lazy.map { UInt8($0) }, name: lazy)) == Array(0..<10))
    }

    /// A link planted at the temporary name fails the write (O_EXCL) and its target stays untouched.
    @Test func symbolicLinkAtTemporaryNameIsNotFollowed() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spoolPath = temporary.join("spool")
        let spool = try Spool(path: spoolPath)
        let victim = temporary.join("victim")
        try Probe.writeFile(victim, Array("precious".utf8))
        let planted = "\(spoolPath)/\(Self.name.temporaryName)"
        try Probe.symlink(planted, to: victim)

        let error = try #require(throws: SpoolError.self) { try spool.write(bytes: Array("evil".utf8), name: Self.name) }
        guard case .createTemporaryFile(spoolPath, Self.name.temporaryName, let system) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(system.errno == EEXIST)
        #expect(Probe.contents(victim) == Array("precious".utf8))
        #expect(Probe.permissions(victim) == 0o644 & ~Probe.umask())
        #expect(Probe.isSymbolicLink(planted))  // not ours: left alone
        #expect(Probe.names(spoolPath) == [Self.name.temporaryName])
    }

    /// A link planted at the final name is replaced by the report, and its target stays untouched.
    @Test func symbolicLinkAtFinalNameIsReplacedNotWrittenThrough() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spoolPath = temporary.join("spool")
        let spool = try Spool(path: spoolPath)
        let victim = temporary.join("victim")
        try Probe.writeFile(victim, Array("precious".utf8))
        let planted = "\(spoolPath)/\(Self.name.text)"
        try Probe.symlink(planted, to: victim)

        let path = try spool.write(bytes: Array("report".utf8), name: Self.name)
        #expect(path == planted)
        #expect(Probe.isRegularFile(path))
        #expect(Probe.contents(path) == Array("report".utf8))
        #expect(Probe.contents(victim) == Array("precious".utf8))
        #expect(Probe.names(spoolPath) == [Self.name.text])
    }

    /// A write that runs out of space names the spool and ENOSPC, and leaves no temporary file behind.
    @Test(.enabled(if: Probe.canMountTmpfs, "mounting a tmpfs needs root or CAP_SYS_ADMIN"))
    func failedWriteLeavesNothingBehind() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let mountPoint = temporary.join("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        try #require(Probe.mountTmpfs(mountPoint, size: 64 * 1024, mode: 0o750))
        defer { Probe.unmount(mountPoint) }

        let spool = try Spool(path: mountPoint)
        let error = try #require(throws: SpoolError.self) {
            try spool.write(bytes: [UInt8](repeating: 0x41, count: 1 << 20), name: Self.name)
        }
        #expect(error.systemError?.errno == ENOSPC)
        #expect(error.description == "cannot write report to spool \(mountPoint): No space left on device")
        #expect(Probe.names(mountPoint) == [])
        // The space came back: a small report fits now.
        let small = try spool.write(bytes: Array("{}".utf8), name: Self.name)
        #expect(Probe.names(mountPoint) == [Self.name.text])
        #expect(Probe.contents(small) == Array("{}".utf8))
    }

    /// Thirty-two concurrent writes into one spool all land complete.
    @Test func concurrentWritersAllLand() async throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        let names = (0..<32).map { ReportFileName(timeNanoseconds: fixedNow, pid: Int32($0 + 1), executable: "/usr/bin/app", id: testID($0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, name) in names.enumerated() {
                group.addTask { try spool.write(bytes: [UInt8](repeating: UInt8(index), count: 4096 + index), name: name) }
            }
            try await group.waitForAll()
        }
        #expect(Probe.names(temporary.path) == names.map(\.text).sorted())
        #expect(try spool.reports().map(\.name) == names.sorted())
        for (index, name) in names.enumerated() {
            #expect(Probe.contents(spool.path(of: name)) == [UInt8](repeating: UInt8(index), count: 4096 + index))
        }
    }

    /// Listing skips links, directories, temporary files and other names, even ones shaped like reports.
    @Test func listingSkipsForeignEntries() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        try spool.write(bytes: [1], name: Self.name)
        let linkName = ReportFileName(timeNanoseconds: 0, pid: 1, executable: "/usr/bin/app", id: testID(1)).text
        let directoryName = ReportFileName(timeNanoseconds: 0, pid: 2, executable: "/usr/bin/app", id: testID(2)).text
        try Probe.symlink(temporary.join(linkName), to: spool.path(of: Self.name))
        try FileManager.default.createDirectory(atPath: temporary.join(directoryName), withIntermediateDirectories: false)
        try Probe.writeFile(temporary.join("README"), [1])
        try Probe.writeFile(temporary.join(Self.name.temporaryName), [1])
        #expect(try spool.reports() == [SpoolEntry(name: Self.name, bytes: 1)])
    }
}

/// Pruning a real spool: what goes, what stays, and what is reported.
@Suite struct SpoolPruneTests {
    /// A spool holding ten reports one minute apart (entry i is `10 - i` minutes before `fixedNow`, 100 + i bytes).
    static func tenReports(in temporary: TemporaryDirectory) throws -> (Spool, [ReportFileName]) {
        let spool = try Spool(path: temporary.path)
        var names: [ReportFileName] = []
        for index in 0..<10 {
            let name = ReportFileName(timeNanoseconds: fixedNow - Int64(10 - index) * minute, pid: 500 + Int32(index), executable: "/usr/bin/app", id: testID(index))
            try spool.write(bytes: [UInt8](repeating: 0x7b, count: 100 + index), name: name)
            names.append(name)
        }
        return (spool, names)
    }

    /// A count limit of 3 removes the seven oldest files and reports them with their sizes.
    @Test func countKeepsNewestThree() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.tenReports(in: temporary)
        let result = try spool.prune(policy: RetentionPolicy(maxReports: 3), now: fixedNow)
        #expect(result.removed.map(\.name) == names[0..<7].map(\.text))
        #expect(result.removed.allSatisfy { $0.reason == .count })
        #expect(result.removed.map(\.bytes) == (100..<107).map(Int64.init))
        #expect(result.kept.map(\.name) == Array(names[7...]))
        #expect(result.failures.isEmpty)
        #expect(Probe.names(temporary.path) == names[7...].map(\.text))
    }

    /// A count limit of 0 keeps the newest report.
    @Test func zeroClampsToOne() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.tenReports(in: temporary)
        let result = try spool.prune(policy: RetentionPolicy(maxReports: 0), now: fixedNow)
        #expect(result.removed.count == 9)
        #expect(Probe.names(temporary.path) == [names[9].text])
    }

    /// A byte limit removes the oldest files until the rest fit.
    @Test func bytes() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.tenReports(in: temporary)
        // The newest three take 107 + 108 + 109 = 324 bytes.
        let result = try spool.prune(policy: RetentionPolicy(maxBytes: 324), now: fixedNow)
        #expect(result.removed.map(\.reason) == Array(repeating: .bytes, count: 7))
        #expect(Probe.names(temporary.path) == names[7...].map(\.text))
        #expect(result.kept.reduce(0) { $0 + $1.bytes } == 324)
    }

    /// An age limit removes the files whose names are older than it.
    @Test func age() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.tenReports(in: temporary)
        let result = try spool.prune(policy: RetentionPolicy(maxAge: .seconds(150)), now: fixedNow)
        #expect(result.removed.map(\.name) == names[0..<8].map(\.text))
        #expect(result.removed.allSatisfy { $0.reason == .age })
        #expect(Probe.names(temporary.path) == names[8...].map(\.text))
    }

    /// Temporary files older than an hour go; younger ones and foreign files stay.
    @Test func staleTemporaryFilesGoFreshOnesAndForeignFilesStay() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let (spool, names) = try Self.tenReports(in: temporary)
        let stale = ReportFileName(timeNanoseconds: 0, pid: 1, executable: "/usr/bin/app", id: testID(100)).temporaryName
        let fresh = ReportFileName(timeNanoseconds: 0, pid: 1, executable: "/usr/bin/app", id: testID(101)).temporaryName
        let foreignOld = ".tmp-editor-swap"
        for name in [stale, fresh, foreignOld, "notes.txt"] { try Probe.writeFile(temporary.join(name), [0, 1, 2]) }
        try Probe.setModificationTime(temporary.join(stale), nanoseconds: fixedNow - 61 * minute)
        try Probe.setModificationTime(temporary.join(fresh), nanoseconds: fixedNow - 59 * minute)
        try Probe.setModificationTime(temporary.join(foreignOld), nanoseconds: fixedNow - 600 * minute)
        try Probe.setModificationTime(temporary.join("notes.txt"), nanoseconds: fixedNow - 600 * minute)

        let result = try spool.prune(policy: RetentionPolicy(), now: fixedNow)
        #expect(result.removed == [PrunedFile(name: stale, bytes: 3, reason: .staleTemporary)])
        #expect(result.kept.map(\.name) == names)
        #expect(Probe.names(temporary.path) == (names.map(\.text) + [fresh, foreignOld, "notes.txt"]).sorted())
    }

    /// An empty spool prunes to an empty result.
    @Test func nothingToDo() throws {
        let temporary = try TemporaryDirectory(mode: 0o700)
        defer { temporary.remove() }
        let spool = try Spool(path: temporary.path)
        #expect(try spool.prune(policy: RetentionPolicy(maxReports: 1, maxBytes: 0, maxAge: .zero)) == PruneResult())
    }
}
