// Processing.swift — the worker's side (DESIGN.md "Capture and processing"): a raw capture becomes the
// full report. Stacks are unwound with libunwind over the captured bytes and the images' files; files
// come from the descriptors the supervisor opened through /proc, or are opened here as untrusted (never
// blocking, never through a link, regular files only) and used only when they are the very file the
// process mapped (same build-id, else same device and inode). Images whose file is gone are unwound and
// named from the bytes copied out of memory. The worker runs confined (rlimits, no new privileges,
// privileges dropped) and under the capture deadline; whatever it cannot finish becomes a soft error.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem

/// Unwinds and symbolizes a raw capture for the report builder.
public struct CaptureProcessor: FrameProcessor {
    private let space: CapturedAddressSpace
    private let table: ImageTable
    private let capture: RawCapture
    /// The file used for each image (by first mapping start), for the symbolizer.
    private var imageFiles: [UInt64: OwnedDescriptor] = [:]
    /// Images whose file was refused or missing but whose bytes were copied: rebuilt for the symbolizer.
    private var copiedImages: Set<UInt64> = []
    private var symbolizer: Symbolizer?
    /// The symbolizer at work on a helper thread while the stacks are unwound (`startWarmingSymbols`).
    private var warmup: SymbolizerWarmup?
    /// libdw's unwinder, for the stacks libunwind (built for the host, stopped by ARM64's pointer-authentication
    /// CFI) cannot unwind: every aarch64 capture, and any other architecture than the host's.
    private var dwarfUnwinder: DwarfUnwinder?
    private let unwindsWithLibdw: Bool
    private let symbolication: Symbolication
    /// Past this (CLOCK_MONOTONIC), remaining threads are left unwound so the report still gets out.
    private let softDeadline: Int64
    private var reportedTableProblems: Set<UInt64> = []
    /// Build-ids read from files for images whose memory gave none.
    private var fileBuildIDs: [UInt64: String] = [:]
    public private(set) var softErrors: [SoftError] = []

    /// Prepares the address space: captured regions, then image files for images whose bytes were not
    /// copied. `passedFiles` are the descriptors the supervisor handed over (`RawImage.descriptor`).
    /// The source must outlive the processor (its regions are read in place).
    public init(source file: some CaptureSource, passedFiles: [OwnedDescriptor]) throws(SystemError) {
        capture = file.capture
        table = ImageTable(mapsText: capture.maps)
        space = try CapturedAddressSpace()
        symbolication = Symbolication(rawValue: capture.options.symbolication) ?? .full
        let total = capture.options.deadlineNanoseconds - capture.startedNanoseconds
        softDeadline = capture.options.deadlineNanoseconds - max(min(total / 10, 1_000_000_000), 100_000_000)
        unwindsWithLibdw = capture.architecture != .host || capture.architecture == .aarch64
        if unwindsWithLibdw {
            do {
                dwarfUnwinder = try DwarfUnwinder(space: space, elfMachine: capture.architecture.elfMachine, codeMask: capture.codeAddressMask)
            } catch {
                softErrors.append(SoftError(stage: "unwind", message: "\(error)"))
            }
        }

        var identities: [UInt64: RawImage] = [:]
        for image in capture.images { identities[image.start] = image }
        // Read-only pages of an image whose very file is open come from the file, as in a live capture, even
        // where a core dumped them too: the kernel dumps each image's first page, whose ELF header the
        // program may have overwritten (the loader never reads it again; the unwinder would).
        var servedByFiles: [Range<UInt64>] = []
        for image in table.images where image.kind == .file || image.kind == .memfd || image.kind == .vdso {
            let identity = identities[image.start]
            space.addImage(start: image.start, end: image.end, base: image.baseAddress ?? image.start)
            if identity?.copied == true { copiedImages.insert(image.start) }
            var fileForImage: OwnedDescriptor?
            if let index = identity?.descriptor, index >= 0, index < passedFiles.count {
                fileForImage = passedFiles[index]
                // A file given for an image whose memory showed no build-id (its headers overwritten, or not dumped).
                if identity?.buildID == nil, let found = ELFFile.buildID(of: passedFiles[index]) { fileBuildIDs[image.start] = Hex.string(found) }
            } else if image.kind == .file && !image.isDeleted {
                fileForImage = openMapped(image, buildID: identity?.buildID)
            }
            if let fileForImage {
                imageFiles[image.start] = fileForImage
                space.setImageFile(start: image.start, fd: fileForImage.fd)
                reportToDwarfUnwinder(image, fd: fileForImage.fd)
            }
            for mapping in image.mappings {
                // Copied bytes are what the process ran. The rest comes from the file: exact for read-only
                // pages, unrelocated for data pages, whose contents unwinding never needs but whose
                // addresses unwind tables point into (personality pointers); without a file, zeros.
                let copied = identity?.copied == true && mapping.permissions.isReadable && !mapping.permissions.isWritable
                if copied { continue }
                if let fileForImage {
                    space.add(address: mapping.start, length: mapping.size, fd: fileForImage.fd, offset: mapping.offset)
                    if !mapping.permissions.isWritable { servedByFiles.append(mapping.start..<mapping.end) }
                } else if mapping.permissions.isWritable {
                    space.addZeros(address: mapping.start, length: mapping.size)
                }
            }
        }
        servedByFiles.sort { $0.lowerBound < $1.lowerBound }
        for region in file.regions where !Self.contains(servedByFiles, region.address..<region.address &+ UInt64(region.bytes.count)) {
            space.add(address: region.address, bytes: region.bytes)
        }
        reportCopiedImagesToDwarfUnwinder()
    }

