// CoreFile.swift — a core dump (ELF `ET_CORE`) as a capture source: the same `RawCapture` a live capture
// yields, read from the dump instead of the held process, so the one processing path (unwinding from the
// captured bytes, symbols from the image files) builds the report. What the kernel wrote:
// - PT_LOAD segments: the process's memory (stacks and data; the first page of each file mapping, which
//   holds its ELF headers and build-id note, under the default `coredump_filter`);
// - PT_NOTE: NT_PRSTATUS per thread (the thread that took the signal first), NT_SIGINFO, NT_PRPSINFO (pid,
//   uids, comm, the start of the command line), NT_AUXV, NT_FILE (which file each mapping shows).
// The dump is input like any other: every offset and length is checked against the file before use.
import CrashwatchModel
import CrashwatchSymbols
import CrashwatchSystem

/// Why a file could not be read as a core dump.
public struct CoreFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A core file mapped read-only, with its capture decoded and its memory in place.
public final class CoreFile: CaptureSource {
    /// What the core holds, as a capture; a `core_pattern` helper adds where it kept the core itself.
    public var capture: RawCapture
    public let regions: [(address: UInt64, bytes: UnsafeRawBufferPointer)]
    private let mapping: MappedFile

    /// Note types of the kernel's core dumps (`CORE` notes).
    enum NoteType {
        static let prstatus: UInt32 = 1
        static let prpsinfo: UInt32 = 3
        static let auxv: UInt32 = 6
        static let file: UInt32 = 0x4649_4c45
        static let siginfo: UInt32 = 0x5349_4749
        static let armPACMask: UInt32 = 0x406
    }

    /// Reads the core in `descriptor` (at most `limit` bytes). `timeNanoseconds` is when the crash happened
    /// (the core's modification time: the kernel writes it as the process dies); `options` as for a live capture.
    /// With `executable`, the main executable's image is read from that file (`analyze-core --exe`; the first
    /// file the processor is given) instead of the path the dump names; a core without NT_FILE needs it to
    /// name its mappings (see LinkMap).
    /// `sysroot`: where the image files are found (their paths prefixed with it). `process`: the process as
    /// /proc showed it while the kernel dumped it (a `core_pattern` helper), instead of what the notes hold.
    public init(_ descriptor: OwnedDescriptor, limit: Int, timeNanoseconds: Int64, options: CaptureOptions,
                deadlineNanoseconds: Int64, executable: OwnedDescriptor? = nil, sysroot: String? = nil,
                process live: ProcessRecord? = nil) throws {
        let started = Clock.monotonicNanoseconds()
        mapping = try MappedFile(descriptor, limit: limit)
        let file = mapping.bytes
        func u16(_ offset: Int) -> UInt16 { file.loadUnaligned(fromByteOffset: offset, as: UInt16.self) }
        func u32(_ offset: Int) -> UInt32 { file.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        func u64(_ offset: Int) -> UInt64 { file.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }

        let architecture = try Self.architecture(ofHeader: UnsafeRawBufferPointer(rebasing: file.prefix(64)))
        let headerOffset = u64(32), headerSize = Int(u16(54)), headerCount = Int(u16(56))
        guard headerSize >= 56, headerCount != 0xffff,
              headerOffset <= UInt64(file.count), UInt64(headerSize * headerCount) <= UInt64(file.count) - headerOffset
        else { throw CoreFileError("program headers out of bounds (or more than 65,534 of them)") }

        var regions: [(address: UInt64, bytes: UnsafeRawBufferPointer)] = []
        var segments: [(address: UInt64, size: UInt64, flags: UInt32)] = []
        var noteSet = CoreNotes(memoryLimit: options.captureBytes)
        var softErrors: [SoftError] = []
        for index in 0..<headerCount {
            let at = Int(headerOffset) + index * headerSize
            let type = u32(at), flags = u32(at + 4), offset = u64(at + 8), address = u64(at + 16)
            let fileSize = u64(at + 32), memorySize = u64(at + 40), alignment = u64(at + 48)
            guard type == 1 || type == 4 else { continue }  // PT_LOAD, PT_NOTE: nothing else is read
            if let problem = Self.segmentProblem(index: index, type: type, offset: offset, address: address,
                                                 fileSize: fileSize, memorySize: memorySize) {
                softErrors.append(SoftError(stage: "core", message: problem))
                continue
            }
            guard offset <= UInt64(file.count), fileSize <= UInt64(file.count) - offset else {
                softErrors.append(SoftError(stage: "core", message: "segment \(index) lies past the end of the file (a truncated core?)"))
                continue
            }
            let bytes = UnsafeRawBufferPointer(rebasing: file[Int(offset)..<Int(offset + fileSize)])
            if type == 1 {  // PT_LOAD
                segments.append((address, max(memorySize, fileSize), flags))
                if fileSize > 0 { regions.append((address, bytes)) }
            } else {  // PT_NOTE
                var source = BufferNoteSource(bytes)
                try noteSet.scan(&source, alignment: max(alignment, 4))
            }
        }
        softErrors += noteSet.problems.map { SoftError(stage: "core", message: $0) }
        let notes = noteSet.kept
        regions.sort { $0.address < $1.address }
        self.regions = regions

        // Threads: NT_PRSTATUS, the thread that took the signal first. pr_pid at 32, pr_reg at 112 on 64-bit.
        let registerBytes = architecture.prstatusSize
        var threads: [RawThread] = []
        for note in notes where note.name == "CORE" && note.type == NoteType.prstatus {
            guard note.descriptor.count >= 112 + registerBytes else {
                softErrors.append(SoftError(stage: "core", message: "an NT_PRSTATUS note of \(note.descriptor.count) bytes is too short"))
                continue
            }
            let tid = note.descriptor.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 32, as: Int32.self) }
            var thread = RawThread(tid: tid, name: nil, crashed: threads.isEmpty,
                                   registers: Array(note.descriptor[112..<(112 + registerBytes)]))
            if let sp = RegisterDecoder.stackPointer(thread.registers, architecture: architecture),
               let stack = Self.region(containing: sp, in: regions) {
                thread.stackStart = sp
                thread.stackEnd = stack.address + UInt64(stack.bytes.count)  // no overflow: `segmentProblem`
            }
            threads.append(thread)
        }
        guard !threads.isEmpty else { throw CoreFileError("no thread (NT_PRSTATUS) in the core dump") }

