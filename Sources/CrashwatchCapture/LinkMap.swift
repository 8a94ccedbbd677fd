// LinkMap.swift — which file each mapping of a core shows when the core does not say (no NT_FILE: cores
// written by qemu-user, or by kernels before 3.7): the dynamic linker's own list of loaded objects, as
// libdw's core reader does. The executable's program headers (from its file) give its load bias from
// AT_PHDR and its dynamic section; DT_DEBUG there points at `r_debug`, whose `r_map` chain of `link_map`
// entries names every shared object and its load bias; each object's PT_LOAD segments (from its file,
// under the sysroot) give the address ranges it covers.
//
// Everything followed here is the crashed program's memory: the chain is bounded and checked for loops,
// names are capped, and a file is only used when it opens as a regular file without blocking.
import CrashwatchModel
import CrashwatchSymbols
import CrashwatchSystem

/// A file mapping as NT_FILE describes one: [start, end) shows the file from `offset` on.
struct NamedMapping: Equatable, Sendable {
    var start: UInt64
    var end: UInt64
    var offset: UInt64
    var path: String
}

enum LinkMap {
    /// At most this many loaded objects are followed.
    static let maximumObjects = 4096
    static let pageSize: UInt64 = 4096

    /// The mappings of the executable (its header parsed from `executable`, its path `executablePath`)
    /// and of every shared object the dynamic linker lists, read through `read` (the dumped memory) and
    /// `open` (an object's file by the path the linker used); why anything was left out, in `problems`.
    static func mappings(auxv: [UInt8], executable: OwnedDescriptor, executablePath: String,
                         read: (UInt64, Int) -> [UInt8], open: (String) -> OwnedDescriptor?)
        -> (mappings: [NamedMapping], problems: [String])
    {
        var problems: [String] = []
        guard let header = programHeaders(of: executable) else {
            return ([], ["the executable's file is not an ELF file this reader understands"])
        }
        guard let phdr = CoreRecords.auxvValue(auxv, key: 3),
              let table = header.programHeaders.first(where: { $0.type == ProgramHeader.programHeaderType }) else {
            return ([], ["no AT_PHDR or no PT_PHDR: the executable's load address is not known"])
        }
        let bias = phdr &- table.vaddr
        var mappings = segments(of: header, bias: bias, path: executablePath)

        // DT_DEBUG (21) in the executable's dynamic section holds the address of r_debug.
        guard let dynamic = header.programHeaders.first(where: { $0.type == ProgramHeader.dynamicType }) else {
            return (mappings, problems)  // statically linked: nothing else is loaded
        }
        let entries = read(bias &+ dynamic.vaddr, Int(min(dynamic.memsz, 64 << 10)))
        var debug: UInt64?
        for at in stride(from: 0, to: entries.count - 15, by: 16) {
            let tag = word(entries, at)
            if tag == 0 { break }
            if tag == 21 { debug = word(entries, at + 8) }
        }
        guard let debug, debug != 0 else {
            problems.append("the dynamic linker's r_debug is not in the core dump: shared objects are not named")
            return (mappings, problems)
        }
        // r_debug: r_version (int), r_map at 8. link_map: l_addr 0, l_name 8, l_ld 16, l_next 24.
        let rDebug = read(debug, 16)
        guard rDebug.count == 16 else {
            problems.append("r_debug at 0x\(String(debug, radix: 16)) is not in the core dump")
            return (mappings, problems)
        }
        let interpreter = interpreterPath(executable, header)
        let interpreterBase = CoreRecords.auxvValue(auxv, key: 7)  // AT_BASE
        var next = word(rDebug, 8)
        var seen: Set<UInt64> = []
        while next != 0 {
            guard seen.count < maximumObjects, seen.insert(next).inserted else {
                problems.append("the dynamic linker's list of objects loops or is longer than \(maximumObjects)")
                break
            }
            let entry = read(next, 32)
            guard entry.count == 32 else {
                problems.append("a link_map entry at 0x\(String(next, radix: 16)) is not in the core dump")
                break
            }
            let loadBias = word(entry, 0)
            next = word(entry, 24)
            var name = string(at: word(entry, 8), read: read)
            // The dynamic linker's name points into the executable's PT_INTERP, which the dump may not hold.
            if (name ?? "").isEmpty, let interpreter, loadBias == interpreterBase { name = interpreter }
            // The executable itself (empty name), and the vdso (no path): not files to open.
            guard let path = name, path.hasPrefix("/") else { continue }
            // Looked for under the sysroot: a name that climbs out of it is not followed.
            guard !path.split(separator: "/").contains("..") else {
                problems.append("\(path): a name with '..' in it is not looked up")
                continue
            }
            guard let file = open(path) else {
                problems.append("\(path): cannot open it to lay out its segments")
                continue
            }
            guard let objectHeader = programHeaders(of: file) else {
                problems.append("\(path): not an ELF file this reader understands")
                continue
            }
            mappings += segments(of: objectHeader, bias: loadBias, path: path)
        }
        return (mappings, problems)
    }

    /// Page-aligned [start, end) and file offset of each PT_LOAD segment at `bias`.
    static func segments(of header: ELFHeaderInfo, bias: UInt64, path: String) -> [NamedMapping] {
        header.programHeaders.filter { $0.type == ProgramHeader.loadType && $0.memsz > 0 }.prefix(64).compactMap { segment in
            let start = (bias &+ segment.vaddr) & ~(pageSize - 1)
            let (end, overflow) = (bias &+ segment.vaddr).addingReportingOverflow(segment.memsz)
            guard !overflow, end > start else { return nil }
            return NamedMapping(start: start, end: (end &+ pageSize - 1) & ~(pageSize - 1),
                                offset: segment.offset & ~(pageSize - 1), path: path)
        }
    }

    /// The file header and program headers of the ELF file open at `file` (the table within its first 64 KiB).
    static func programHeaders(of file: OwnedDescriptor) -> ELFHeaderInfo? {
        guard let bytes = try? file.read(at: 0, count: 64 << 10) else { return nil }
        return try? ELFHeaderInfo.parse(bytes)
    }

    /// PT_INTERP's path, from the file.
    static func interpreterPath(_ file: OwnedDescriptor, _ header: ELFHeaderInfo) -> String? {
        guard let interp = header.programHeaders.first(where: { $0.type == ProgramHeader.interpreterType }),
              interp.filesz > 1, interp.filesz <= 4096, let bytes = try? file.read(at: interp.offset, count: Int(interp.filesz))
        else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// A NUL-terminated string at `address`, at most `maximumNameBytes` long; nil when unreadable or unterminated.
    static func string(at address: UInt64, read: (UInt64, Int) -> [UInt8]) -> String? {
        guard address != 0 else { return nil }
        var bytes: [UInt8] = []
        while bytes.count < maximumNameBytes {
            // Page by page: a name may end just before an address the dump does not hold.
            let chunk = read(address &+ UInt64(bytes.count), Int(pageSize - ((address &+ UInt64(bytes.count)) % pageSize)))
            guard !chunk.isEmpty else { return nil }
            if let end = chunk.firstIndex(of: 0) { return String(decoding: bytes + chunk[..<end], as: UTF8.self) }
            bytes += chunk
        }
        return nil
    }

    static func word(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        ByteReader(bytes).u64(offset) ?? 0
    }
}