    /// Whether one of `ranges` (sorted by start, not overlapping) holds all of `range`.
    private static func contains(_ ranges: [Range<UInt64>], _ range: Range<UInt64>) -> Bool {
        guard let index = ranges.lastIndex(startingAtOrBelow: range.lowerBound, start: { $0.lowerBound }) else { return false }
        return ranges[index].upperBound >= range.upperBound
    }

    /// libdw unwinds from files: an image known only by its bytes in memory (copied while held, the vdso of
    /// a core) becomes one, as for the symbolizer.
    private mutating func reportCopiedImagesToDwarfUnwinder() {
        guard dwarfUnwinder != nil else { return }
        for image in table.images where imageFiles[image.start] == nil && (copiedImages.contains(image.start) || image.kind == .vdso) {
            guard let rebuilt = rebuildFromMemory(image) else { continue }
            imageFiles[image.start] = rebuilt
            reportToDwarfUnwinder(image, fd: rebuilt.fd)
        }
    }

    private mutating func reportToDwarfUnwinder(_ image: LoadedImage, fd: Int32) {
        guard let failure = dwarfUnwinder?.report(name: image.path, fd: fd, loadAddress: image.baseAddress ?? image.start) else { return }
        softErrors.append(SoftError(stage: "unwind", image: image.path, message: failure))
    }

    /// Opens an image's file by its maps path, and keeps it only if it is the file the process mapped.
    private mutating func openMapped(_ image: LoadedImage, buildID: String?) -> OwnedDescriptor? {
        let file: OwnedDescriptor
        do {
            file = try UntrustedFile.open((capture.options.sysroot ?? "") + image.path)
        } catch {
            softErrors.append(SoftError(stage: "images", image: image.path, message: "\(error)"))
            return nil
        }
        if let buildID {
            let found = ELFFile.buildID(of: file).map(Hex.string)
            guard found == buildID else {
                softErrors.append(SoftError(stage: "images", image: image.path, message:
                    "the file there now is another build (build-id \(found ?? "none"), the process had \(buildID)); not used"))
                return nil
            }
            return file
        }
        guard let identity = file.identity(), let mapped = image.mappings.first,
              identity.inode == mapped.inode, MapsDevice(mapped.device)?.matches(identity.device) == true else {
            softErrors.append(SoftError(stage: "images", image: image.path, message:
                "no build-id to match and the file there now is not the mapped inode; not used"))
            return nil
        }
        if let found = ELFFile.buildID(of: file) { fileBuildIDs[image.start] = Hex.string(found) }
        return file
    }

