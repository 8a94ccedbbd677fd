// CaptureReader.swift — one live capture's reading state: the process's memory read through a thread that
// lives, every mapping checked against what may be read (never a page of a FUSE file), stacks planned and
// copied from the stack pointer within the per-thread and per-capture caps, images identified from their
// headers in memory, and the bytes and files of images whose file is gone. Every length read from the
// process is checked before use.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem
import FoundationEssentials

/// A stack to copy: which thread (its index among the capture's threads; -1 for a part that is not the
/// thread's window, such as its stack's top), where, and how much of how much.
struct StackPlan {
    let index: Int
    let tid: Int32
    let low: UInt64
    let length: UInt64
    let wanted: UInt64
}

/// Stacks copied into a capture file by a copy of the reader that planned them (`CaptureReader.startCopyingStacks`).
struct CopiedStacks: Sendable {
    /// Per plan copied: its thread's index, the range captured and whether a cap cut it.
    let copied: [(index: Int, range: Range<UInt64>, cut: Bool)]
    /// The bytes captured, and the planned bytes that are planned no more.
    let bytes: Int
    let planned: Int
    let softErrors: [SoftError]
    /// Where the file's regions end.
    let regionBytes: UInt64
}

/// One capture's reading state.
struct CaptureReader {
    let pid: Int32
    /// A live thread of the process (the crashed one) through which its memory and /proc files are read:
    /// the thread-group leader may have exited (pthread_exit) and a zombie leader reads as empty.
    let through: Int32
    /// Its memory (nil when it could not be opened: nothing is read then).
    let memory: ProcessMemory?
    let options: CaptureOptions
    let deadline: Int64
    let mapsText: String
    let auxv: [UInt8]
    let table: ImageTable
    var softErrors: [SoftError] = []
    var capturedBytes = 0
    /// Captured [start, end) ranges, so a stack shared by two records is copied once.
    var captured: [Range<UInt64>] = []
    /// The annotation tables the images' notes declare, in image order (`identifyImages`).
    var annotationRoots: [AnnotationRoot] = []
    /// A reusable read buffer: regions are copied through it into the capture file.
    var buffer = [UInt8](repeating: 0, count: 64 << 10)

    init(pid: Int32, through: Int32, options: CaptureOptions, deadline: Int64, maps: MapsReading, unreadable: UnreadableFiles) {
        self.pid = pid
        self.through = through
        memory = ProcessMemory(through: through)
        self.options = options
        self.deadline = deadline
        mapsText = maps.text
        auxv = maps.auxv
        table = maps.table
        softErrors = maps.softErrors
        self.unreadable = unreadable
        imageCandidates = maps.table.images.prefix(Self.maximumImages).filter { image in
            (image.kind == .file || image.kind == .memfd || image.kind == .vdso)
                && !image.path.hasPrefix("/dev/") && !image.path.hasPrefix("/SYSV")
        }
    }

    /// Mappings never read: pages of files on FUSE file systems (see `UnreadableFiles`).
    let unreadable: UnreadableFiles

    /// Whether `mapping` is no such page.
    func mayRead(_ mapping: MemoryMapping) -> Bool { !unreadable.contains(mapsDevice: mapping.device) }

    /// Whether none of `image`'s mappings is such a page.
    func mayRead(_ image: LoadedImage) -> Bool { image.mappings.allSatisfy(mayRead) }

    /// Whether `mapping` may be read; a soft error (in `stage`) naming it when not.
    mutating func mayRead(_ mapping: MemoryMapping, what: @autoclosure () -> String, stage: String = "images", tid: Int32? = nil) -> Bool {
        guard !mayRead(mapping) else { return true }
        softErrors.append(SoftError(stage: stage, tid: tid, image: mapping.path.isEmpty ? nil : mapping.path, message:
            "\(what()) not read: a file on a FUSE file system, whose server could stall the read for ever"))
        return false
    }

    var remainingBytes: Int { max(options.captureBytes - capturedBytes, 0) }

    // MARK: Stacks

    /// What to copy of the stacks of `threads` whose stack pointers are `stackPointers` (by index in `threads`):
    /// each thread's window, and beside a window cut short the stack's top, where the outer frames are (its
    /// index is -1).
    mutating func planStacks(of threads: [RawThread], stackPointers: [(index: Int, sp: UInt64)]) -> [StackPlan] {
        var plans: [StackPlan] = []
        for (index, sp) in stackPointers {
            guard let plan = planStack(near: sp, tid: threads[index].tid) else { continue }
            let window = StackPlan(index: index, tid: plan.tid, low: plan.low, length: plan.length, wanted: plan.wanted)
            plans.append(window)
            if let top = planStackTop(above: window) { plans.append(top) }
        }
        return plans
    }

