// LineOutputTests.swift — crashwatch's stderr lines once the program runs: a writer never waits on a
// stream nobody reads, lines come out in order once it is read, a bounded amount waits and the rest is
// counted, and flushing gives up at its deadline.
import CrashwatchSystem
import Dispatch
import Glibc
import Testing

@Suite struct LineOutputTests {
    /// A pipe already full, as the program would leave it: (read end, write end).
    static func fullPipe() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(Glibc.pipe(&fds) == 0)
        let filler = Array(String(repeating: "xxxxxxx\n", count: 8192).utf8)  // whole lines, whatever part fits
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        while (filler.withUnsafeBytes { Glibc.write(fds[1], $0.baseAddress, $0.count) }) > 0 {}
        _ = fcntl(fds[1], F_SETFL, 0)
        return (fds[0], fds[1])
    }

    /// Starts reading everything from `fd` on another thread; the call returned gives it, once the write
    /// end is closed.
    static func drainInBackground(_ fd: Int32) -> () -> String {
        let drained = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var text = ""
        DispatchQueue.global().async {
            text = drain(fd)
            drained.signal()
        }
        return {
            drained.wait()
            return text
        }
    }

    /// Everything left in the read end `fd`, once the write end is closed.
    static func drain(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("into a full pipe nobody reads, writing never waits; once it is read every line comes out, in order")
    func fullPipe() throws {
        let (reader, writer) = try Self.fullPipe()
        defer { close(reader) }
        let output = LineOutput(fd: writer)
        #expect(output.start())
        let started = Clock.monotonicNanoseconds()
        for number in 0..<100 { output.write("line \(number)\n") }
        #expect(Clock.monotonicNanoseconds() - started < 500_000_000, "writing waited on the full pipe")
        #expect(!output.flush(until: Clock.monotonicNanoseconds() + 100_000_000), "flushed into a pipe nobody reads")
        let drained = Self.drainInBackground(reader)
        #expect(output.flush(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        close(writer)
        let text = drained()
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("line ") }.map(String.init)
        #expect(lines == (0..<100).map { "line \($0)" })
    }

    @Test("past the capacity lines are dropped, and the count of them is written with the next")
    func capacity() throws {
        let (reader, writer) = try Self.fullPipe()
        defer { close(reader) }
        let output = LineOutput(fd: writer, capacity: 64)
        #expect(output.start())
        // 5 lines of 20 bytes: three fit in 64 bytes while nothing is read, two are dropped.
        for number in 0..<5 { output.write("line \(number) .........\n") }
        let drained = Self.drainInBackground(reader)
        #expect(output.flush(until: Clock.monotonicNanoseconds() + 5_000_000_000))
        close(writer)
        let text = drained()
        #expect(text.contains("crashwatch: 2 line(s) to this stream were dropped"), "\(text.suffix(300))")
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("line ") }.count == 3)
    }

    @Test("before start, a line is written at once")
    func notStarted() throws {
        var fds: [Int32] = [-1, -1]
        try #require(Glibc.pipe(&fds) == 0)
        let (reader, writer) = (fds[0], fds[1])
        defer { close(reader) }
        LineOutput(fd: writer).write("now\n")
        close(writer)
        #expect(Self.drain(reader) == "now\n")
    }
}