    public func fileBuildID(ofImageAt start: UInt64) -> String? { fileBuildIDs[start] }

    // MARK: Unwinding

    public mutating func frames(registers: RegisterSet, words: [UInt64], thread: RawThread?) -> (frames: [UnsymbolizedFrame], stop: String) {
        if Clock.monotonicNanoseconds() >= softDeadline {
            softErrors.append(SoftError(stage: "deadline", tid: thread?.tid, message: "processing deadline passed before this thread was unwound"))
            return ([UnsymbolizedFrame(pc: registers.pc, sp: registers.sp, how: .context, isExact: true)], "processing deadline passed")
        }
        var seed = words
        var prefix: [UnsymbolizedFrame] = []
        // A call through a NULL or wild function pointer leaves the pc outside every executable mapping,
        // where there is no unwind info. The caller's return address is still where the call put it: at
        // [sp] on x86-64, in lr on ARM64. Start the unwind there.
        if table.mapping(containing: registers.pc)?.permissions.isExecutable != true,
           let reseeded = reseedFromReturnAddress(registers: registers, words: words)
        {
            prefix = [UnsymbolizedFrame(pc: registers.pc, sp: registers.sp, how: .context, isExact: true)]
            seed = reseeded
        }
        let budget = max(capture.options.maxFrames - prefix.count, 1)
        var (unwound, stop) = unwind(seed, maxFrames: budget)
        continueThroughSignalReturns(&unwound, &stop, budget: budget, architecture: registers.architecture, tid: thread?.tid)
        var frames = prefix
        for (index, frame) in unwound.enumerated() {
            // A frame a signal interrupted is restored from the signal frame's saved context, like the
            // crashed frame from the thread's registers: `context` marks both, and both pcs are exact.
            // The frame just inside it is the signal trampoline (`__restore_rt`), which the handler
            // "returns" to at its first instruction: exact as well.
            let how: FrameTrust
            if index == 0 {
                how = prefix.isEmpty ? .context : .returnAddressAtSP
            } else if frame.isSignalFrame {
                how = .context
            } else {
                let callee = unwound[index - 1]
                how = callee.hasUnwindInfo ? (space.usesDebugFrame(at: callee.pc) ? .debugFrame : .cfi) : .framePointer
            }
            let isTrampoline = index + 1 < unwound.count && unwound[index + 1].isSignalFrame
            frames.append(UnsymbolizedFrame(pc: frame.pc, sp: frame.sp, how: how, isExact: how == .context || isTrampoline))
            noteTableProblem(at: frame.pc, usable: frame.hasUnwindInfo)
        }
        // A frame at the pc and stack pointer of a fault this thread handled is that fault's interrupted
        // frame, whatever found it (Go's sigpanic returns to the faulting instruction): exact, from a context.
        if let tid = thread?.tid {
            let faults = capture.handledFaults.filter { $0.tid == tid }
                .compactMap { try? RegisterDecoder.decode($0.registers, architecture: registers.architecture) }
            for index in frames.indices.dropFirst() where frames[index].how != .context {
                if faults.contains(where: { $0.pc == frames[index].pc && $0.sp == frames[index].sp }) {
                    frames[index] = UnsymbolizedFrame(pc: frames[index].pc, sp: frames[index].sp, how: .context, isExact: true)
                }
            }
        }
        var reason = stop.text
        if case .error = stop, let thread, ranOutOfCapturedStack(thread, last: unwound.last) {
            reason = "stack capture limit (\(capture.stackByteLimitPerThread) bytes) reached"
            softErrors.append(SoftError(stage: "unwind", tid: thread.tid, message:
                "the unwind needed stack memory beyond the \(capture.stackByteLimitPerThread) bytes captured from the stack pointer "
                + "(and the stack's top \(StackWindow.topBytes / 1024) KiB): the outer frames are missing; raise --max-stack-bytes"))
        } else if stop == .end, let last = unwound.last, !last.hasUnwindInfo, last.pc != 0 {
            // libunwind ends a frame-pointer walk quietly: say that it was not the real end of the stack.
            reason = "frame-pointer chain ended at a frame without unwind info"
        }
        return (frames, reason)
    }

