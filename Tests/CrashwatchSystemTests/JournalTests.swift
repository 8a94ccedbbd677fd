// JournalTests.swift — journald's native protocol from crashwatch's side: the encoding byte for byte (the binary
// form of a multi-line value), which field names are refused, the value cap, and real sends to an AF_UNIX
// datagram socket the test binds itself: one datagram, and a sealed memfd for an entry too large for one.
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

@Suite struct JournalEncodingTests {
    @Test("a plain value is NAME=value and a newline")
    func plainField() throws {
        let field = try #require(JournalField("MESSAGE", "Something happened."))
        #expect(Journal.encode([field]) == Array("MESSAGE=Something happened.\n".utf8))
    }

    @Test("a value holding a newline is NAME, newline, its length as 64-bit little-endian, the bytes, newline")
    func multiLineValueUsesBinaryForm() throws {
        // The protocol document's own example: BINARY_BLOB with the four bytes "xx\nx".
        let fields = try [#require(JournalField("PRIORITY", "3")), #require(JournalField("BINARY_BLOB", "xx\nx")),
                          #require(JournalField("CODE_FUNC", "some_func"))]
        let expected: [UInt8] = Array("PRIORITY=3\nBINARY_BLOB\n".utf8) + [4, 0, 0, 0, 0, 0, 0, 0] + Array("xx\nx\n".utf8)
            + Array("CODE_FUNC=some_func\n".utf8)
        #expect(Journal.encode(fields) == expected)
        // A length past 255 spreads over the low bytes, least significant first.
        let long = try #require(JournalField("TRACE", String(repeating: "a\n", count: 150)))
        let encoded = Journal.encode([long])
        #expect(Array(encoded[6..<14]) == [44, 1, 0, 0, 0, 0, 0, 0])  // 300 = 0x012c
        #expect(encoded.count == 6 + 8 + 300 + 1)
    }

    @Test("a NUL in a value is sent exactly: nothing goes through a C string")
    func nulInValue() throws {
        let field = try #require(JournalField("CRASHWATCH_EXE", "/opt/a\u{0}b"))
        #expect(Journal.encode([field]) == Array("CRASHWATCH_EXE=/opt/a".utf8) + [0] + Array("b\n".utf8))
    }

    @Test("field names: A-Z, 0-9 and _, not starting with a digit or _ (journald's trusted fields), 1 to 64 characters",
          arguments: [("MESSAGE", true), ("CRASHWATCH_PID", true), ("A", true), ("X9_", true),
                      (String(repeating: "N", count: 64), true), (String(repeating: "N", count: 65), false),
                      ("", false), ("_PID", false), ("_SYSTEMD_UNIT", false), ("9LIVES", false), ("message", false),
                      ("WITH-DASH", false), ("WITH=EQUALS", false), ("WITH\nNEWLINE", false), ("NUL\u{0}", false),
                      ("SPACE NAME", false), ("ÉTAT", false)])
    func fieldNames(name: String, valid: Bool) {
        #expect(JournalField.isValidName(name) == valid)
        #expect((JournalField(name, "x") != nil) == valid)
    }

    @Test("a value longer than 4 KiB is cut at a character boundary and marked; shorter ones are untouched")
    func valueCap() throws {
        let exact = String(repeating: "a", count: JournalField.valueLimit)
        #expect(try #require(JournalField("V", exact)).value == Array(exact.utf8))
        // Two-byte characters, so the cut falls inside one unless it respects boundaries.
        let long = try #require(JournalField("V", String(repeating: "é", count: 5000)))
        #expect(long.value.count <= JournalField.valueLimit)
        let text = try #require(String(validating: long.value, as: UTF8.self), "the cut split a character")
        #expect(text.hasSuffix("…[truncated]"))
        #expect(text.hasPrefix("éé"))
    }
}

@Suite struct JournalSendTests {
    @Test("an entry arrives as one datagram, in the native format, without descriptors")
    func sendsOneDatagram() throws {
        let journal = try DatagramSocket("cw-journal")
        let fields = try [#require(JournalField("MESSAGE", "Process 1 crashed")), #require(JournalField("PRIORITY", "2")),
                          #require(JournalField("CRASHWATCH_TRACE", "frame 0\nframe 1"))]
        #expect(Journal.send(fields, socketPath: journal.path) == .sent)
        let received = try #require(journal.receive())
        #expect(received.descriptors.isEmpty)
        #expect(received.payload == Journal.encode(fields))
        let parsed = try #require(JournalEntry.parse(received.payload))
        #expect(parsed.map(\.0) == ["MESSAGE", "PRIORITY", "CRASHWATCH_TRACE"])
        #expect(parsed[2].1 == Array("frame 0\nframe 1".utf8))
    }

    @Test("an entry too large for a datagram arrives as an empty datagram carrying one fully sealed memfd")
    func largeEntryGoesThroughSealedMemfd() throws {
        let journal = try DatagramSocket("cw-journal")
        // 1000 fields of 4 KiB: 4 MB, more than any datagram the kernel takes by default.
        let value = String(repeating: "x", count: JournalField.valueLimit)
        let fields = try (0..<1000).map { try #require(JournalField("FIELD_\($0)", value)) }
        #expect(Journal.send(fields, socketPath: journal.path) == .sent)
        let received = try #require(journal.receive())
        #expect(received.payload.isEmpty)
        try #require(received.descriptors.count == 1)
        let memfd = received.descriptors[0]
        defer { close(memfd) }
        // F_GET_SEALS (1034): F_SEAL_SEAL|F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE = 15.
        #expect(fcntl(memfd, 1034) == 15)
        var info = stat()
        try #require(fstat(memfd, &info) == 0)
        var contents = [UInt8](repeating: 0, count: Int(info.st_size))
        let read = contents.withUnsafeMutableBytes { pread(memfd, $0.baseAddress, $0.count, 0) }
        #expect(read == contents.count)
        #expect(contents == Journal.encode(fields))
        #expect(JournalEntry.parse(contents)?.count == 1000)
    }

    @Test("no socket, or a socket nobody listens on, is no journal: the caller falls back to stderr")
    func noJournal() throws {
        #expect(Journal.send([try #require(JournalField("MESSAGE", "x"))], socketPath: "/nonexistent/journal/socket") == .noJournal)
        let journal = try DatagramSocket("cw-journal")
        journal.stopListening()
        #expect(Journal.send([try #require(JournalField("MESSAGE", "x"))], socketPath: journal.path) == .noJournal)
    }

    @Test("a socket path holding a NUL, too long, or an empty entry fails at once instead of reaching another socket")
    func refusedRequests() throws {
        let field = try #require(JournalField("MESSAGE", "x"))
        guard case .failed(let nul) = Journal.send([field], socketPath: "/tmp/a\u{0}b") else { Issue.record("sent"); return }
        #expect(nul.errno == EINVAL)
        guard case .failed(let long) = Journal.send([field], socketPath: "/" + String(repeating: "d", count: 200)) else {
            Issue.record("sent"); return
        }
        #expect(long.errno == ENAMETOOLONG)
        guard case .failed(let empty) = Journal.send([], socketPath: "/tmp/x") else { Issue.record("sent"); return }
        #expect(empty.errno == EINVAL)
    }

    @Test("a journal whose queue is full fails with EAGAIN at once: crashwatch never waits for journald")
    func fullQueueDoesNotBlock() throws {
        let journal = try DatagramSocket("cw-journal")
        let field = try #require(JournalField("MESSAGE", String(repeating: "y", count: 4000)))
        var outcome = JournalSendResult.sent
        // Nobody reads: the receive queue fills within a few hundred datagrams.
        for _ in 0..<100_000 {
            outcome = Journal.send([field], socketPath: journal.path)
            if outcome != .sent { break }
        }
        guard case .failed(let error) = outcome else { Issue.record("never failed: \(outcome)"); return }
        #expect(error.errno == EAGAIN)
    }
}