    /// What to copy of the stack `sp` is in (`StackWindow`: from below the red zone up to the end of its
    /// mapping, or the next readable mapping above a guard page), at most the per-thread cap (reserved against
    /// the total cap now).
    mutating func planStack(near sp: UInt64, tid: Int32) -> StackPlan? {
        guard let mapping = stackMapping(near: sp) else {
            softErrors.append(SoftError(stage: "stack", tid: tid, message: "stack pointer \(hex(sp)) is not in readable memory"))
            return nil
        }
        guard mayRead(mapping, what: "the stack at \(hex(sp))", stage: "stack", tid: tid) else { return nil }
        let low = StackWindow.low(sp: sp, rangeStart: mapping.start, architecture: .host)
        if captured.contains(where: { $0.contains(low) }) { return nil }
        let wanted = mapping.end - low
        let allowed = UInt64(min(options.stackBytesPerThread, remainingBytes - plannedBytes))
        let length = min(wanted, allowed)
        if length == 0 {
            softErrors.append(SoftError(stage: "stack", tid: tid, message: "capture byte limit (\(options.captureBytes)) reached: stack not captured"))
            return nil
        }
        captured.append(low..<(low + length))
        plannedBytes += Int(length)
        return StackPlan(index: -1, tid: tid, low: low, length: length, wanted: wanted)
    }

    /// The first readable mapping that `StackWindow.holdsStack` of `sp`, found by bisection (a process with
    /// thousands of threads has thousands of stacks, each looked up): mappings are sorted and do not overlap,
    /// so none before the one starting at or below `sp` ends above it.
    private func stackMapping(near sp: UInt64) -> MemoryMapping? {
        let mappings = table.mappings
        var index = mappings.lastIndex(startingAtOrBelow: sp, start: { $0.start }) ?? mappings.startIndex
        while index < mappings.endIndex, mappings[index].start <= sp &+ StackWindow.guardReach {
            let mapping = mappings[index]
            if mapping.permissions.isReadable && StackWindow.holdsStack(mapping.start..<mapping.end, sp: sp) { return mapping }
            index += 1
        }
        return nil
    }

    /// The stack's top (`StackWindow.top`) beside the window `window`, when the window was cut short of the
    /// stack's end (reserved against the total cap now, like the window); nil when it was not, or nothing is left.
    mutating func planStackTop(above window: StackPlan) -> StackPlan? {
        let end = window.low + window.wanted
        guard let wanted = StackWindow.top(window: window.low..<(window.low + window.length), end: end) else { return nil }
        let length = min(end - wanted.lowerBound, UInt64(max(remainingBytes - plannedBytes, 0)))
        guard length > 0 else { return nil }
        let top = end - length
        captured.append(top..<end)
        plannedBytes += Int(length)
        return StackPlan(index: -1, tid: window.tid, low: top, length: length, wanted: length)
    }