        // The signal: NT_SIGINFO (siginfo_t), else pr_cursig of the first thread.
        var signal = RawSignal(SignalInfo(signo: 0, code: 0, address: 0))
        if let info = notes.first(where: { $0.name == "CORE" && $0.type == NoteType.siginfo })?.descriptor, info.count >= 32 {
            info.withUnsafeBytes { raw in
                let signo = raw.loadUnaligned(as: Int32.self)
                let code = raw.loadUnaligned(fromByteOffset: 8, as: Int32.self)
                let sentByProcess = code <= 0
                signal = RawSignal(SignalInfo(
                    signo: signo, code: code, errorNumber: raw.loadUnaligned(fromByteOffset: 4, as: Int32.self),
                    pid: sentByProcess ? raw.loadUnaligned(fromByteOffset: 16, as: Int32.self) : 0,
                    uid: sentByProcess ? raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self) : 0,
                    address: sentByProcess ? 0 : raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                    syscall: signo == 31 ? raw.loadUnaligned(fromByteOffset: 24, as: Int32.self) : 0))
            }
        } else if let status = notes.first(where: { $0.name == "CORE" && $0.type == NoteType.prstatus })?.descriptor, status.count >= 14 {
            let cursig = status.withUnsafeBytes { Int32($0.loadUnaligned(fromByteOffset: 12, as: Int16.self)) }
            signal = RawSignal(SignalInfo(signo: cursig, code: 0, address: 0))
            softErrors.append(SoftError(stage: "core", message: "no NT_SIGINFO note: the signal's code and address are not known"))
        }

        // The process: NT_PRPSINFO (pr_uid 16, pr_gid 20, pr_pid 24, pr_ppid 28, pr_fname[16] 40, pr_psargs[80] 56).
        var process = ProcessRecord(pid: threads[0].tid, ppid: 0, executable: "", commandLine: [], uid: 0, gid: 0, comm: "")
        if let info = notes.first(where: { $0.name == "CORE" && $0.type == NoteType.prpsinfo })?.descriptor, info.count >= 136 {
            func text(_ range: Range<Int>) -> String {
                let bytes = info[range]
                return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            info.withUnsafeBytes { raw in
                process.uid = raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self)
                process.gid = raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self)
                process.pid = raw.loadUnaligned(fromByteOffset: 24, as: Int32.self)
                process.ppid = raw.loadUnaligned(fromByteOffset: 28, as: Int32.self)
            }
            process.comm = text(40..<56)
            // The kernel keeps the first 80 bytes of the command line, arguments joined by spaces.
            process.commandLine = text(56..<136).split(separator: " ").map(String.init)
            if options.redactArguments { process.commandLine = CommandLineRedaction.redacted(process.commandLine) }
            process.redacted = options.redactArguments
        }
        // Which file each mapping shows: NT_FILE, else the dynamic linker's list of loaded objects.
        var named = Self.fileMappings(notes).map { NamedMapping(start: $0.start, end: $0.end, offset: $0.offset, path: $0.path) }
        let auxv = notes.first(where: { $0.name == "CORE" && $0.type == NoteType.auxv })?.descriptor ?? []
        var buildIDsFromFiles: [String: String] = [:]
        if notes.first(where: { $0.name == "CORE" && $0.type == NoteType.file }) == nil {
            if let executable {
                // The path it was run by when that is absolute, else where the file given for it is.
                let path = process.commandLine.first.flatMap { $0.hasPrefix("/") ? $0 : nil }
                    ?? ProcFS.readLink("/proc/self/fd/\(executable.fd)") ?? process.comm
                let (found, problems) = LinkMap.mappings(
                    auxv: auxv, executable: executable, executablePath: path, read: { Self.read(regions, $0, $1) },
                    open: { name in
                        guard let file = try? UntrustedFile.open((sysroot ?? "") + name) else { return nil }
                        if let id = ELFFile.buildID(of: file) { buildIDsFromFiles[name] = Hex.string(id) }
                        return file
                    })
                named = found
                if let id = ELFFile.buildID(of: executable) { buildIDsFromFiles[path] = Hex.string(id) }
                softErrors += problems.map { SoftError(stage: "core", message: $0) }
                softErrors.append(SoftError(stage: "core", message: "no NT_FILE note: mappings named from the dynamic linker's list of loaded objects, "
                    + "their files taken by name\(sysroot.map { " under \($0)" } ?? "") (the core holds no build-id to check them by)"))
            } else {
                softErrors.append(SoftError(stage: "core", message: "no NT_FILE note: mappings are not named, images are not found (--exe names the executable)"))
            }
        }
        named.sort { $0.start < $1.start }
        let vdso = Self.auxvValue(auxv, key: 33)  // AT_SYSINFO_EHDR
        // /proc/PID/maps as the process would have shown it, from the segments and the named mappings.
        var maps = ""
        for segment in segments {
            let permissions = (segment.flags & 4 != 0 ? "r" : "-") + (segment.flags & 2 != 0 ? "w" : "-")
                + (segment.flags & 1 != 0 ? "x" : "-") + "p"
            let file = Self.mapping(containing: segment.address, in: named)
            let name = file?.path ?? (segment.address == vdso ? "[vdso]" : "")
            let offset = file.map { $0.offset &+ (segment.address - $0.start) } ?? 0
            maps += "\(String(segment.address, radix: 16))-\(String(segment.address &+ segment.size, radix: 16)) \(permissions) "
                + "\(String(offset, radix: 16)) 00:00 \(file == nil ? 0 : 1) \(name)\n"
        }

        // Images: their build-ids from the first page the dump kept of each.
        let table = ImageTable(mapsText: maps)
        var images: [RawImage] = []
        for image in table.images where image.kind == .file || image.kind == .memfd || image.kind == .vdso {
            var record = RawImage(start: image.start)
            if let base = image.baseAddress,
               let identity = ImageIdentity.read(base: base, { address, count in Self.read(regions, address, count) }) {
                record.buildID = identity.buildID.map(Hex.string)
                record.architecture = identity.architecture
                record.package = identity.package
            } else if let fromFile = buildIDsFromFiles[image.path] {
                record.buildID = fromFile
            } else if image.kind != .vdso {
                softErrors.append(SoftError(stage: "images", image: image.path, message: "no ELF build-id in the core dump"))
            }
            images.append(record)
        }

        // The executable: the file mapped at AT_PHDR's page (the program headers are in its first mapping).
        if let phdr = Self.auxvValue(auxv, key: 3),
           let image = table.images.first(where: { image in image.mappings.contains { phdr >= $0.start && phdr < $0.end } }) {
            process.executable = image.path
            if executable != nil, let index = images.firstIndex(where: { $0.start == image.start }) { images[index].descriptor = 0 }
        }

        // The machine is the one reading the core (a core_pattern helper's is the crashed one's); the
        // architecture is always the crashed process's.
        var host = CaptureHost.record()
        host.architecture = architecture.rawValue
        if var live {
            if live.executable.isEmpty { live.executable = process.executable }
            process = live
        }
        var capture = RawCapture(
            reportID: CrashReport.newID(), pid: process.pid, signal: signal, originalFault: nil, handledFaults: [],
            timeNanoseconds: timeNanoseconds, startedNanoseconds: started, holdDurationMs: 0,
            architecture: architecture, maps: maps, auxv: Hex.string(auxv),
            pointerAuthenticationMask: notes.first(where: { $0.name == "LINUX" && $0.type == NoteType.armPACMask })
                .flatMap { try? RegisterDecoder.decodePointerAuthenticationMask($0.descriptor) }?.instructionMask,
            threads: threads, images: images, process: process, host: host,
            ptraceScope: nil, seccompMode: nil, capturedBytes: regions.reduce(0) { $0 + $1.bytes.count },
            stackByteLimitPerThread: options.stackBytesPerThread, captureByteLimit: options.captureBytes,
            softErrors: softErrors,
            options: ProcessingOptions(
                maxFrames: options.maxFrames, symbolication: options.symbolication.rawValue,
                debugDirectories: options.debugDirectories, appRoots: options.appRoots,
                debuginfodURLs: options.debuginfodURLs, deadlineNanoseconds: deadlineNanoseconds,
                reportByteLimit: options.reportByteLimit))
        capture.runID = options.runID
        capture.source = "core"
        capture.options.sysroot = sysroot
        self.capture = capture
    }

    /// The longest mapping name kept from NT_FILE (PATH_MAX).
    static let maxPathBytes = 4096

    /// NT_FILE's mappings (count, page size, count × (start, end, page offset), then the names); a note that
    /// claims more entries than it holds gives none.
    static func fileMappings(_ notes: [ELFNote]) -> [(start: UInt64, end: UInt64, offset: UInt64, path: String)] {
        guard let table = notes.first(where: { $0.name == "CORE" && $0.type == NoteType.file })?.descriptor, table.count >= 16
        else { return [] }
        return table.withUnsafeBytes { raw in
            let count = raw.loadUnaligned(as: UInt64.self), pageSize = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            // At most as many as the kernel maps (vm.max_map_count's default, 65,530, with room).
            guard count <= UInt64(raw.count - 16) / 24, count <= 1 << 17 else { return [] }
            var mappings: [(start: UInt64, end: UInt64, offset: UInt64, path: String)] = []
            var nameOffset = 16 + Int(count) * 24
            for index in 0..<Int(count) {
                let entry = 16 + index * 24
                let end = raw[nameOffset...].firstIndex(of: 0) ?? raw.count
                // No path the kernel writes is longer than PATH_MAX: a longer name is cut there.
                let path = String(decoding: raw[nameOffset..<min(end, nameOffset + Self.maxPathBytes)], as: UTF8.self)
                nameOffset = min(end + 1, raw.count)
                mappings.append((raw.loadUnaligned(fromByteOffset: entry, as: UInt64.self),
                                 raw.loadUnaligned(fromByteOffset: entry + 8, as: UInt64.self),
                                 raw.loadUnaligned(fromByteOffset: entry + 16, as: UInt64.self) &* pageSize, path))
            }
            return mappings
        }
    }

    /// The architecture of the core dump whose ELF header (the first 64 bytes) is `header`; a message for any
    /// file that is not a 64-bit little-endian core of x86-64 or aarch64.
    static func architecture(ofHeader header: UnsafeRawBufferPointer) throws(CoreFileError) -> Architecture {
        guard header.count >= 64, header[0] == 0x7f, header[1] == UInt8(ascii: "E"), header[2] == UInt8(ascii: "L"),
              header[3] == UInt8(ascii: "F")
        else { throw CoreFileError("not an ELF file") }
        guard header[4] == 2, header[5] == 1 else { throw CoreFileError("not a 64-bit little-endian ELF file") }
        let type = header.loadUnaligned(fromByteOffset: 16, as: UInt16.self)
        let machine = header.loadUnaligned(fromByteOffset: 18, as: UInt16.self)
        guard type == 4 else { throw CoreFileError("an ELF file, but not a core dump (type \(type))") }
        guard let architecture = Architecture(elfMachine: machine) else {
            throw CoreFileError("a core dump of machine \(machine), neither x86-64 nor aarch64")
        }
        return architecture
    }

    /// Why a PT_LOAD or PT_NOTE program header (number `index`) cannot be used, or nil when it can: its bytes
    /// in the file or in memory must end before 2^64 (a core's sizes are the crashed program's to choose:
    /// `p_filesz` 0xffff… would make every range built from it run backwards).
    static func segmentProblem(index: Int, type: UInt32, offset: UInt64, address: UInt64, fileSize: UInt64,
                               memorySize: UInt64) -> String? {
        let kind = type == 4 ? "note segment" : "segment"
        if offset.addingReportingOverflow(fileSize).overflow {
            return "\(kind) \(index) was left out: its offset 0x\(String(offset, radix: 16)) and size 0x\(String(fileSize, radix: 16)) end past 2^64"
        }
        if type == 1, address.addingReportingOverflow(max(fileSize, memorySize)).overflow {
            return "\(kind) \(index) was left out: at 0x\(String(address, radix: 16)), its size 0x\(String(max(fileSize, memorySize), radix: 16)) ends past the top of the address space"
        }
        return nil
    }

    /// The region (of `regions`, sorted by address) holding `address`, found by bisection: a core may have
    /// tens of thousands of segments, and every image's identity and every thread's stack looks one up.
    static func region(containing address: UInt64, in regions: [(address: UInt64, bytes: UnsafeRawBufferPointer)])
        -> (address: UInt64, bytes: UnsafeRawBufferPointer)?
    {
        guard let index = regions.lastIndex(startingAtOrBelow: address, start: { $0.address }) else { return nil }
        let region = regions[index]
        return address - region.address < UInt64(region.bytes.count) ? region : nil
    }

    /// The named mapping (of `mappings`, sorted by start) holding `address`, found by bisection.
    static func mapping(containing address: UInt64, in mappings: [NamedMapping]) -> NamedMapping? {
        guard let index = mappings.lastIndex(startingAtOrBelow: address, start: { $0.start }),
              address < mappings[index].end else { return nil }
        return mappings[index]
    }

    /// `count` bytes at `address` from the dumped memory (fewer where the dump has no more); `regions` sorted.
    static func read(_ regions: [(address: UInt64, bytes: UnsafeRawBufferPointer)], _ address: UInt64, _ count: Int) -> [UInt8] {
        guard count > 0, let region = region(containing: address, in: regions) else { return [] }
        let start = Int(address - region.address)
        return Array(region.bytes[start..<(start + min(count, region.bytes.count - start))])
    }

    /// The value of auxv entry `key` (pairs of 64-bit words), nil when absent.
    static func auxvValue(_ auxv: [UInt8], key: UInt64) -> UInt64? {
        auxv.withUnsafeBytes { raw in
            var offset = 0
            while offset + 16 <= raw.count {
                let type = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                if type == 0 { return nil }
                if type == key { return raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) }
                offset += 16
            }
            return nil
        }
    }
}
