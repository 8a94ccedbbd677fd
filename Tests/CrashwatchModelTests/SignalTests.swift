// SignalTests.swift — signal names, si_code names and which siginfo fields are meaningful.
import CrashwatchModel
import Testing

@Suite struct SignalTests {
    @Test func namesRoundTrip() {
        for number in Int32(1)...31 {
            let signal = Signal(number)
            #expect(Signal(name: signal.name) == signal)
        }
        #expect(Signal(name: "segv") == .segv)
        #expect(Signal(name: "11") == .segv)
        #expect(Signal(name: "SIGNOPE") == nil)
        #expect(Signal(34).name == "SIGRTMIN")
        #expect(Signal(40).name == "SIGRTMIN+6")
    }

    @Test func crashSignalsAreTheCoreDumpingOnes() {
        #expect(Signal.crashSignals == [.segv, .bus, .ill, .fpe, .abrt, .trap, .sys, .quit, .xcpu, .xfsz])
        #expect(!Signal.term.isCrash && !Signal.kill.isCrash && !Signal.pipe.isCrash)
        #expect(Signal.tstp.isStop && Signal.stop.isStop && !Signal.cont.isStop)
    }

    @Test func codeNames() {
        #expect(SignalCode(1, signal: .segv).name == "SEGV_MAPERR")
        #expect(SignalCode(2, signal: .segv).name == "SEGV_ACCERR")
        #expect(SignalCode(2, signal: .bus).name == "BUS_ADRERR")
        #expect(SignalCode(1, signal: .fpe).name == "FPE_INTDIV")
        #expect(SignalCode(2, signal: .ill).name == "ILL_ILLOPN")
        #expect(SignalCode(1, signal: .trap).name == "TRAP_BRKPT")
        #expect(SignalCode(1, signal: .sys).name == "SYS_SECCOMP")
        #expect(SignalCode(0, signal: .segv).name == "SI_USER")
        #expect(SignalCode(-6, signal: .abrt).name == "SI_TKILL")
        #expect(SignalCode(0x80, signal: .trap).name == "SI_KERNEL")
        #expect(SignalCode(77, signal: .segv).name == "77")
    }

    @Test func faultAddressOnlyForKernelFaults() {
        let fault = SignalInfo(signo: 11, code: 1, pid: 5, uid: 6, address: 0x10)
        #expect(fault.faultAddress == 0x10)
        #expect(fault.senderPID == nil && fault.senderUID == nil)
        #expect(fault.typeName == "SIGSEGV (SEGV_MAPERR)")
        #expect(fault.description == "Segmentation fault: address not mapped to object at 0x10")

        let sent = SignalInfo(signo: 11, code: 0, pid: 1234, uid: 1000, address: 0x4d2)
        #expect(sent.faultAddress == nil)
        #expect(sent.senderPID == 1234 && sent.senderUID == 1000)

        let raised = SignalInfo(signo: 6, code: -6, pid: 99, uid: 0)
        #expect(raised.faultAddress == nil && raised.senderPID == 99)

        let kernel = SignalInfo(signo: 5, code: 0x80, pid: 0, uid: 0, address: 0x1234)
        #expect(kernel.faultAddress == nil && kernel.senderPID == nil)

        let seccomp = SignalInfo(signo: 31, code: 1, address: 0x7f00, syscall: 110)
        #expect(seccomp.faultAddress == 0x7f00 && seccomp.syscall == 110)
    }

    @Test func hexFormatting() {
        #expect(hex(0) == "0x0")
        #expect(hex(0x7fff_dead_beef) == "0x7fffdeadbeef")
        #expect(hex(UInt64.max) == "0xffffffffffffffff")
    }
}
