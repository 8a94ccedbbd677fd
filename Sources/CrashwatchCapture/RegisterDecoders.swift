// RegisterDecoders.swift — general-purpose registers of a stopped thread, decoded from the raw bytes of
// the kernel's `NT_PRSTATUS` register set (`PTRACE_GETREGSET`, or `pr_reg` in a core file) and encoded
// back. One layout table per architecture holds every register decision: the kernel struct's order, the
// order a report lists them in, and which register is the pc, sp, frame pointer and link register.
// Pure functions over little-endian bytes (both supported architectures run little-endian on Linux),
// so an aarch64 register set decodes on an x86-64 host and the other way round.

/// One register's name and value, as a report lists it.
public struct NamedRegister: Sendable, Equatable, Hashable {
    /// The register's conventional name (`rip`, `x0`, `fp`).
    public let name: String
    /// The register's 64-bit value.
    public let value: UInt64

    /// Pairs a register name with its value.
    public init(name: String, value: UInt64) {
        self.name = name
        self.value = value
    }
}

/// Where each register lives for one architecture: the single table the decoder, encoder and accessors read.
public struct RegisterLayout: Sendable {
    /// The kernel regset's register names in memory order, one 8-byte little-endian slot each.
    public let kernelOrder: [String]
    /// The same names in the order a report lists them.
    public let reportOrder: [String]
    /// The name of the kernel regset struct, for messages (`user_regs_struct`, `user_pt_regs`).
    public let structName: String
    /// The program counter's name (`rip`, `pc`).
    public let pcName: String
    /// The stack pointer's name (`rsp`, `sp`).
    public let spName: String
    /// The frame pointer's name (`rbp`, `fp` = x29).
    public let fpName: String
    /// The link register's name (`lr` = x30), nil where return addresses live on the stack (x86-64).
    public let lrName: String?

    /// For each report position, the slot index of that register in the kernel struct.
    let kernelSlotForReportIndex: [Int]
    /// Report positions of the pc, sp, fp and (optional) lr.
    let pcIndex: Int, spIndex: Int, fpIndex: Int, lrIndex: Int?

    /// Builds a layout and precomputes the index tables; names must be the same set in both orders.
    init(structName: String, kernelOrder: [String], reportOrder: [String],
         pc: String, sp: String, fp: String, lr: String?) {
        precondition(Set(kernelOrder) == Set(reportOrder) && kernelOrder.count == reportOrder.count)
        self.structName = structName
        self.kernelOrder = kernelOrder
        self.reportOrder = reportOrder
        self.pcName = pc
        self.spName = sp
        self.fpName = fp
        self.lrName = lr
        self.kernelSlotForReportIndex = reportOrder.map { kernelOrder.firstIndex(of: $0)! }
        self.pcIndex = reportOrder.firstIndex(of: pc)!
        self.spIndex = reportOrder.firstIndex(of: sp)!
        self.fpIndex = reportOrder.firstIndex(of: fp)!
        self.lrIndex = lr.map { reportOrder.firstIndex(of: $0)! }
    }

    /// x86-64 `struct user_regs_struct` (arch/x86/include/asm/user_64.h), 27 registers, 216 bytes.
    static let x86_64 = RegisterLayout(
        structName: "user_regs_struct",
        kernelOrder: ["r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
                      "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
                      "gs_base", "ds", "es", "fs", "gs"],
        reportOrder: ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
                      "r12", "r13", "r14", "r15", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs",
                      "fs_base", "gs_base", "orig_rax"],
        pc: "rip", sp: "rsp", fp: "rbp", lr: nil)

    /// aarch64 `struct user_pt_regs` (arch/arm64/include/uapi/asm/ptrace.h): x0–x30, sp, pc, pstate; 272 bytes.
    static let aarch64: RegisterLayout = {
        let names = (0...28).map { "x\($0)" } + ["fp", "lr", "sp", "pc", "pstate"]
        return RegisterLayout(structName: "user_pt_regs", kernelOrder: names, reportOrder: names,
                              pc: "pc", sp: "sp", fp: "fp", lr: "lr")
    }()
}

extension Architecture {
    /// The register layout of this architecture's `NT_PRSTATUS` regset.
    public var registerLayout: RegisterLayout {
        switch self {
        case .x86_64: RegisterLayout.x86_64
        case .aarch64: RegisterLayout.aarch64
        }
    }
}

