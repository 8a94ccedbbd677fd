// RegisterDecoderTests.swift — the per-architecture register layouts: kernel struct order in, report
// order out, round trips, size errors, and aarch64 pointer-authentication masks.
import CrashwatchCapture
import CrashwatchSupervisor
import CrashwatchSymbols
import Testing

/// Regset bytes whose slot `i` holds `base + i`, so every decoded value names the slot it came from.
private func slotNumberedBytes(_ architecture: Architecture, base: UInt64 = 0x1000) -> [UInt8] {
    let slots = architecture.prstatusSize / 8
    return (0..<slots).flatMap { slot -> [UInt8] in
        let value = base + UInt64(slot)
        return (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

@Suite struct ArchitectureTests {
    @Test func elfMachineCodes() {
        #expect(Architecture(elfMachine: 62) == .x86_64)
        #expect(Architecture(elfMachine: 183) == .aarch64)
        #expect(Architecture(elfMachine: 3) == nil)  // EM_386
        #expect(Architecture(elfMachine: 40) == nil)  // EM_ARM
        for architecture in Architecture.allCases {
            #expect(Architecture(elfMachine: architecture.elfMachine) == architecture)
        }
    }

    @Test func sizes() {
        #expect(Architecture.x86_64.prstatusSize == 216)
        #expect(Architecture.aarch64.prstatusSize == 272)
        #expect(Architecture.x86_64.pointerSize == 8)
        #expect(Architecture.aarch64.pointerSize == 8)
        #expect(Architecture.aarch64.elfPrstatusRegistersOffset == 112)
    }

    @Test func hostIsOneOfTheTwo() {
        #if arch(x86_64)
        #expect(Architecture.host == .x86_64)
        #elseif arch(arm64)
        #expect(Architecture.host == .aarch64)
        #endif
        #expect(Architecture(rawValue: "aarch64") == .aarch64)
        #expect(Architecture.x86_64.description == "x86_64")
    }
}

@Suite struct RegisterDecoderTests {
    @Test func x86_64KernelOrderBecomesReportOrder() throws {
        let set = try RegisterDecoder.decode(slotNumberedBytes(.x86_64), architecture: .x86_64)
        // user_regs_struct slots: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax
        //                          rip cs eflags rsp ss fs_base gs_base ds es fs gs
        let expectedSlots: [(String, UInt64)] = [
            ("rax", 10), ("rbx", 5), ("rcx", 11), ("rdx", 12), ("rsi", 13), ("rdi", 14), ("rbp", 4), ("rsp", 19),
            ("r8", 9), ("r9", 8), ("r10", 7), ("r11", 6), ("r12", 3), ("r13", 2), ("r14", 1), ("r15", 0),
            ("rip", 16), ("eflags", 18), ("cs", 17), ("ss", 20), ("ds", 23), ("es", 24), ("fs", 25), ("gs", 26),
            ("fs_base", 21), ("gs_base", 22), ("orig_rax", 15),
        ]
        #expect(set.values.map(\.name) == expectedSlots.map(\.0))
        #expect(set.values.map(\.value) == expectedSlots.map { 0x1000 + $0.1 })
        #expect(set.architecture == .x86_64)
        #expect(set.pc == 0x1000 + 16)
        #expect(set.sp == 0x1000 + 19)
        #expect(set.fp == 0x1000 + 4)
        #expect(set.lr == nil)
        #expect(set["orig_rax"] == 0x1000 + 15)
        #expect(set["x0"] == nil)
    }

    @Test func aarch64UserPtRegs() throws {
        let set = try RegisterDecoder.decode(slotNumberedBytes(.aarch64), architecture: .aarch64)
        #expect(set.values.count == 34)
        #expect(set.values.map(\.name) == (0...28).map { "x\($0)" } + ["fp", "lr", "sp", "pc", "pstate"])
        #expect(set.values.map(\.value) == (0..<34).map { 0x1000 + UInt64($0) })
        #expect(set["x0"] == 0x1000)
        #expect(set["x28"] == 0x1000 + 28)
        #expect(set.fp == 0x1000 + 29)
        #expect(set.lr == 0x1000 + 30)
        #expect(set.sp == 0x1000 + 31)
        #expect(set.pc == 0x1000 + 32)
        #expect(set["pstate"] == 0x1000 + 33)
        #expect(set["x29"] == nil)  // reported as fp
    }

    @Test func littleEndianFullWidth() throws {
        var bytes = [UInt8](repeating: 0, count: 216)
        bytes[16 * 8 ..< 17 * 8] = [0xef, 0xbe, 0xad, 0xde, 0x78, 0x56, 0x34, 0x82][...]  // rip
        let set = try RegisterDecoder.decode(bytes, architecture: .x86_64)
        #expect(set.pc == 0x8234_5678_dead_beef)
    }

    @Test(arguments: Architecture.allCases)
    func encodeIsTheInverseOfDecode(_ architecture: Architecture) throws {
        let bytes = slotNumberedBytes(architecture, base: 0xffff_8000_0000_0000)
        let set = try RegisterDecoder.decode(bytes, architecture: architecture)
        #expect(RegisterDecoder.encode(set) == bytes)
        #expect(try RegisterDecoder.decode(RegisterDecoder.encode(set), architecture: architecture) == set)
    }

    @Test(arguments: Architecture.allCases)
    func trailingBytesAreIgnored(_ architecture: Architecture) throws {
        let bytes = slotNumberedBytes(architecture)
        let longer = try RegisterDecoder.decode(bytes + [1, 2, 3, 4, 5, 6, 7, 8], architecture: architecture)
        #expect(longer == (try RegisterDecoder.decode(bytes, architecture: architecture)))
    }

    @Test func shortInputNamesArchitectureAndSizes() {
        #expect(throws: RegisterDecodeError.tooShort(architecture: .x86_64, regset: "user_regs_struct", expected: 216, actual: 215)) {
            try RegisterDecoder.decode([UInt8](repeating: 0, count: 215), architecture: .x86_64)
        }
        #expect(throws: RegisterDecodeError.tooShort(architecture: .aarch64, regset: "user_pt_regs", expected: 272, actual: 216)) {
            try RegisterDecoder.decode([UInt8](repeating: 0, count: 216), architecture: .aarch64)
        }
        let error = RegisterDecodeError.tooShort(architecture: .aarch64, regset: "user_pt_regs", expected: 272, actual: 0)
        #expect(error.description == "aarch64 user_pt_regs: expected 272 bytes, got 0")
    }

    @Test func assigningNamedRegisters() throws {
        let set = try RegisterSet(architecture: .x86_64, assigning: ["rip": 0x401000, "rsp": 0x7ffc_0000_1000])
        #expect(set.pc == 0x401000)
        #expect(set.sp == 0x7ffc_0000_1000)
        #expect(set.fp == 0)
        #expect(set.values.count == 27)
        let encoded = RegisterDecoder.encode(set)
        #expect(encoded.count == 216)
        #expect(encoded[16 * 8] == 0x00 && encoded[16 * 8 + 1] == 0x10 && encoded[16 * 8 + 2] == 0x40)
        #expect(throws: RegisterDecodeError.unknownRegister(architecture: .aarch64, name: "rip")) {
            try RegisterSet(architecture: .aarch64, assigning: ["rip": 1])
        }
    }

    @Test func pointerAuthenticationMask() throws {
        // struct user_pac_mask { u64 data_mask; u64 insn_mask; } with 48-bit VAs: GENMASK(54, 48).
        let mask: UInt64 = 0x007f_0000_0000_0000
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: mask >> (8 * UInt64($0))) }
        let pac = try RegisterDecoder.decodePointerAuthenticationMask(bytes + bytes)
        #expect(pac == PointerAuthenticationMask(dataMask: mask, instructionMask: mask))
        #expect(PointerAuthenticationMask.noteType == 0x406)
        let signed: UInt64 = 0x0023_aaaa_dead_beef
        #expect(RegisterDecoder.stripPointerAuthentication(signed, mask: mask) == 0x0000_aaaa_dead_beef)
        #expect(pac.stripCodePointer(signed) == 0x0000_aaaa_dead_beef)
        #expect(pac.stripCodePointer(0x0000_aaaa_dead_beef) == 0x0000_aaaa_dead_beef)
        #expect(throws: RegisterDecodeError.tooShort(architecture: .aarch64, regset: "NT_ARM_PAC_MASK", expected: 16, actual: 8)) {
            try RegisterDecoder.decodePointerAuthenticationMask(bytes)
        }
    }
}

