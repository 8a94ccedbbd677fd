// ProcStatusTests.swift — /proc/PID/status parsing from text, and signal dispositions from its masks.
import CrashwatchModel
import CrashwatchSystem
import Testing

@Suite struct ProcStatusTests {
    static let sample = """
        Name:\tmy worker
        Umask:\t0022
        State:\tS (sleeping)
        Tgid:\t4321
        Ngid:\t0
        Pid:\t4323
        PPid:\t4000
        Uid:\t1000\t1000\t1000\t1000
        Gid:\t100\t101\t102\t103
        SigQ:\t0/96365
        SigPnd:\t0000000000000000
        ShdPnd:\t0000000000000000
        SigBlk:\t0000000000000400
        SigIgn:\t0000000000001000
        SigCgt:\t0000000180000400
        Seccomp:\t2
        garbage line without colon
        """

    @Test func parsesFields() {
        let status = ProcStatus(parsing: Self.sample)
        #expect(status.name == "my worker")
        #expect(status.tgid == 4321)
        #expect(status.pid == 4323)
        #expect(status.ppid == 4000)
        #expect(status.uids == [1000, 1000, 1000, 1000])
        #expect(status.gids == [100, 101, 102, 103])
        #expect(status.seccompMode == 2)
        #expect(status.blocked == 0x400)
    }

    @Test func dispositions() {
        let status = ProcStatus(parsing: Self.sample)
        #expect(status.disposition(of: 11) == .handled)  // bit 10 of SigCgt
        #expect(status.disposition(of: 13) == .ignored)  // bit 12 of SigIgn
        #expect(status.disposition(of: 6) == .default)
        #expect(status.disposition(of: 32) == .handled)  // bit 31
        #expect(status.disposition(of: 0) == .default)
        #expect(status.disposition(of: 65) == .default)
    }

    @Test func emptyText() {
        let status = ProcStatus(parsing: "")
        #expect(status.tgid == nil)
        #expect(status.disposition(of: 11) == .default)
    }

    @Test func splitsCommandLines() {
        let bytes = Array("./app\0--flag\0two words\0".utf8)
        #expect(ProcFS.splitNulTerminated(bytes) == ["./app", "--flag", "two words"])
        #expect(ProcFS.splitNulTerminated(Array("a\0\0b\0".utf8)) == ["a", "", "b"])
        #expect(ProcFS.splitNulTerminated([]) == [])
    }
}

/// The supervisor's cheap disposition read: `/proc/TID/stat`'s sigignore and sigcatch agree with `status`.
@Suite struct SignalDispositionTests {
    @Test func statLineFields() throws {
        // A comm with spaces and parentheses, negative fields, and the two masks at fields 33 and 34.
        var fields = (3...52).map { String($0 * 10) }
        fields[0] = "S"
        fields[15] = "-2"
        fields[30] = "4096"  // field 33: sigignore (SIGPIPE)
        fields[31] = "1024"  // field 34: sigcatch (SIGSEGV)
        let line = "4242 (a) b (c) " + fields.joined(separator: " ") + "\n"
        let parsed = try #require(SignalDispositions(statLine: Array(line.utf8)[...]))
        #expect(parsed == SignalDispositions(caught: 1024, ignored: 4096))
        #expect(parsed.disposition(of: 11) == .handled && parsed.disposition(of: 13) == .ignored && parsed.disposition(of: 6) == .default)
        #expect(SignalDispositions(statLine: Array("4242 (a) S 1 2".utf8)[...]) == nil)
        #expect(SignalDispositions(statLine: Array("garbage".utf8)[...]) == nil)
    }

    @Test func readerAgreesWithStatus() throws {
        let reader = DispositionReader()
        let pid = ProcessProbe.currentID
        let status = try ProcFS.threadStatus(pid)
        // stat shows the classic signals only (1-31, the kernel masks the rest): every crash signal is one.
        for _ in 0..<3 {
            #expect(reader.dispositions(of: pid) == SignalDispositions(caught: status.caught & 0x7fff_ffff, ignored: status.ignored & 0x7fff_ffff))
        }
        #expect(Signal.crashSignals.allSatisfy { $0.number <= 31 })
        reader.forget(pid)
        #expect(reader.dispositions(of: Int32.max) == nil)
    }
}