    /// Copies planned stacks in batches — a read per stack, straight into the capture file (`appendRegions(upTo:)`:
    /// no buffer to fault in, no copy to write out) — falling back to a range at a time where a stack cannot be
    /// read whole. Returns, per plan copied, its thread's index,
    /// the range captured and whether a cap cut it.
    mutating func copyStacks(_ plans: [StackPlan], writer: inout RawCaptureWriter) -> [(index: Int, range: Range<UInt64>, cut: Bool)] {
        var results: [(index: Int, range: Range<UInt64>, cut: Bool)] = []
        var start = 0
        while start < plans.count {
            // A batch: up to 512 stacks and 8 MiB, each behind a 16-byte region header and padded to 8.
            var end = start, size = 0
            while end < plans.count, end - start < 512, size + 16 + Int(plans[end].length) + 8 <= Self.batchBytes || end == start {
                size += 16 + Int(plans[end].length) + 8
                end += 1
            }
            let batch = Array(plans[start..<end])
            start = end
            if batch.count == 1 && Int(batch[0].length) + 24 > Self.batchBytes {
                plannedBytes -= Int(batch[0].length)
                let got = copy(batch[0].low, length: batch[0].length, writer: &writer)
                if got > 0 { results.append((batch[0].index, batch[0].low..<(batch[0].low + got), batch[0].length < batch[0].wanted)) }
                continue
            }
            // Read straight into the capture file: the regions the batch's leading stacks fill whole are kept.
            var complete = 0
            do {
                try writer.appendRegions(upTo: size) { raw in
                    var ranges: [(address: UInt64, buffer: UnsafeMutableRawBufferPointer)] = []
                    var offsets: [Int] = []
                    var at = 0
                    for plan in batch {
                        offsets.append(at)
                        ranges.append((plan.low, UnsafeMutableRawBufferPointer(rebasing: raw[at + 16..<at + 16 + Int(plan.length)])))
                        at += 16 + Int(plan.length) + (8 - Int(plan.length) % 8) % 8
                    }
                    var left = memory?.read(ranges: ranges) ?? 0
                    for plan in batch where left >= Int(plan.length) {
                        left -= Int(plan.length)
                        complete += 1
                    }
                    for (number, plan) in batch.prefix(complete).enumerated() {
                        raw.storeBytes(of: plan.low.littleEndian, toByteOffset: offsets[number], as: UInt64.self)
                        raw.storeBytes(of: plan.length.littleEndian, toByteOffset: offsets[number] + 8, as: UInt64.self)
                    }
                    return complete < batch.count ? offsets[complete] : at
                }
                for plan in batch.prefix(complete) {
                    plannedBytes -= Int(plan.length)
                    capturedBytes += Int(plan.length)
                    results.append((plan.index, plan.low..<(plan.low + plan.length), plan.length < plan.wanted))
                }
            } catch {
                // Not mapped (or not grown): each stack is tried again below, written the plain way.
                complete = 0
                softErrors.append(SoftError(stage: "capture", message: "cannot write the capture file: \(error)"))
            }
            // The rest of the batch one range at a time: a stack that runs into unreadable memory keeps
            // what could be read.
            for plan in batch.dropFirst(complete) {
                plannedBytes -= Int(plan.length)
                let got = copy(plan.low, length: plan.length, writer: &writer)
                if got > 0 {
                    results.append((plan.index, plan.low..<(plan.low + got), plan.length < plan.wanted || got < plan.length))
                } else {
                    softErrors.append(SoftError(stage: "stack", tid: plan.tid, message: "stack at \(hex(plan.low)) is not readable"))
                }
            }
        }
        return results
    }

    /// Starts copying `plans` (planned by this reader) into `file`, from its start, on `helper` (at once without
    /// one), on a copy of this reader: the caller goes on with this one meanwhile; `take` brings the copy's
    /// counts and soft errors back.
    func startCopyingStacks(_ plans: [StackPlan], into file: OwnedDescriptor, on helper: HelperThread?) -> HelperComputation<CopiedStacks> {
        HelperComputation(on: helper) { [self] in copyStacks(plans, into: file) }
    }

    private func copyStacks(_ plans: [StackPlan], into file: OwnedDescriptor) -> CopiedStacks {
        var copy = self
        copy.softErrors = []
        var writer = RawCaptureWriter(file: file)
        let copied = copy.copyStacks(plans, writer: &writer)
        return CopiedStacks(copied: copied, bytes: copy.capturedBytes - capturedBytes, planned: plannedBytes - copy.plannedBytes,
                            softErrors: copy.softErrors, regionBytes: writer.regionBytes)
    }

    /// Takes back what a copy of this reader counted and ran into copying stacks (`startCopyingStacks`).
    mutating func take(_ stacks: CopiedStacks) {
        capturedBytes += stacks.bytes
        plannedBytes -= stacks.planned
        softErrors += stacks.softErrors
    }

    static let batchBytes = 8 << 20
    /// Stack bytes planned but not yet copied (reserved against the total cap).
    var plannedBytes = 0

    /// Copies the used part of the stack `sp` is in right away (a fault's own stack).
    @discardableResult
    mutating func captureStack(near sp: UInt64, tid: Int32, writer: inout RawCaptureWriter) -> (Range<UInt64>, Bool)? {
        guard let plan = planStack(near: sp, tid: tid) else { return nil }
        plannedBytes -= Int(plan.length)
        let low = plan.low, length = plan.length, wanted = plan.wanted
        let got = copy(low, length: length, writer: &writer)
        if got == 0 {
            softErrors.append(SoftError(stage: "stack", tid: tid, message: "stack at \(hex(low)) is not readable"))
            return nil
        }
        let range = low..<(low + got)
        return (range, length < wanted)
    }