    /// Whether an unwind of `thread` that failed ran out of its captured stack: its stack was cut at the capture
    /// limit and the unwind wanted a word of that stack's mapping that was not captured (a frame larger than the
    /// window whose caller is below the stack's captured top), or it stopped near the window's end.
    private func ranOutOfCapturedStack(_ thread: RawThread, last: UnwoundFrame?) -> Bool {
        guard thread.stackCapped, let start = thread.stackStart, let end = thread.stackEnd else { return false }
        if let missing = space.lastMissingRead, let stack = table.mapping(containing: start), stack.start <= missing, missing < stack.end {
            return true
        }
        return last.map { end &- $0.sp < 4096 } ?? false
    }

    /// One thread's frames from its registers, by whichever unwinder fits the capture's architecture.
    private func unwind(_ words: [UInt64], maxFrames: Int) -> (frames: [UnwoundFrame], stop: UnwindStop) {
        guard unwindsWithLibdw else { return space.unwind(registers: words, maxFrames: maxFrames) }
        guard let dwarfUnwinder else { return ([], .error(code: 3, message: "libdw's unwinder could not be started")) }
        return dwarfUnwinder.unwind(registers: words, maxFrames: maxFrames)
    }

    /// libunwind knows glibc's signal trampoline; an unwind that stops at another one (Go's runtime's) is
    /// continued here: the handler returned into code that calls rt_sigreturn with the stack pointer at the
    /// `ucontext_t`, whose saved registers are the interrupted frame's.
    ///
    /// A runtime that turns a fault into a call (Go's sigpanic) returns from its handler with the faulting
    /// pc pushed as a return address: an unwind ending on the pc and stack pointer of a fault the thread
    /// handled goes on from the registers saved at that fault, the frame being its interrupted one.
    private func continueThroughSignalReturns(_ unwound: inout [UnwoundFrame], _ stop: inout UnwindStop, budget: Int,
                                              architecture: Architecture, tid: Int32?) {
        for _ in 0..<8 {
            guard let last = unwound.last, unwound.count < budget, stop != .limit else { return }
            var restored: RegisterSet?
            var replacesLast = false
            if RegisterDecoder.isSignalReturn(space.read(last.pc, count: 9), architecture: architecture) {
                restored = RegisterDecoder.registers(fromUContext: space.read(last.sp, count: 456), architecture: architecture)
            } else if let tid, let fault = capture.handledFaults.first(where: { fault in
                guard fault.tid == tid, let saved = try? RegisterDecoder.decode(fault.registers, architecture: architecture) else { return false }
                return saved.pc == last.pc && saved.sp == last.sp
            }) {
                restored = try? RegisterDecoder.decode(fault.registers, architecture: architecture)
                replacesLast = true
            }
            guard let restored else { return }
            let words = RegisterDecoder.encode(restored).withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
            var (more, moreStop) = unwind(words, maxFrames: budget - unwound.count + (replacesLast ? 1 : 0))
            guard let first = more.first else { return }
            more[0] = UnwoundFrame(pc: first.pc, sp: first.sp, isSignalFrame: true, hasUnwindInfo: first.hasUnwindInfo)
            if replacesLast { unwound.removeLast() }
            unwound += more
            stop = moreStop
        }
    }

    /// Says once per image what was wrong with its unwind table: unusable (its frames' callers were found
    /// by frame pointers), or a bad .eh_frame_hdr whose .eh_frame was indexed instead.
    private mutating func noteTableProblem(at pc: UInt64, usable: Bool) {
        guard let image = table.image(containing: pc), !reportedTableProblems.contains(image.start),
              let problem = space.unwindTableProblem(at: pc) else { return }
        reportedTableProblems.insert(image.start)
        softErrors.append(SoftError(stage: "unwind", image: image.path, message: usable
            ? "unwind table: \(problem)"
            : "no usable unwind table: \(problem); its frames' callers were found by frame pointers"))
    }

