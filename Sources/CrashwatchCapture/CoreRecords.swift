// CoreRecords.swift — the kernel's core-dump records, decoded once, for the core reader (CoreStream) and the
// capture made of what it kept (CoreContents): the ELF header of an `ET_CORE` file, its PT_LOAD and PT_NOTE
// program headers checked against 2^64, and the notes a report reads. Each layout is written beside
// its decoder; every field is read through `ByteReader`, so a note too short for it gives nil, not a trap.
import CrashwatchModel
import CrashwatchSymbols

/// Why a file could not be read as a core dump.
public struct CoreFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The decoders of a core dump's ELF header, program headers and notes.
enum CoreRecords {
    /// Note types of the kernel's core dumps (`CORE` notes; NT_ARM_PAC_MASK is a `LINUX` one).
    enum NoteType {
        static let prstatus: UInt32 = 1
        static let prpsinfo: UInt32 = 3
        static let auxv: UInt32 = 6
        static let file: UInt32 = 0x4649_4c45
        static let siginfo: UInt32 = 0x5349_4749
        static let armPACMask: UInt32 = 0x406
    }

    /// The longest mapping name kept from NT_FILE (PATH_MAX).
    static let maxPathBytes = 4096

    /// The file header of the core dump whose first bytes `reader` holds, and its architecture; a message for
    /// any file that is not a 64-bit little-endian core of x86-64 or aarch64.
    static func coreHeader<Bytes>(_ reader: ByteReader<Bytes>) throws(CoreFileError)
        -> (header: ELFFileHeader, architecture: Architecture)
    {
        guard reader.count >= ELFHeaderInfo.fileHeaderSize else { throw CoreFileError("not an ELF file") }
        let header: ELFFileHeader
        do throws(ELFParseError) {
            header = try ELFFileHeader.parse(reader)
        } catch .notELF64, .notLittleEndian {
            throw CoreFileError("not a 64-bit little-endian ELF file")
        } catch {
            throw CoreFileError("not an ELF file")
        }
        guard header.type == .core else { throw CoreFileError("an ELF file, but not a core dump (type \(header.type.rawValue))") }
        guard let architecture = Architecture(elfMachine: header.machine) else {
            throw CoreFileError("a core dump of machine \(header.machine), neither x86-64 nor aarch64")
        }
        return (header, architecture)
    }

    /// The PT_LOAD and PT_NOTE headers of `table` that can be used (nothing else is read), and why each other
    /// one was left out, a sentence each, in table order.
    static func usableSegments(_ table: [ProgramHeader]) -> (segments: [ProgramHeader], problems: [String]) {
        var segments: [ProgramHeader] = []
        var problems: [String] = []
        for (index, header) in table.enumerated()
        where header.type == ProgramHeader.loadType || header.type == ProgramHeader.noteType {
            if let problem = segmentProblem(index: index, header) {
                problems.append(problem)
            } else {
                segments.append(header)
            }
        }
        return (segments, problems)
    }

    /// Why a PT_LOAD or PT_NOTE program header (number `index`) cannot be used, or nil when it can: its bytes
    /// in the file or in memory must end before 2^64 (a core's sizes are the crashed program's to choose:
    /// `p_filesz` 0xffff… would make every range built from it run backwards).
    static func segmentProblem(index: Int, _ header: ProgramHeader) -> String? {
        let kind = header.type == ProgramHeader.noteType ? "note segment" : "segment"
        let offset = header.offset, fileSize = header.filesz, address = header.vaddr
        if offset.addingReportingOverflow(fileSize).overflow {
            return "\(kind) \(index) was left out: its offset 0x\(String(offset, radix: 16)) and size 0x\(String(fileSize, radix: 16)) end past 2^64"
        }
        let size = max(fileSize, header.memsz)
        if header.type == ProgramHeader.loadType, address.addingReportingOverflow(size).overflow {
            return "\(kind) \(index) was left out: at 0x\(String(address, radix: 16)), its size 0x\(String(size, radix: 16)) ends past the top of the address space"
        }
        return nil
    }

    /// The descriptor of the first note of `type` from `owner` among `notes`, nil when there is none.
    static func descriptor(_ notes: [ELFNote], _ type: UInt32, owner: String = "CORE") -> [UInt8]? {
        notes.first { $0.name == owner && $0.type == type }?.descriptor
    }

    /// NT_PRSTATUS (`struct elf_prstatus`): the thread's id (pr_pid at 32) and its registers (pr_reg at 112),
    /// nil for a note too short to hold them.
    static func thread(_ status: [UInt8], architecture: Architecture) -> (tid: Int32, registers: [UInt8])? {
        let reader = ByteReader(status)
        guard let tid = reader.i32(32),
              let registers = reader.bytes(at: architecture.elfPrstatusRegistersOffset, count: architecture.prstatusSize)
        else { return nil }
        return (tid, Array(registers))
    }