    /// Copies [address, address + length) of the process into the capture; returns the bytes copied
    /// (fewer when memory ends early).
    mutating func copy(_ address: UInt64, length: UInt64, writer: inout RawCaptureWriter) -> UInt64 {
        var done: UInt64 = 0
        let chunk = UInt64(buffer.count - 24)
        while done < length {
            if Clock.monotonicNanoseconds() >= deadline {
                softErrors.append(SoftError(stage: "deadline", message: "capture deadline passed while copying memory at \(hex(address &+ done))"))
                break
            }
            let want = Int(min(chunk, length - done))
            var failed = false
            let got = buffer.withUnsafeMutableBytes { raw -> Int in
                // Read after a 16-byte gap for the region header, so the region goes out in one write.
                let got = memory?.read(address: address &+ done, into: UnsafeMutableRawBufferPointer(rebasing: raw[16..<16 + want])) ?? 0
                guard got > 0 else { return 0 }
                do {
                    try writer.appendRegion(address: address &+ done, inPlace: raw, count: got)
                } catch {
                    failed = true
                    return 0
                }
                return got
            }
            if failed {
                softErrors.append(SoftError(stage: "capture", message: "cannot write the capture file"))
                break
            }
            if got == 0 { break }
            done += UInt64(got)
            capturedBytes += got
            if got < want { break }
        }
        return done
    }

    // MARK: Images

    /// The images a capture identifies: file-backed, memfd and the vdso (shared anonymous memory, System V
    /// segments and device mappings are file-backed but never ELF images).
    let imageCandidates: [LoadedImage]

    /// Every image's identity (build-id, architecture, package) from the process's memory, one record per
    /// `imageCandidates` entry.
    mutating func identifyImages() -> [RawImage] {
        var records: [RawImage] = []
        // Headers and notes are nearly always in an image's first page: those of every image in one read.
        let firstPages = memory?.read(addresses: imageCandidates.filter(mayRead).compactMap(\.baseAddress),
                                      count: Self.pageSize) ?? [:]
        for image in imageCandidates {
            var record = RawImage(start: image.start)
            if let unreadableMapping = image.mappings.first(where: { !mayRead($0) }) {
                _ = mayRead(unreadableMapping, what: "the image's memory")
            } else if let base = image.baseAddress, let identity = identify(base: base, firstPage: firstPages[base]) {
                record.buildID = identity.buildID.map(Hex.string)
                record.architecture = identity.architecture
                record.package = identity.package
                noteAnnotationTables(identity, image: image.path)
                if identity.buildID == nil, image.kind != .vdso {
                    softErrors.append(SoftError(stage: "images", image: image.path, message: "no ELF build-id in the process's memory"))
                }
            } else if image.kind != .vdso, isELF(image, firstPages: firstPages) {
                // Mapped files that are no ELF image (locale archives, caches, data files) have no build-id to miss.
                softErrors.append(SoftError(stage: "images", image: image.path, message: "no ELF build-id in the process's memory"))
            }
            records.append(record)
        }
        if table.images.count > Self.maximumImages {
            softErrors.append(SoftError(stage: "images", message: "\(table.images.count) images mapped; only the first \(Self.maximumImages) were identified"))
        }
        return records
    }

    /// Keeps the annotation tables `identity` declares as roots of the copy (`copyAnnotationTables`), at most
    /// twice the table cap from all images; a soft error for the notes past them or not read.
    private mutating func noteAnnotationTables(_ identity: ImageIdentity, image: String) {
        let room = max(2 * AnnotationFormat.maximumTables - annotationRoots.count, 0)
        annotationRoots += identity.annotationTables.prefix(room).map { AnnotationRoot(address: $0, image: image) }
        let skipped = identity.annotationNotes - min(identity.annotationTables.count, room)
        if skipped > 0 {
            softErrors.append(SoftError(stage: "annotations", image: image, message:
                "\(identity.annotationNotes) table notes: \(skipped) not followed (malformed, or past the cap of \(AnnotationFormat.maximumTables) tables)"))
        }
        if identity.notesCut && identity.annotationNotes > 0 {
            softErrors.append(SoftError(stage: "annotations", image: image, message:
                "a note segment is larger than \(ImageIdentity.noteByteLimit) bytes: the notes past its first \(ImageIdentity.noteByteLimit) were not read"))
        }
    }