/// Why register bytes could not be decoded (or a register set not built).
public enum RegisterDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is shorter than the regset: which architecture and regset, bytes expected and given.
    case tooShort(architecture: Architecture, regset: String, expected: Int, actual: Int)
    /// A register name that the architecture does not have.
    case unknownRegister(architecture: Architecture, name: String)

    /// A one-line message naming the architecture, the regset and the sizes.
    public var description: String {
        switch self {
        case let .tooShort(architecture, regset, expected, actual):
            "\(architecture) \(regset): expected \(expected) bytes, got \(actual)"
        case let .unknownRegister(architecture, name):
            "\(architecture) has no register named '\(name)'"
        }
    }
}

/// The general-purpose registers of one thread, named and ordered for a report.
public struct RegisterSet: Sendable, Equatable {
    /// The architecture the registers belong to.
    public let architecture: Architecture
    /// Every register of the architecture's regset, in the layout's report order.
    public let values: [NamedRegister]

    /// Wraps values already in report order; callers inside the module guarantee completeness.
    init(architecture: Architecture, reportOrdered values: [NamedRegister]) {
        self.architecture = architecture
        self.values = values
    }

    /// Builds a set from named values (for tests and synthetic snapshots); unnamed registers are zero.
    public init(architecture: Architecture, assigning assigned: [String: UInt64]) throws(RegisterDecodeError) {
        let layout = architecture.registerLayout
        for name in assigned.keys where !layout.reportOrder.contains(name) {
            throw .unknownRegister(architecture: architecture, name: name)
        }
        self.init(architecture: architecture,
                  reportOrdered: layout.reportOrder.map { NamedRegister(name: $0, value: assigned[$0] ?? 0) })
    }

    /// The program counter (`rip` / `pc`): the interrupted instruction.
    public var pc: UInt64 { values[architecture.registerLayout.pcIndex].value }
    /// The stack pointer (`rsp` / `sp`).
    public var sp: UInt64 { values[architecture.registerLayout.spIndex].value }
    /// The frame pointer (`rbp` / `x29`, named `fp`).
    public var fp: UInt64 { values[architecture.registerLayout.fpIndex].value }
    /// The link register (`x30`, named `lr`) holding the return address on aarch64; nil on x86-64.
    public var lr: UInt64? { architecture.registerLayout.lrIndex.map { values[$0].value } }

    /// The value of the register with this name, nil when the architecture has none by that name.
    public subscript(name: String) -> UInt64? {
        values.first { $0.name == name }?.value
    }
}

/// Decodes and encodes `NT_PRSTATUS` register bytes and the aarch64 pointer-authentication masks.
public enum RegisterDecoder {
    /// Decodes a thread's `NT_PRSTATUS` regset bytes (little-endian); trailing extra bytes are ignored.
    public static func decode(_ bytes: [UInt8], architecture: Architecture) throws(RegisterDecodeError) -> RegisterSet {
        let layout = architecture.registerLayout
        let needed = architecture.prstatusSize
        guard bytes.count >= needed else {
            throw .tooShort(architecture: architecture, regset: layout.structName, expected: needed, actual: bytes.count)
        }
        var values: [NamedRegister] = []
        values.reserveCapacity(layout.reportOrder.count)
        for (index, name) in layout.reportOrder.enumerated() {
            let slot = layout.kernelSlotForReportIndex[index]
            values.append(NamedRegister(name: name, value: readLittleEndian64(bytes, at: slot * 8)))
        }
        return RegisterSet(architecture: architecture, reportOrdered: values)
    }

    /// The stack pointer alone, read from its slot without decoding the rest (the capture needs only it
    /// while the process is held); nil when `bytes` are too short.
    public static func stackPointer(_ bytes: [UInt8], architecture: Architecture) -> UInt64? {
        let layout = architecture.registerLayout
        guard bytes.count >= architecture.prstatusSize else { return nil }
        return readLittleEndian64(bytes, at: layout.kernelSlotForReportIndex[layout.spIndex] * 8)
    }

    /// Encodes a register set back into the kernel's regset bytes (for tests and for seeding an unwinder).
    public static func encode(_ set: RegisterSet) -> [UInt8] {
        let layout = set.architecture.registerLayout
        var bytes = [UInt8](repeating: 0, count: set.architecture.prstatusSize)
        for (index, register) in set.values.enumerated() where index < layout.kernelSlotForReportIndex.count {
            let offset = layout.kernelSlotForReportIndex[index] * 8
            for byte in 0..<8 { bytes[offset + byte] = UInt8(truncatingIfNeeded: register.value >> (8 * UInt64(byte))) }
        }
        return bytes
    }

