// SyscallLineTests.swift — the first field of /proc/TID/syscall as the snapshot reads it: a number while the
// thread is in a system call, -1 when it is in none, nothing for `running` or anything else.
import CrashwatchSystem
import Testing

@Suite struct SyscallLineTests {
    @Test("/proc/TID/syscall: a number, -1, or nothing for running and garbage", arguments: [
        ("202 0x7f3a 0x80 0x0 0x0 0x0 0x0 0x7ffd5e3c 0x7f3a9c29\n", 202), ("0 0x3 0x7f 0x20000 0x0 0x0 0x0 0x7ffd 0x7f\n", 0),
        ("-1 0x7ffd5e3ca0f0 0x55d4c2a01139\n", -1), ("running\n", nil), ("", nil), ("12345678901 0x0\n", nil), ("-2 0x0\n", nil),
    ] as [(String, Int?)])
    func parse(_ line: String, _ expected: Int?) {
        #expect(ProcFS.syscallNumber(Array(line.utf8)) == expected)
    }
}