    /// For the images of `records` (from `identifyImages`) whose file is gone or is no file (deleted, memfd,
    /// vdso): their non-writable bytes, and for deleted and memfd images the file itself through /proc.
    /// Returns the files opened, which `RawImage.descriptor` indexes.
    mutating func copyImages(_ records: inout [RawImage], writer: inout RawCaptureWriter) -> [OwnedDescriptor] {
        var files: [OwnedDescriptor] = []
        let executable = ProcFS.readLink("/proc/\(through)/exe").map { InAppRule.deletedSuffixRemoved($0).path }
        for (index, image) in imageCandidates.enumerated() where index < records.count {
            guard mayRead(image) else { continue }
            let gone = image.isDeleted || image.kind == .memfd
            if gone || image.kind == .vdso {
                records[index].copied = copyImage(image, writer: &writer)
            }
            if gone, files.count < Self.maximumImageFiles, let file = openMappedFile(image, isExecutable: image.path == executable) {
                records[index].descriptor = files.count
                files.append(file)
            }
        }
        return files
    }

    static let maximumImages = 8192
    static let maximumImageFiles = 64

    /// Copies an image's readable, non-writable mappings (headers, code, unwind tables, dynamic symbols).
    mutating func copyImage(_ image: LoadedImage, writer: inout RawCaptureWriter) -> Bool {
        var copiedAll = true
        for mapping in image.mappings where mapping.permissions.isReadable && !mapping.permissions.isWritable {
            let length = min(mapping.size, UInt64(remainingBytes))
            if length < mapping.size {
                softErrors.append(SoftError(stage: "images", image: image.path, message: "capture byte limit (\(options.captureBytes)) reached: image bytes not copied"))
                copiedAll = false
            }
            if length == 0 { break }
            if copy(mapping.start, length: length, writer: &writer) < length { copiedAll = false }
        }
        return copiedAll
    }

    /// The file behind a deleted or memfd image, through the kernel's own link to the mapped inode:
    /// /proc/PID/exe for the executable, /proc/PID/map_files for the rest (root only). Never blocks.
    func openMappedFile(_ image: LoadedImage, isExecutable: Bool) -> OwnedDescriptor? {
        var paths: [String] = []
        if isExecutable { paths.append("/proc/\(through)/exe") }
        if let first = image.mappings.first {
            paths.append("/proc/\(through)/map_files/\(String(first.start, radix: 16))-\(String(first.end, radix: 16))")
        }
        for path in paths {
            if let file = try? UntrustedFile.open(path, followLinks: true) { return file }
        }
        return nil
    }

    /// Build-id, architecture and package note from the ELF header and notes in the process's memory.
    /// Every field read is checked: a corrupt header yields nil, never a huge read or a trap.
    /// `firstPage`, when given, is the image's first `pageSize` bytes, read already: what lies in it is not read again.
    func identify(base: UInt64, firstPage: [UInt8]?) -> ImageIdentity? {
        ImageIdentity.read(base: base) { address, count in
            if let page = firstPage, address >= base, count <= page.count, address - base <= UInt64(page.count - count) {
                let offset = Int(address - base)
                return Array(page[offset..<offset + count])
            }
            return memory?.read(address: address, count: count) ?? []
        }
    }

    /// Whether `image` begins with an ELF header in memory (without a mapping of its file's start, no loader
    /// mapped it: it is no image).
    func isELF(_ image: LoadedImage, firstPages: [UInt64: [UInt8]]) -> Bool {
        guard let base = image.baseAddress else { return false }
        return ImageIdentity.isELF(base: base) { address, count in
            if let page = firstPages[base], address == base, count <= page.count { return Array(page.prefix(count)) }
            return memory?.read(address: address, count: count) ?? []
        }
    }

    static let pageSize = 4096

    /// aarch64 only: the code-pointer PAC mask, when the thread uses pointer authentication.
    func pointerAuthenticationMask(tid: Int32) -> UInt64? {
        guard Architecture.host == .aarch64,
              let bytes = try? Ptrace.registerSet(tid, noteType: Int32(PointerAuthenticationMask.noteType), capacity: 16),
              let mask = try? RegisterDecoder.decodePointerAuthenticationMask(bytes) else { return nil }
        return mask.instructionMask
    }

    static let maximumArguments = 4096
}
