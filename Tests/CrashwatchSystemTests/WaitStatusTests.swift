// WaitStatusTests.swift — decoding of waitpid status words, checked against glibc's W* macro semantics.
import CrashwatchSystem
import Testing

@Suite struct WaitStatusTests {
    @Test func exitCodes() {
        #expect(WaitStatus(raw: 0) == .exited(code: 0))
        #expect(WaitStatus(raw: 42 << 8) == .exited(code: 42))
        #expect(WaitStatus(raw: 255 << 8) == .exited(code: 255))
    }

    @Test func signalDeaths() {
        #expect(WaitStatus(raw: 11) == .signaled(signal: 11, coreDumped: false))
        #expect(WaitStatus(raw: 11 | 0x80) == .signaled(signal: 11, coreDumped: true))
        #expect(WaitStatus(raw: 9) == .signaled(signal: 9, coreDumped: false))
        #expect(WaitStatus(raw: 9).isTermination)
    }

    @Test func ptraceStops() {
        // A signal-delivery-stop for SIGUSR1.
        #expect(WaitStatus(raw: (10 << 8) | 0x7f) == .stopped(signal: 10, event: 0))
        // PTRACE_EVENT_CLONE: SIGTRAP | (3 << 8) in the second byte pair.
        #expect(WaitStatus(raw: (3 << 16) | (5 << 8) | 0x7f) == .stopped(signal: 5, event: 3))
        // A group-stop under PTRACE_SEIZE: PTRACE_EVENT_STOP with SIGTSTP.
        #expect(WaitStatus(raw: (128 << 16) | (20 << 8) | 0x7f) == .stopped(signal: 20, event: 128))
        #expect(!WaitStatus(raw: (19 << 8) | 0x7f).isTermination)
    }

    @Test func continued() {
        #expect(WaitStatus(raw: 0xffff) == .continued)
    }
}
