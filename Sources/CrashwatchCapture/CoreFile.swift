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
    /// A piece of the dumped memory: its address in the process and its bytes in the mapped core.
    public typealias Region = (address: UInt64, bytes: UnsafeRawBufferPointer)

    /// What the core holds, as a capture; a `core_pattern` helper adds where it kept the core itself.
    public var capture: RawCapture
    public let regions: [Region]
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
        var core = try Self.segments(of: mapping.bytes, memoryLimit: options.captureBytes)
        regions = core.regions
        let notes = core.notes, architecture = core.architecture
        let threads = try Self.threads(notes, architecture: architecture, regions: regions, softErrors: &core.softErrors)
        let signal = Self.signal(notes, softErrors: &core.softErrors)
        var process = Self.process(notes, firstThread: threads[0].tid, options: options)
        let auxv = Self.descriptor(notes, NoteType.auxv) ?? []
        let named = Self.namedMappings(notes, auxv: auxv, regions: regions, process: process, executable: executable,
                                       sysroot: sysroot, softErrors: &core.softErrors)
        // /proc/PID/maps as the process would have shown it, from the segments and the named mappings: the
        // worker reads it as text, the images here come from the same mappings.
        let mappings = Self.memoryMappings(core.loads, named: named.mappings, vdso: Self.auxvValue(auxv, key: 33))  // AT_SYSINFO_EHDR
        let table = ImageTable(mappings: mappings.filter { $0.start < $0.end })
        var images = Self.images(table, regions: regions, buildIDsFromFiles: named.buildIDs, softErrors: &core.softErrors)
        // The executable: the file mapped at AT_PHDR's page (the program headers are in its first mapping).
        if let phdr = Self.auxvValue(auxv, key: 3), let image = table.images.first(where: { $0.mappings.contains { $0.contains(phdr) } }) {
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
            architecture: architecture, maps: mappings.map { "\($0)\n" }.joined(), auxv: Hex.string(auxv),
            pointerAuthenticationMask: Self.descriptor(notes, NoteType.armPACMask, owner: "LINUX")
                .flatMap { try? RegisterDecoder.decodePointerAuthenticationMask($0) }?.instructionMask,
            threads: threads, images: images, process: process, host: host,
            ptraceScope: nil, seccompMode: nil, capturedBytes: regions.reduce(0) { $0 + $1.bytes.count },
            stackByteLimitPerThread: options.stackBytesPerThread, captureByteLimit: options.captureBytes,
            softErrors: core.softErrors, options: ProcessingOptions(options, deadlineNanoseconds: deadlineNanoseconds))
        capture.runID = options.runID
        capture.source = "core"
        capture.options.sysroot = sysroot
        self.capture = capture
    }

    /// What the program headers of a mapped core give: its architecture, its memory (PT_LOAD) and the notes
    /// a report uses (PT_NOTE, kept within `CoreNotes`' caps for `memoryLimit`), and why anything was left out.
    struct Segments {
        var architecture: Architecture
        var regions: [Region] = []
        var loads: [ProgramHeader] = []
        var notes: [ELFNote] = []
        var softErrors: [SoftError] = []
    }

    /// The headers, memory and notes of the mapped core `file`: every offset and size checked against the file.
    static func segments(of file: UnsafeRawBufferPointer, memoryLimit: Int) throws -> Segments {
        let reader = ByteReader(file)
        let (header, architecture) = try coreHeader(reader)
        guard header.programHeaderCount != 0xffff,
              let table = ProgramHeader.table(reader, at: header.programHeaderOffset, entrySize: header.programHeaderEntrySize,
                                              count: header.programHeaderCount)
        else { throw CoreFileError("program headers out of bounds (or more than 65,534 of them)") }
        var core = Segments(architecture: architecture)
        var noteSet = CoreNotes(memoryLimit: memoryLimit)
        let (usable, problems) = usableSegments(table, fileSize: UInt64(file.count))
        core.softErrors = problems.map { SoftError(stage: "core", message: $0) }
        for (_, segment) in usable {
            guard let slice = reader.bytes(at: segment.offset, count: segment.filesz) else { continue }  // checked: usableSegments
            let bytes = UnsafeRawBufferPointer(rebasing: slice)
            if segment.type == ProgramHeader.loadType {
                core.loads.append(segment)
                if segment.filesz > 0 { core.regions.append((segment.vaddr, bytes)) }
            } else {
                var source = BufferNoteSource(bytes)
                try noteSet.scan(&source, alignment: max(segment.align, 4))
            }
        }
        core.softErrors += noteSet.problems.map { SoftError(stage: "core", message: $0) }
        core.notes = noteSet.kept
        core.regions.sort { $0.address < $1.address }
        return core
    }

    /// The threads (NT_PRSTATUS, the thread that took the signal first), each with the dumped stack above its
    /// stack pointer; throws for a core with none.
    static func threads(_ notes: [ELFNote], architecture: Architecture, regions: [Region],
                        softErrors: inout [SoftError]) throws -> [RawThread] {
        var threads: [RawThread] = []
        for note in notes where note.name == "CORE" && note.type == NoteType.prstatus {
            guard let (tid, registers) = thread(note.descriptor, architecture: architecture) else {
                softErrors.append(SoftError(stage: "core", message: "an NT_PRSTATUS note of \(note.descriptor.count) bytes is too short"))
                continue
            }
            var thread = RawThread(tid: tid, name: nil, crashed: threads.isEmpty, registers: registers)
            if let sp = RegisterDecoder.stackPointer(registers, architecture: architecture),
               let stack = region(containing: sp, in: regions) {
                thread.stackStart = sp
                thread.stackEnd = stack.address + UInt64(stack.bytes.count)  // no overflow: `segmentProblem`
            }
            threads.append(thread)
        }
        guard !threads.isEmpty else { throw CoreFileError("no thread (NT_PRSTATUS) in the core dump") }
        return threads
    }

    /// The signal: NT_SIGINFO, else pr_cursig of the first thread (its code and address then unknown).
    static func signal(_ notes: [ELFNote], softErrors: inout [SoftError]) -> RawSignal {
        if let info = descriptor(notes, NoteType.siginfo), let signal = signal(siginfo: info) {
            return RawSignal(signal)
        }
        guard let status = descriptor(notes, NoteType.prstatus), let cursig = currentSignal(prstatus: status) else {
            return RawSignal(SignalInfo(signo: 0, code: 0, address: 0))
        }
        softErrors.append(SoftError(stage: "core", message: "no NT_SIGINFO note: the signal's code and address are not known"))
        return RawSignal(SignalInfo(signo: cursig, code: 0, address: 0))
    }

    /// The process as NT_PRPSINFO describes it (its arguments redacted as `options` say); without that note,
    /// only its pid, the first thread's.
    static func process(_ notes: [ELFNote], firstThread: Int32, options: CaptureOptions) -> ProcessRecord {
        var process = ProcessRecord(pid: firstThread, ppid: 0, executable: "", commandLine: [], uid: 0, gid: 0, comm: "")
        if let info = descriptor(notes, NoteType.prpsinfo), readProcess(prpsinfo: info, into: &process) {
            if options.redactArguments { process.commandLine = CommandLineRedaction.redacted(process.commandLine) }
            process.redacted = options.redactArguments
        }
        return process
    }

    /// Which file each mapping shows, sorted by start: NT_FILE, else (with `executable`) the dynamic linker's
    /// list of loaded objects, with the build-ids of the files it opened by path.
    static func namedMappings(_ notes: [ELFNote], auxv: [UInt8], regions: [Region], process: ProcessRecord,
                              executable: OwnedDescriptor?, sysroot: String?, softErrors: inout [SoftError])
        -> (mappings: [NamedMapping], buildIDs: [String: String])
    {
        var named = fileMappings(notes)
        var buildIDs: [String: String] = [:]
        if descriptor(notes, NoteType.file) == nil {
            if let executable {
                // The path it was run by when that is absolute, else where the file given for it is.
                let path = process.commandLine.first.flatMap { $0.hasPrefix("/") ? $0 : nil }
                    ?? ProcFS.readLink("/proc/self/fd/\(executable.fd)") ?? process.comm
                let (found, problems) = LinkMap.mappings(
                    auxv: auxv, executable: executable, executablePath: path, read: { Self.read(regions, $0, $1) },
                    open: { name in
                        guard let file = try? UntrustedFile.open((sysroot ?? "") + name) else { return nil }
                        if let id = ELFFile.buildID(of: file) { buildIDs[name] = Hex.string(id) }
                        return file
                    })
                named = found
                if let id = ELFFile.buildID(of: executable) { buildIDs[path] = Hex.string(id) }
                softErrors += problems.map { SoftError(stage: "core", message: $0) }
                softErrors.append(SoftError(stage: "core", message: "no NT_FILE note: mappings named from the dynamic linker's list of loaded objects, "
                    + "their files taken by name\(sysroot.map { " under \($0)" } ?? "") (the core holds no build-id to check them by)"))
            } else {
                softErrors.append(SoftError(stage: "core", message: "no NT_FILE note: mappings are not named, images are not found (--exe names the executable)"))
            }
        }
        named.sort { $0.start < $1.start }
        return (named, buildIDs)
    }

    /// The mappings /proc/PID/maps would have shown: one per PT_LOAD segment (`loads`), named by the mapping
    /// of `named` (sorted) it lies in, else `[vdso]` at the vdso's address, else anonymous.
    static func memoryMappings(_ loads: [ProgramHeader], named: [NamedMapping], vdso: UInt64?) -> [MemoryMapping] {
        loads.map { segment in
            let file = mapping(containing: segment.vaddr, in: named)
            let permissions = MemoryPermissions(isReadable: segment.flags & 4 != 0, isWritable: segment.flags & 2 != 0,
                                                isExecutable: segment.flags & 1 != 0, isShared: false)
            return MemoryMapping(start: segment.vaddr, end: segment.vaddr &+ max(segment.memsz, segment.filesz),
                                 permissions: permissions, offset: file.map { $0.offset &+ (segment.vaddr - $0.start) } ?? 0,
                                 device: "00:00", inode: file == nil ? 0 : 1,
                                 printedPath: file?.path ?? (segment.vaddr == vdso ? "[vdso]" : ""))
        }
    }

    /// The images of `table` (files, memfds, the vdso), their build-ids from the first page the dump kept of
    /// each, else from the file opened for it (`buildIDsFromFiles`, by path).
    static func images(_ table: ImageTable, regions: [Region], buildIDsFromFiles: [String: String],
                       softErrors: inout [SoftError]) -> [RawImage] {
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
        return images
    }

    /// The region (of `regions`, sorted by address) holding `address`, found by bisection: a core may have
    /// tens of thousands of segments, and every image's identity and every thread's stack looks one up.
    static func region(containing address: UInt64, in regions: [Region]) -> Region? {
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
    static func read(_ regions: [Region], _ address: UInt64, _ count: Int) -> [UInt8] {
        guard count > 0, let region = region(containing: address, in: regions) else { return [] }
        let start = Int(address - region.address)
        return Array(region.bytes[start..<(start + min(count, region.bytes.count - start))])
    }
}
