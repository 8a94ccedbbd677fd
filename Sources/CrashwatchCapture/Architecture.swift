// Architecture.swift — the CPU architectures crashwatch understands (x86-64 and ARM64) and the few
// numbers that differ between them: ELF machine codes, pointer size, register-set sizes. Every other
// architecture decision derives from these values (see RegisterDecoders.swift), so both are compiled
// and tested on any host.
import CrashwatchSymbols

/// A CPU architecture whose crashes crashwatch can decode.
public enum Architecture: String, Sendable, Codable, Hashable, CaseIterable, CustomStringConvertible {
    /// 64-bit x86 (AMD64, Intel 64); ELF machine `EM_X86_64`.
    case x86_64
    /// 64-bit ARM (ARMv8-A and later, AArch64 state); ELF machine `EM_AARCH64`.
    case aarch64

    /// The architecture this crashwatch binary was compiled for.
    public static var host: Architecture {
        #if arch(x86_64)
        return .x86_64
        #elseif arch(arm64)
        return .aarch64
        #else
        #error("crashwatch supports x86-64 and ARM64 hosts only")
        #endif
    }

    /// Maps an ELF header's `e_machine` to an architecture (62 → x86-64, 183 → aarch64), nil for others.
    public init?(elfMachine: UInt16) {
        switch elfMachine {
        case 62: self = .x86_64
        case 183: self = .aarch64
        default: return nil
        }
    }

    /// The ELF `e_machine` value for this architecture (`EM_X86_64` = 62, `EM_AARCH64` = 183).
    public var elfMachine: UInt16 {
        switch self {
        case .x86_64: 62
        case .aarch64: 183
        }
    }

    /// The size of a pointer (and of a general-purpose register) in bytes: 8 on both.
    public var pointerSize: Int { 8 }

    /// The size of the `NT_PRSTATUS` register set as `PTRACE_GETREGSET` returns it, in bytes.
    ///
    /// x86-64 `struct user_regs_struct` is 27 × 8 = 216 bytes; aarch64 `struct user_pt_regs` is
    /// 34 × 8 = 272 bytes. In a core file's `NT_PRSTATUS` note the same bytes sit inside
    /// `struct elf_prstatus` at `elfPrstatusRegistersOffset`.
    public var prstatusSize: Int { registerLayout.kernelOrder.count * pointerSize }

    /// Where the registers (`pr_reg`) start inside a core file's `struct elf_prstatus`: 112 on both.
    public var elfPrstatusRegistersOffset: Int { 112 }

    /// The name used in reports and messages (`x86_64`, `aarch64`), as `uname -m` prints it.
    public var description: String { rawValue }
}

extension ELFHeaderInfo {
    /// The architecture named by `machine`, nil for one crashwatch does not support.
    public var architecture: Architecture? { Architecture(elfMachine: machine) }
}