    private func reseedFromReturnAddress(registers: RegisterSet, words: [UInt64]) -> [UInt64]? {
        let layout = registers.architecture.registerLayout
        guard let pcIndex = layout.kernelOrder.firstIndex(of: layout.pcName),
              let spIndex = layout.kernelOrder.firstIndex(of: layout.spName),
              pcIndex < words.count, spIndex < words.count else { return nil }
        var seeded = words
        switch registers.architecture {
        case .x86_64:
            guard let returnAddress = space.readWord(registers.sp),
                  table.mapping(containing: returnAddress)?.permissions.isExecutable == true else { return nil }
            seeded[pcIndex] = returnAddress
            seeded[spIndex] = registers.sp &+ 8
        case .aarch64:
            guard let lr = registers.lr, table.mapping(containing: lr)?.permissions.isExecutable == true else { return nil }
            seeded[pcIndex] = lr
        }
        return seeded
    }

    // MARK: Symbols

    /// Starts looking symbols up on `helper` while the stacks are unwound: the images the threads' pcs are in
    /// are reported and those pcs looked up, loading those images' symbol tables and the compilation units the
    /// frames' lookups need most (`SymbolizerWarmup`); `prepareLookups` takes the symbolizer back. Not for a
    /// capture libdw unwinds (one libdw user at a time), nor without symbols.
    public mutating func startWarmingSymbols(on helper: HelperThread) {
        guard symbolication != .none, !unwindsWithLibdw, warmup == nil, symbolizer == nil,
              let symbolizer = try? newSymbolizer() else { return }
        var images: [UInt64: SymbolizerWarmup.Image] = [:]
        // Each pc once, in the threads' order (the crashed thread's first): every one is looked up after anyway.
        var addresses: [UInt64] = [], seen: Set<UInt64> = []
        for thread in capture.threads {
            guard let registers = try? RegisterDecoder.decode(thread.registers, architecture: capture.architecture) else { continue }
            let pc = RegisterDecoder.stripPointerAuthentication(registers.pc, mask: capture.codeAddressMask)
            guard !seen.contains(pc), let image = table.image(containing: pc), let file = imageFiles[image.start] else { continue }
            if images[image.start] == nil {
                guard Self.isELF(file) else { continue }
                images[image.start] = SymbolizerWarmup.Image(start: image.start, name: image.path, fd: file.fd,
                                                             loadAddress: image.baseAddress ?? image.start)
            }
            addresses.append(pc)
            seen.insert(pc)
        }
        guard !images.isEmpty else { return }
        warmup = SymbolizerWarmup(symbolizer, images: images.values.sorted { $0.start < $1.start }, addresses: addresses,
                                  withSource: symbolication == .full, on: helper)
    }

    /// A libdw session with the capture's debug directories, and debuginfod when servers were given.
    private func newSymbolizer() throws(SystemError) -> Symbolizer {
        try Symbolizer(debugDirectories: capture.options.debugDirectories, useDebuginfod: !capture.options.debuginfodURLs.isEmpty)
    }

    /// Whether `file` starts as an ELF file does.
    private static func isELF(_ file: OwnedDescriptor) -> Bool {
        (try? file.read(at: 0, count: 4)) == [0x7f, 0x45, 0x4c, 0x46]
    }