@Suite struct SignalFrameTests {
    @Test("the supervisor's stack-pointer slot is the decoder's")
    func stackPointerSlot() {
        let layout = Architecture.host.registerLayout
        #expect(layout.kernelOrder[HandledFault.stackPointerSlot] == layout.spName)
    }

    /// A ucontext whose mcontext words are 0x1000 + slot.
    private func ucontext(words: Int, at offset: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: offset + words * 8)
        for slot in 0..<words {
            let value = UInt64(0x1000 + slot)
            for byte in 0..<8 { bytes[offset + slot * 8 + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte))) }
        }
        return bytes
    }

    @Test("x86-64: sigcontext r8..rip after uc_flags, uc_link and uc_stack")
    func x86() throws {
        let set = try #require(RegisterDecoder.registers(fromUContext: ucontext(words: 18, at: 40), architecture: .x86_64))
        #expect(set.values.first { $0.name == "r8" }?.value == 0x1000)
        #expect(set.sp == 0x1000 + 15)
        #expect(set.pc == 0x1000 + 16)
        #expect(RegisterDecoder.registers(fromUContext: [UInt8](repeating: 0, count: 100), architecture: .x86_64) == nil)
    }

    @Test("aarch64: x0..x30, sp, pc, pstate after fault_address")
    func aarch64() throws {
        let set = try #require(RegisterDecoder.registers(fromUContext: ucontext(words: 35, at: 176), architecture: .aarch64))
        #expect(set.values.first { $0.name == "x0" }?.value == 0x1001)   // slot 0 is fault_address
        #expect(set.sp == 0x1000 + 32)
        #expect(set.pc == 0x1000 + 33)
    }

    @Test("rt_sigreturn trampolines are recognized as glibc, Go and the aarch64 vDSO write them")
    func trampolines() {
        #expect(RegisterDecoder.isSignalReturn([0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05], architecture: .x86_64))
        #expect(RegisterDecoder.isSignalReturn([0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x90, 0x90], architecture: .x86_64))
        #expect(!RegisterDecoder.isSignalReturn([0xb8, 0x3c, 0x00, 0x00, 0x00, 0x0f, 0x05], architecture: .x86_64))
        #expect(RegisterDecoder.isSignalReturn([0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4], architecture: .aarch64))
        #expect(!RegisterDecoder.isSignalReturn([], architecture: .aarch64))
    }
}
