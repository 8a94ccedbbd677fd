// CrashPolicyTests.swift — DESIGN.md's "when is a signal a crash?" as a table.
import CrashwatchSupervisor
import CrashwatchModel
import CrashwatchSystem
import Testing

@Suite struct CrashPolicyTests {
    @Test(arguments: Array(Signal.crashSignals))
    func unhandledCrashSignalIsFatal(_ signal: Signal) {
        #expect(verdict(for: signal, disposition: .default) == .fatal)
    }

    @Test(arguments: Array(Signal.crashSignals))
    func handledCrashSignalIsRememberedAndDelivered(_ signal: Signal) {
        #expect(verdict(for: signal, disposition: .handled) == .rememberAndDeliver)
    }

    @Test(arguments: Array(Signal.crashSignals))
    func ignoredCrashSignalPassesThrough(_ signal: Signal) {
        // Only a kill()-sent signal can reach the stop while ignored: the kernel resets forced faults to SIG_DFL.
        #expect(verdict(for: signal, disposition: .ignored) == .passThrough)
    }

    @Test(arguments: [Signal.term, .int, .hup, .usr1, .usr2, .pipe, .alrm, .chld, .cont, .tstp, .winch, .kill])
    func otherSignalsPassThrough(_ signal: Signal) {
        for disposition in [SignalDisposition.default, .ignored, .handled] {
            #expect(verdict(for: signal, disposition: disposition) == .passThrough)
        }
    }
}
