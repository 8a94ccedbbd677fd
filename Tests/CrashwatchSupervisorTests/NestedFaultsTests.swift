// NestedFaultsTests.swift — which handled faults a thread keeps: a later fault at or above an earlier one on
// the same stack ends it (its handler returned); one deeper down (inside the handler) or on another stack
// (an alternate signal stack) keeps it; the list is bounded, oldest dropped first.
import CrashwatchModel
import CrashwatchSupervisor
import Testing

/// A fault of thread 7 whose registers hold `sp` in the host's stack-pointer slot.
private func fault(sp: UInt64, at time: Int64) -> HandledFault {
    var registers = [UInt8](repeating: 0, count: 34 * 8)
    for byte in 0..<8 { registers[HandledFault.stackPointerSlot * 8 + byte] = UInt8(truncatingIfNeeded: sp >> (8 * UInt64(byte))) }
    return HandledFault(tid: 7, signal: SignalInfo(signo: 11, code: 1, address: 0), timeNanoseconds: time, registers: registers)
}

@Suite struct NestedFaultsTests {
    @Test("the stack pointer is read from the raw registers")
    func stackPointer() {
        #expect(fault(sp: 0x7ffc_1234_5678, at: 0).stackPointer == 0x7ffc_1234_5678)
        #expect(HandledFault(tid: 1, signal: SignalInfo(signo: 11, code: 1), timeNanoseconds: 0, registers: []).stackPointer == nil)
    }

    @Test("a fault deeper down is nested in the earlier one's handler: both kept, oldest first")
    func nested() {
        var faults = NestedFaults()
        faults.record(fault(sp: 0x7ffc_0000_8000, at: 1))
        faults.record(fault(sp: 0x7ffc_0000_7000, at: 2))
        #expect(faults.faults.map(\.timeNanoseconds) == [1, 2])
    }

    @Test("a fault at or above an earlier one on the same stack ends it: its handler returned")
    func returned() {
        var faults = NestedFaults()
        faults.record(fault(sp: 0x7ffc_0000_7000, at: 1))
        faults.record(fault(sp: 0x7ffc_0000_7000, at: 2))
        #expect(faults.faults.map(\.timeNanoseconds) == [2])
        faults.record(fault(sp: 0x7ffc_0000_9000, at: 3))
        #expect(faults.faults.map(\.timeNanoseconds) == [3])
    }

    @Test("a fault on another stack (an alternate signal stack, far away) keeps the earlier one")
    func otherStack() {
        var faults = NestedFaults()
        faults.record(fault(sp: 0x7ffc_0000_7000, at: 1))
        faults.record(fault(sp: 0x5555_0000_9000, at: 2))
        #expect(faults.faults.map(\.timeNanoseconds) == [1, 2])
    }

    @Test("at most 32 are kept, the oldest going first")
    func bounded() {
        var faults = NestedFaults()
        for index in 0..<40 { faults.record(fault(sp: 0x7ffc_0010_0000 - UInt64(index) * 0x100, at: Int64(index))) }
        #expect(faults.faults.count == NestedFaults.capacity)
        #expect(faults.faults.first?.timeNanoseconds == 8 && faults.faults.last?.timeNanoseconds == 39)
    }
}
