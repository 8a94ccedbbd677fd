// InputStreamTests.swift — a descriptor read front to back: the same bytes and counts whether it is a pipe
// (skipped bytes are read and dropped) or a regular file (skipped bytes are sought over, never read), a skip
// past the end stops at the end, and a tee sees every byte of a file too, so it is read then.
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// crashwatch's stream (Foundation has an `InputStream` too).
typealias SystemInputStream = CrashwatchSystem.InputStream

@Suite struct InputStreamTests {
    static let bytes = (0..<100).map { UInt8($0) }

    /// The stream's reads and skips over `bytes`: what it read, what each skip dropped, where it ended.
    static func walk(_ input: SystemInputStream) throws -> (read: [[UInt8]], skipped: [UInt64], position: UInt64) {
        var read: [[UInt8]] = []
        var skipped: [UInt64] = []
        read.append(try input.read(5))        // 0..<5
        skipped.append(try input.skip(10))    // 5..<15
        read.append(try input.read(3))        // 15..<18
        skipped.append(try input.skip(1_000)) // to the end: 82
        read.append(try input.read(4))        // nothing left
        skipped.append(try input.skip(UInt64.max))
        return (read, skipped, input.position)
    }

    static let expected: (read: [[UInt8]], skipped: [UInt64], position: UInt64) =
        ([Array(0..<5), Array(15..<18), []], [10, 82, 0], 100)

    @Test("a regular file and a pipe give the same reads, skips and position; a skip past the end stops there")
    func fileAndPipe() throws {
        let directory = try TemporaryDirectory("cw-stream")
        defer { directory.remove() }
        let path = directory.join("data")
        try Data(Self.bytes).write(to: URL(fileURLWithPath: path))
        let file = open(path, O_RDONLY | O_CLOEXEC)
        try #require(file >= 0)
        defer { close(file) }
        let fromFile = try Self.walk(SystemInputStream(fd: file))
        #expect(fromFile.read == Self.expected.read && fromFile.skipped == Self.expected.skipped && fromFile.position == 100)
        #expect(lseek(file, 0, SEEK_CUR) == 100, "the file's own offset is where the stream is")

        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        #expect(Self.bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == 100)
        close(fds[1])
        let fromPipe = try Self.walk(SystemInputStream(fd: fds[0]))
        #expect(fromPipe.read == Self.expected.read && fromPipe.skipped == Self.expected.skipped && fromPipe.position == 100)
    }

    /// Bytes this process has read so far (`/proc/self/io` rchar).
    static func bytesRead() throws -> UInt64 {
        let io = try String(contentsOfFile: "/proc/self/io", encoding: .utf8)
        let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("rchar: ") })
        return try #require(UInt64(line.dropFirst(7)))
    }

    @Test("a skip over 256 MiB of a regular file reads none of them (what a pipe would have to read)")
    func fileSkipIsNotRead() throws {
        let directory = try TemporaryDirectory("cw-stream")
        defer { directory.remove() }
        let path = directory.join("sparse")
        try #require(FileManager.default.createFile(atPath: path, contents: nil) && truncate(path, 256 << 20) == 0)
        let file = open(path, O_RDONLY | O_CLOEXEC)
        try #require(file >= 0)
        defer { close(file) }
        let input = SystemInputStream(fd: file)
        let before = try Self.bytesRead()
        #expect(try input.skip(UInt64.max) == 256 << 20)
        // Half the size: other tests of this process may read meanwhile, never that much in those microseconds.
        #expect(try Self.bytesRead() - before < 128 << 20)
        #expect(input.position == 256 << 20)
    }

    @Test("with a tee, a file's skipped bytes are read so the tee sees every byte in order")
    func teeSeesSkippedBytes() throws {
        let directory = try TemporaryDirectory("cw-stream")
        defer { directory.remove() }
        let path = directory.join("data")
        try Data(Self.bytes).write(to: URL(fileURLWithPath: path))
        let file = open(path, O_RDONLY | O_CLOEXEC)
        try #require(file >= 0)
        defer { close(file) }
        let input = SystemInputStream(fd: file)
        nonisolated(unsafe) var seen: [UInt8] = []
        input.tee = { seen += $0 }
        let walked = try Self.walk(input)
        #expect(walked.read == Self.expected.read && walked.skipped == Self.expected.skipped)
        #expect(seen == Self.bytes)
    }
}