    public mutating func prepareLookups(in images: [LoadedImage]) {
        guard symbolication != .none else { return }
        let symbolizer: Symbolizer
        // Images the warm-up reported, and libdw's reason when one could not be used.
        var reported: [UInt64: String?] = [:]
        if let warmup {
            (symbolizer, reported) = warmup.finish()
            self.warmup = nil
            symbolizer.beginAdding()
        } else {
            do {
                symbolizer = try newSymbolizer()
            } catch {
                softErrors.append(SoftError(stage: "symbols", message: "\(error)"))
                return
            }
        }
        var identities: [UInt64: RawImage] = [:]
        for image in capture.images { identities[image.start] = image }
        for image in images {
            let base = image.baseAddress ?? image.start
            var failure: String?
            if let earlier = reported[image.start] {
                failure = earlier
            } else if let file = imageFiles[image.start] {
                // A frame in a mapped file that is no ELF image (a JVM's CDS archive, JIT code in a file) has no
                // symbols to miss: nothing to say about it.
                guard Self.isELF(file) else { continue }
                failure = symbolizer.report(name: image.path, fd: file.fd, loadAddress: base)
            } else if copiedImages.contains(image.start), let rebuilt = rebuildFromMemory(image) {
                imageFiles[image.start] = rebuilt
                failure = symbolizer.report(name: image.path, fd: rebuilt.fd, loadAddress: base)
            } else if let text = identities[image.start]?.buildID, !text.isEmpty, let buildID = Hex.bytes(text) {
                failure = symbolizer.report(name: image.path, start: image.start, end: image.end, buildID: buildID)
            } else {
                failure = "no file and no build-id to find one by"
            }
            if let failure {
                softErrors.append(SoftError(stage: "symbols", image: image.path, message: failure))
            }
        }
        symbolizer.endReporting()
        self.symbolizer = symbolizer
    }

    public mutating func lookup(_ address: UInt64) -> SymbolLookup? {
        guard let symbolizer else { return nil }
        if Clock.monotonicNanoseconds() >= softDeadline {
            if !softErrors.contains(where: { $0.stage == "deadline" && $0.message.hasPrefix("processing deadline passed before symbols") }) {
                softErrors.append(SoftError(stage: "deadline", message: "processing deadline passed before symbols were looked up for every frame"))
            }
            return nil
        }
        return symbolizer.lookup(address, withSource: symbolication == .full)
    }

    /// An ELF file rebuilt from an image's bytes copied out of memory: each mapping at its file offset.
    /// Section headers that were not loaded are dropped, so libdw reads it by its program headers.
    private mutating func rebuildFromMemory(_ image: LoadedImage) -> OwnedDescriptor? {
        let mappings = image.mappings.filter { $0.permissions.isReadable && !$0.permissions.isWritable }
        let size = mappings.map { $0.offset &+ $0.size }.max() ?? 0
        guard size > 0, size <= 256 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        for mapping in mappings {
            let copied = space.read(mapping.start, count: Int(mapping.size))
            bytes.replaceSubrange(Int(mapping.offset)..<Int(mapping.offset) + copied.count, with: copied)
        }
        // e_shoff, e_shentsize, e_shnum (read in a closure: no reader holds the bytes while they change below).
        let sections: (offset: UInt64, size: UInt16, count: UInt16)? = {
            let reader = ByteReader(bytes)
            guard let offset = reader.u64(40), let size = reader.u16(58), let count = reader.u16(60) else { return nil }
            return (offset, size, count)
        }()
        guard bytes.count >= 64, bytes.starts(with: [0x7f, 0x45, 0x4c, 0x46]), let sections else { return nil }
        if sections.offset > UInt64(bytes.count) || UInt64(sections.size) * UInt64(sections.count) > UInt64(bytes.count) - sections.offset {
            for index in 40..<48 { bytes[index] = 0 }   // e_shoff
            for index in 60..<64 { bytes[index] = 0 }   // e_shnum, e_shstrndx
        }
        do {
            let file = try MemoryFile.create(name: "crashwatch-image")
            try file.write(bytes)
            return file
        } catch {
            softErrors.append(SoftError(stage: "symbols", image: image.path, message: "cannot rebuild the image from memory: \(error)"))
            return nil
        }
    }
}

/// The device column of a maps line (`fd:01`, hex major:minor).
struct MapsDevice {
    let major: UInt64
    let minor: UInt64

    init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let major = UInt64(parts[0], radix: 16), let minor = UInt64(parts[1], radix: 16) else { return nil }
        self.major = major
        self.minor = minor
    }

    /// Whether `st_dev` names this device (glibc's makedev encoding).
    func matches(_ device: UInt64) -> Bool {
        let major = ((device >> 32) & 0xffff_f000) | ((device >> 8) & 0x0000_0fff)
        let minor = ((device >> 12) & 0xffff_ff00) | (device & 0x0000_00ff)
        return major == self.major && minor == self.minor
    }
}