    /// The stack pointer of the thread whose NT_PRSTATUS note is `status`, nil when the note is too short.
    static func stackPointer(_ status: [UInt8], architecture: Architecture) -> UInt64? {
        thread(status, architecture: architecture).flatMap { RegisterDecoder.stackPointer($0.registers, architecture: architecture) }
    }

    /// NT_SIGINFO (`siginfo_t`: si_signo 0, si_errno 4, si_code 8, then the union at 16: the sender's pid and
    /// uid for a signal a process sent, else the fault address; the system call number at 24 for SIGSYS);
    /// nil for a note under 32 bytes.
    static func signal(siginfo: [UInt8]) -> SignalInfo? {
        let reader = ByteReader(siginfo)
        guard siginfo.count >= 32, let signo = reader.i32(0), let errorNumber = reader.i32(4), let code = reader.i32(8)
        else { return nil }
        let sentByProcess = code <= 0
        return SignalInfo(signo: signo, code: code, errorNumber: errorNumber,
                          pid: sentByProcess ? reader.i32(16) ?? 0 : 0, uid: sentByProcess ? reader.u32(20) ?? 0 : 0,
                          address: sentByProcess ? 0 : reader.u64(16) ?? 0, syscall: signo == 31 ? reader.i32(24) ?? 0 : 0)
    }

    /// pr_cursig (a 16-bit signal number at 12) of an NT_PRSTATUS note, nil for a note too short.
    static func currentSignal(prstatus: [UInt8]) -> Int32? {
        ByteReader(prstatus).integer(Int16.self, at: 12).map(Int32.init)
    }

    /// NT_PRPSINFO (`struct elf_prpsinfo`: pr_uid 16, pr_gid 20, pr_pid 24, pr_ppid 28, pr_fname[16] 40,
    /// pr_psargs[80] 56) written into `process`; false (nothing written) for a note under 136 bytes. The kernel
    /// keeps the first 80 bytes of the command line, arguments joined by spaces.
    static func readProcess(prpsinfo: [UInt8], into process: inout ProcessRecord) -> Bool {
        let reader = ByteReader(prpsinfo)
        guard prpsinfo.count >= 136, let uid = reader.u32(16), let gid = reader.u32(20), let pid = reader.i32(24),
              let ppid = reader.i32(28), let comm = reader.string(at: 40, count: 16), let arguments = reader.string(at: 56, count: 80)
        else { return false }
        process.uid = uid
        process.gid = gid
        process.pid = pid
        process.ppid = ppid
        process.comm = comm
        process.commandLine = arguments.split(separator: " ").map(String.init)
        return true
    }

    /// NT_FILE's mappings (count, page size, count × (start, end, page offset), then the names); a note that
    /// claims more entries than it holds gives none.
    static func fileMappings(_ notes: [ELFNote]) -> [NamedMapping] {
        guard let table = descriptor(notes, NoteType.file), table.count >= 16 else { return [] }
        let reader = ByteReader(table)
        guard let count = reader.u64(0), let pageSize = reader.u64(8),
              // At most as many as the kernel maps (vm.max_map_count's default, 65,530, with room).
              count <= UInt64(table.count - 16) / 24, count <= 1 << 17 else { return [] }
        var mappings: [NamedMapping] = []
        var nameOffset = 16 + Int(count) * 24
        for index in 0..<Int(count) {
            let entry = 16 + index * 24
            let end = table[nameOffset...].firstIndex(of: 0) ?? table.count
            // No path the kernel writes is longer than PATH_MAX: a longer name is cut there.
            let path = String(decoding: table[nameOffset..<min(end, nameOffset + Self.maxPathBytes)], as: UTF8.self)
            nameOffset = min(end + 1, table.count)
            guard let start = reader.u64(entry), let stop = reader.u64(entry + 8), let page = reader.u64(entry + 16) else { break }
            mappings.append(NamedMapping(start: start, end: stop, offset: page &* pageSize, path: path))
        }
        return mappings
    }

    /// The value of auxv entry `key` (pairs of 64-bit words), nil when absent.
    static func auxvValue(_ auxv: [UInt8], key: UInt64) -> UInt64? {
        let reader = ByteReader(auxv)
        var offset = 0
        while let type = reader.u64(offset), let value = reader.u64(offset + 8), type != 0 {
            if type == key { return value }
            offset += 16
        }
        return nil
    }
}
