// CoreContents.swift — a core dump (ELF `ET_CORE`) turned into the same `RawCapture` a live capture yields,
// from the dump instead of the held process, so the one processing path (unwinding from the captured bytes,
// symbols from the image files) builds the report. What the kernel wrote:
// - PT_LOAD segments: the process's memory (stacks and data; the first page of each file mapping, which
//   holds its ELF headers and build-id note, under the default `coredump_filter`);
// - PT_NOTE: NT_PRSTATUS per thread (the thread that took the signal first), NT_SIGINFO, NT_PRPSINFO (pid,
//   uids, comm, the start of the command line), NT_AUXV, NT_FILE (which file each mapping shows).
// One mechanism: the core's headers and notes (`CoreContents`) and the pieces of its memory that were kept
// (`CoreRegion`s) become the capture; `CoreStream` is what reads a core and keeps them.
import CrashwatchModel
import CrashwatchSymbols
import CrashwatchSystem

/// A piece of a core's memory: its address in the process and its bytes (in the capture file being written).
public typealias CoreRegion = (address: UInt64, bytes: UnsafeRawBufferPointer)

/// What a core's headers and notes say: its architecture, its mappings (PT_LOAD) and the notes a report uses,
/// and what of the core was left out (a soft error each).
struct CoreContents {
    var architecture: Architecture
    /// The usable PT_LOAD headers, in table order: one mapping each.
    var loads: [ProgramHeader]
    /// The notes kept (`CoreNotes`), in the core's order.
    var notes: [ELFNote]
    var softErrors: [SoftError]