    /// Clears pointer-authentication bits from a user-space code address: `address & ~mask` (use `insn_mask`).
    public static func stripPointerAuthentication(_ address: UInt64, mask: UInt64) -> UInt64 {
        address & ~mask
    }

    /// The registers a signal handler's return restores, from the `ucontext_t` the kernel put on the stack:
    /// `uc_mcontext` after `uc_flags`, `uc_link` and `uc_stack` (40 bytes); x86-64 `struct sigcontext` is
    /// r8–r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags; aarch64's is fault_address, x0–x30, sp,
    /// pc, pstate (at 176, after the signal mask and padding). Returns NT_PRSTATUS-ordered words, or nil
    /// when `ucontext` is too short.
    public static func registers(fromUContext ucontext: [UInt8], architecture: Architecture) -> RegisterSet? {
        func word(_ offset: Int) -> UInt64? { offset + 8 <= ucontext.count ? readLittleEndian64(ucontext, at: offset) : nil }
        var named: [String: UInt64] = [:]
        switch architecture {
        case .x86_64:
            let names = ["r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi", "rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip", "eflags"]
            for (slot, name) in names.enumerated() {
                guard let value = word(40 + slot * 8) else { return nil }
                named[name] = value
            }
        case .aarch64:
            let base = 176 + 8  // uc_mcontext, then fault_address
            let names = architecture.registerLayout.kernelOrder  // x0…x28, fp, lr, sp, pc, pstate
            for index in 0..<31 {
                guard let value = word(base + index * 8) else { return nil }
                named[names[index]] = value
            }
            guard let sp = word(base + 31 * 8), let pc = word(base + 32 * 8), let pstate = word(base + 33 * 8) else { return nil }
            named["sp"] = sp
            named["pc"] = pc
            named["pstate"] = pstate
        }
        return try? RegisterSet(architecture: architecture, assigning: named)
    }

    /// Whether `code` (the bytes at a pc) is a return from a signal handler: the `rt_sigreturn` system call
    /// as glibc (`mov $15,%rax; syscall`), Go (`mov $15,%eax; syscall`) or the aarch64 vDSO
    /// (`mov x8, #139; svc #0`) write it.
    public static func isSignalReturn(_ code: [UInt8], architecture: Architecture) -> Bool {
        switch architecture {
        case .x86_64:
            return code.starts(with: [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05])
                || code.starts(with: [0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05])
        case .aarch64:
            return code.starts(with: [0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4])
        }
    }

    /// Decodes the aarch64 `NT_ARM_PAC_MASK` regset: two little-endian u64, `data_mask` then `insn_mask`.
    public static func decodePointerAuthenticationMask(_ bytes: [UInt8]) throws(RegisterDecodeError) -> PointerAuthenticationMask {
        guard bytes.count >= 16 else {
            throw .tooShort(architecture: .aarch64, regset: "NT_ARM_PAC_MASK", expected: 16, actual: bytes.count)
        }
        return PointerAuthenticationMask(dataMask: readLittleEndian64(bytes, at: 0),
                                         instructionMask: readLittleEndian64(bytes, at: 8))
    }

    /// Reads one little-endian u64 at a byte offset the caller has bounds-checked.
    static func readLittleEndian64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in (0..<8).reversed() { value = value << 8 | UInt64(bytes[offset + byte]) }
        return value
    }
}

/// The aarch64 pointer-authentication masks of a thread (`struct user_pac_mask`, regset `NT_ARM_PAC_MASK`).
public struct PointerAuthenticationMask: Sendable, Equatable {
    /// The regset type to pass to `PTRACE_GETREGSET` (`NT_ARM_PAC_MASK`).
    public static let noteType: UInt32 = 0x406

    /// The PAC bits in data pointers (`data_mask`).
    public let dataMask: UInt64
    /// The PAC bits in code pointers such as return addresses (`insn_mask`).
    public let instructionMask: UInt64

    /// Pairs the two masks as the kernel reports them.
    public init(dataMask: UInt64, instructionMask: UInt64) {
        self.dataMask = dataMask
        self.instructionMask = instructionMask
    }

    /// Strips the PAC bits from a user-space return address or other code pointer.
    public func stripCodePointer(_ address: UInt64) -> UInt64 {
        RegisterDecoder.stripPointerAuthentication(address, mask: instructionMask)
    }
}