    /// The capture of the core whose memory kept is `regions` (sorted by address). `started` is when reading
    /// the core began (CLOCK_MONOTONIC), `timeNanoseconds` when the crash happened; `options` as for a live
    /// capture. With `executable`, the main executable's image is read from that file (`analyze-core --exe`;
    /// the first file the processor is given) instead of the path the dump names; a core without NT_FILE
    /// needs it to name its mappings (see LinkMap). `sysroot`: where the image files are found (their paths
    /// prefixed with it). `process`: the process as /proc showed it while the kernel dumped it (a
    /// `core_pattern` helper), instead of what the notes hold. Throws for a core with no thread.
    func capture(regions: [CoreRegion], started: Int64, timeNanoseconds: Int64, options: CaptureOptions,
                 deadlineNanoseconds: Int64, executable: OwnedDescriptor?, sysroot: String?,
                 process live: ProcessRecord?) throws(CoreFileError) -> RawCapture {
        var softErrors = self.softErrors
        let threads = try Self.threads(notes, architecture: architecture, regions: regions, softErrors: &softErrors)
        let signal = Self.signal(notes, softErrors: &softErrors)
        var process = Self.process(notes, firstThread: threads[0].tid, options: options)
        let auxv = CoreRecords.descriptor(notes, CoreRecords.NoteType.auxv) ?? []
        let named = Self.namedMappings(notes, auxv: auxv, regions: regions, process: process, executable: executable,
                                       sysroot: sysroot, softErrors: &softErrors)
        // /proc/PID/maps as the process would have shown it, from the segments and the named mappings: the
        // worker reads it as text, the images here come from the same mappings.
        let vdso = CoreRecords.auxvValue(auxv, key: 33)  // AT_SYSINFO_EHDR
        let mappings = Self.memoryMappings(loads, named: named.mappings, vdso: vdso)
        let table = ImageTable(mappings: mappings.filter { $0.start < $0.end })
        var images = Self.images(table, regions: regions, buildIDsFromFiles: named.buildIDs, softErrors: &softErrors)
        // The executable: the file mapped at AT_PHDR's page (the program headers are in its first mapping).
        if let phdr = CoreRecords.auxvValue(auxv, key: 3),
           let image = table.images.first(where: { $0.mappings.contains { $0.contains(phdr) } }) {
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
        let mask = CoreRecords.descriptor(notes, CoreRecords.NoteType.armPACMask, owner: "LINUX")
            .flatMap { try? RegisterDecoder.decodePointerAuthenticationMask($0) }?.instructionMask
        var capture = RawCapture(
            reportID: CrashReport.newID(), pid: process.pid, signal: signal, originalFault: nil, handledFaults: [],
            timeNanoseconds: timeNanoseconds, startedNanoseconds: started, holdDurationMs: 0,
            architecture: architecture, maps: mappings.map { "\($0)\n" }.joined(), auxv: Hex.string(auxv),
            pointerAuthenticationMask: mask, threads: threads, images: images, process: process, host: host,
            ptraceScope: nil, seccompMode: nil, capturedBytes: regions.reduce(0) { $0 + $1.bytes.count },
            stackByteLimitPerThread: options.stackBytesPerThread, captureByteLimit: options.captureBytes,
            softErrors: softErrors, options: ProcessingOptions(options, deadlineNanoseconds: deadlineNanoseconds))
        capture.runID = options.runID
        capture.annotate(options)
        capture.source = "core"
        capture.options.sysroot = sysroot
        return capture
    }

    /// The threads (NT_PRSTATUS, the thread that took the signal first), each with the dumped stack above its
    /// stack pointer; throws for a core with none.
    static func threads(_ notes: [ELFNote], architecture: Architecture, regions: [CoreRegion],
                        softErrors: inout [SoftError]) throws(CoreFileError) -> [RawThread] {
        var threads: [RawThread] = []
        for note in notes where note.name == "CORE" && note.type == CoreRecords.NoteType.prstatus {
            guard let (tid, registers) = CoreRecords.thread(note.descriptor, architecture: architecture) else {
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
    static func signal(_ notes: [ELFNote], softErrors: inout [SoftError]) -> SignalInfo {
        if let info = CoreRecords.descriptor(notes, CoreRecords.NoteType.siginfo), let signal = CoreRecords.signal(siginfo: info) {
            return signal
        }
        guard let status = CoreRecords.descriptor(notes, CoreRecords.NoteType.prstatus), let cursig = CoreRecords.currentSignal(prstatus: status) else {
            return SignalInfo(signo: 0, code: 0, address: 0)
        }
        softErrors.append(SoftError(stage: "core", message: "no NT_SIGINFO note: the signal's code and address are not known"))
        return SignalInfo(signo: cursig, code: 0, address: 0)
    }

    /// The process as NT_PRPSINFO describes it (its arguments redacted as `options` say); without that note,
    /// only its pid, the first thread's.
    static func process(_ notes: [ELFNote], firstThread: Int32, options: CaptureOptions) -> ProcessRecord {
        var process = ProcessRecord(pid: firstThread, ppid: 0, executable: "", commandLine: [], uid: 0, gid: 0, comm: "")
        if let info = CoreRecords.descriptor(notes, CoreRecords.NoteType.prpsinfo), CoreRecords.readProcess(prpsinfo: info, into: &process) {
            if options.redactArguments { process.commandLine = CommandLineRedaction.redacted(process.commandLine) }
            process.redacted = options.redactArguments
        }
        return process
    }

    /// Which file each mapping shows, sorted by start: NT_FILE, else (with `executable`) the dynamic linker's
    /// list of loaded objects, with the build-ids of the files it opened by path.
    static func namedMappings(_ notes: [ELFNote], auxv: [UInt8], regions: [CoreRegion], process: ProcessRecord,
                              executable: OwnedDescriptor?, sysroot: String?, softErrors: inout [SoftError])
        -> (mappings: [NamedMapping], buildIDs: [String: String])
    {
        var named = CoreRecords.fileMappings(notes)
        var buildIDs: [String: String] = [:]
        if CoreRecords.descriptor(notes, CoreRecords.NoteType.file) == nil {
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
    static func images(_ table: ImageTable, regions: [CoreRegion], buildIDsFromFiles: [String: String],
                       softErrors: inout [SoftError]) -> [RawImage] {
        var images: [RawImage] = []
        for image in table.images where image.kind == .file || image.kind == .memfd || image.kind == .vdso {
            var record = RawImage(start: image.start)
            if let base = image.baseAddress,
               let identity = ImageIdentity.read(base: base, { address, count in Self.read(regions, address, count) }),
               identity.buildID != nil {
                record.buildID = identity.buildID.map(Hex.string)
                record.architecture = identity.architecture
                record.package = identity.package
            } else if let fromFile = buildIDsFromFiles[image.path] {
                record.buildID = fromFile
            } else if image.kind != .vdso, let base = image.baseAddress,
                      ImageIdentity.isELF(base: base, { address, count in Self.read(regions, address, count) }) {
                // Only an ELF image misses a build-id: a mapped data file (locale archive, gconv cache) has
                // none, and under the default coredump_filter the kernel dumps a file mapping's first page only
                // when it is an ELF header, so a mapping without one is no image.
                softErrors.append(SoftError(stage: "images", image: image.path, message: "no ELF build-id in the core dump"))
            }
            images.append(record)
        }
        return images
    }

    /// The region (of `regions`, sorted by address) holding `address`, found by bisection: a core may have
    /// tens of thousands of segments, and every image's identity and every thread's stack looks one up.
    static func region(containing address: UInt64, in regions: [CoreRegion]) -> CoreRegion? {
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
    static func read(_ regions: [CoreRegion], _ address: UInt64, _ count: Int) -> [UInt8] {
        guard count > 0, let region = region(containing: address, in: regions) else { return [] }
        let start = Int(address - region.address)
        return Array(region.bytes[start..<(start + min(count, region.bytes.count - start))])
    }
}
