// RawCaptureTests.swift — the pieces between capture and report that need no live process: the capture
// container (round trip and every kind of damage), the captured address space (sources, priorities,
// unwind tables refused before libunwind sees them), the minimal report, the report size limit, name
// caps and the maps device match.
@testable import CrashwatchCapture
import CrashwatchSymbols
import CrashwatchModel
import CrashwatchSystem
import Foundation
import Testing

/// A capture of one x86-64 thread whose pc is `pc` and sp `sp`, with a one-line maps.
func sampleCapture(pc: UInt64 = 0x40_1000, sp: UInt64 = 0x7ffc_0000_1000, maps: String? = nil) -> RawCapture {
    var registers = [UInt8](repeating: 0, count: Architecture.x86_64.prstatusSize)
    func put(_ value: UInt64, slot: Int) {
        for byte in 0..<8 { registers[slot * 8 + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte))) }
    }
    put(pc, slot: 16)  // rip
    put(sp, slot: 19)  // rsp
    let thread = RawThread(tid: 42, name: "main", crashed: true, registers: registers)
    let process = ProcessRecord(pid: 42, ppid: 1, executable: "/opt/app/bin/app", commandLine: ["/opt/app/bin/app"], cwd: "/",
                                uid: 1000, gid: 1000, startTime: nil, comm: "app", cgroup: nil, systemdUnit: nil,
                                systemdInvocationID: nil, app: nil, environment: [:])
    let host = HostRecord(hostname: "h", kernelRelease: "6.1", kernelVersion: "#1", osName: "Linux", osVersion: nil,
                          architecture: "x86_64", bootID: nil)
    return RawCapture(
        reportID: "3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13", pid: 42,
        signal: SignalInfo(signo: 11, code: 1, address: 0), originalFault: nil,
        timeNanoseconds: 1_700_000_000_000_000_000, startedNanoseconds: 0, holdDurationMs: 1.5, architecture: .x86_64,
        maps: maps ?? "00400000-00402000 r-xp 00000000 fd:01 1234 /opt/app/bin/app\n7ffc00000000-7ffc00002000 rw-p 00000000 00:00 0 [stack]\n",
        auxv: "", pointerAuthenticationMask: nil, threads: [thread],
        images: [RawImage(start: 0x40_0000)], process: process, host: host, ptraceScope: 1, seccompMode: 0,
        capturedBytes: 0, stackByteLimitPerThread: 1 << 20, captureByteLimit: 64 << 20, softErrors: [],
        options: ProcessingOptions(maxFrames: 256, symbolication: "full", debugDirectories: [], appRoots: [],
                                   debuginfodURLs: [], deadlineNanoseconds: 0, reportByteLimit: 16 << 20))
}

@Suite struct RawCaptureContainerTests {
    /// The capture written with `regions`, as the bytes of its file.
    private func written(_ capture: RawCapture, regions: [(UInt64, [UInt8])]) throws -> [UInt8] {
        let file = try MemoryFile.create(name: "test")
        var writer = RawCaptureWriter(file: file)
        for (address, bytes) in regions {
            try bytes.withUnsafeBytes { buffer in try writer.appendRegion(address: address, bytes: buffer) }
        }
        try writer.finish(capture)
        return try file.read(at: 0, count: Int(file.size() ?? 0))
    }

    private func reopened(_ bytes: [UInt8]) throws -> RawCaptureFile {
        let file = try MemoryFile.create(name: "test")
        try file.write(bytes)
        return try RawCaptureFile(file, limit: 1 << 30)
    }

    @Test("regions and metadata come back exactly, regions in place and in order")
    func roundTrip() throws {
        let capture = sampleCapture()
        let regions: [(UInt64, [UInt8])] = [(0x1000, Array(0..<13)), (0x7ffc_0000_0f80, [UInt8](repeating: 0xab, count: 4096)), (0x20, [7])]
        let file = try reopened(try written(capture, regions: regions))
        #expect(file.regions.count == 3)
        for (found, expected) in zip(file.regions, regions) {
            #expect(found.address == expected.0)
            #expect(Array(found.bytes) == expected.1)
        }
        #expect(file.capture.reportID == capture.reportID)
        #expect(file.capture.threads == capture.threads)
        #expect(file.capture.threads[0].registers == capture.threads[0].registers)
        #expect(file.capture.maps == capture.maps)
        #expect(file.capture.options == capture.options)
    }

    @Test("regions laid out in the file in place: after unaligned ones, only what the layout keeps, and plain appends after them")
    func regionsInPlace() throws {
        let capture = sampleCapture()
        let file = try MemoryFile.create(name: "test")
        var writer = RawCaptureWriter(file: file)
        // 13 bytes and padding: the in-place regions start at offset 32, inside the file's first page.
        try [UInt8](0..<13).withUnsafeBytes { try writer.appendRegion(address: 0x1000, bytes: $0) }
        let kept: [(UInt64, [UInt8])] = [(0x7ffc_0000_0f80, [UInt8](repeating: 0xab, count: 5000)), (0x20, [7, 8, 9])]
        try writer.appendRegions(upTo: 3 * 4096) { raw in
            var at = 0
            for (address, bytes) in kept + [(0x9000, [UInt8](repeating: 0xcd, count: 100))] {
                raw.storeBytes(of: address.littleEndian, toByteOffset: at, as: UInt64.self)
                raw.storeBytes(of: UInt64(bytes.count).littleEndian, toByteOffset: at + 8, as: UInt64.self)
                for (index, byte) in bytes.enumerated() { raw[at + 16 + index] = byte }
                at += 16 + bytes.count + (8 - bytes.count % 8) % 8
            }
            // The last region is laid out but not kept: its bytes go with the rest of the room.
            return at - (16 + 104)
        }
        #expect(writer.regionBytes == UInt64(32 + 16 + 5000 + 16 + 8))
        try [UInt8]([1, 2]).withUnsafeBytes { try writer.appendRegion(address: 0x5000, bytes: $0) }
        try writer.finish(capture)
        let reopened = try RawCaptureFile(file, limit: 1 << 30)
        let expected: [(UInt64, [UInt8])] = [(0x1000, Array(0..<13))] + kept + [(0x5000, [1, 2])]
        #expect(reopened.regions.count == expected.count)
        for (found, region) in zip(reopened.regions, expected) {
            #expect(found.address == region.0)
            #expect(Array(found.bytes) == region.1)
        }
        #expect(reopened.capture.reportID == capture.reportID)
    }

    @Test("a damaged capture is refused with a reason, never read out of bounds")
    func damage() throws {
        let good = try written(sampleCapture(), regions: [(0x1000, Array(0..<100))])
        // No trailer.
        #expect(throws: RawCaptureError.self) { try reopened(Array(good.dropLast(1))) }
        // Too short to hold one.
        #expect(throws: RawCaptureError.self) { try reopened(Array(good.prefix(10))) }
        // Metadata offset past the end.
        var offset = good
        offset.replaceSubrange(good.count - 24..<good.count - 16, with: [UInt8](repeating: 0xff, count: 8))
        #expect(throws: RawCaptureError.self) { try reopened(offset) }
        // A region claiming more bytes than there are.
        var region = good
        region.replaceSubrange(8..<16, with: [0xff, 0xff, 0, 0, 0, 0, 0, 0])
        #expect(throws: RawCaptureError.self) { try reopened(region) }
        // Metadata that is not JSON.
        var meta = good
        meta[good.count - 30] = 0
        #expect(throws: (any Error).self) { try reopened(meta) }
    }
}

@Suite struct CapturedAddressSpaceTests {
    @Test("captured bytes win over a file, a file over zeros; reads stop where nothing was captured")
    func sources() throws {
        let space = try CapturedAddressSpace()
        let file = try MemoryFile.create(name: "image")
        try file.write([UInt8](repeating: 0x11, count: 8192))
        let captured = [UInt8](repeating: 0x22, count: 16)
        captured.withUnsafeBytes { buffer in
            space.add(address: 0x1000, length: 0x2000, fd: file.fd, offset: 0)
            space.add(address: 0x1800, bytes: buffer)
            space.addZeros(address: 0x3000, length: 0x100)
            space.addZeros(address: 0x1000, length: 0x10)
            #expect(space.read(0x17f8, count: 16) == [UInt8](repeating: 0x11, count: 8) + [UInt8](repeating: 0x22, count: 8))
            #expect(space.read(0x1000, count: 4) == [0x11, 0x11, 0x11, 0x11])
            #expect(space.read(0x2ffe, count: 4) == [0x11, 0x11, 0, 0])
            #expect(space.read(0x30fe, count: 4) == [0, 0])
            #expect(space.read(0x5000, count: 8) == [])
            #expect(space.readWord(0x1800) == 0x2222_2222_2222_2222)
        }
    }

    /// An ELF image in memory at 0x10000: header, PT_LOAD and PT_GNU_EH_FRAME at 0x200 with `hdr` there.
    private func image(phnum: UInt16 = 2, hdr: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 0x400)
        bytes.replaceSubrange(0..<4, with: [0x7f, 0x45, 0x4c, 0x46])
        bytes[4] = 2; bytes[5] = 1; bytes[6] = 1
        func put16(_ value: UInt16, _ at: Int) { bytes[at] = UInt8(value & 0xff); bytes[at + 1] = UInt8(value >> 8) }
        func put32(_ value: UInt32, _ at: Int) { for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) } }
        func put64(_ value: UInt64, _ at: Int) { for i in 0..<8 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) } }
        put64(64, 32)    // e_phoff
        put16(56, 54)    // e_phentsize
        put16(phnum, 56) // e_phnum
        // PT_LOAD: offset 0, vaddr 0, size 0x400.
        put32(1, 64); put64(0, 72); put64(0, 80); put64(0x400, 96); put64(0x400, 104)
        // PT_GNU_EH_FRAME at 0x200, 0x40 bytes.
        put32(0x6474e550, 120); put64(0x200, 128); put64(0x200, 136); put64(0x40, 152); put64(0x40, 160)
        bytes.replaceSubrange(0x200..<0x200 + hdr.count, with: hdr)
        return bytes
    }

    private func problem(_ bytes: [UInt8]) throws -> String? {
        let space = try CapturedAddressSpace()
        return bytes.withUnsafeBytes { buffer in
            space.add(address: 0x10000, bytes: buffer)
            space.addImage(start: 0x10000, end: 0x10400, base: 0x10000)
            return space.unwindTableProblem(at: 0x10100)
        }
    }

    @Test("unwind tables: a well-formed .eh_frame_hdr is accepted; every malformed one is refused by name")
    func tables() throws {
        // version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4; 2 entries.
        let valid: [UInt8] = [1, 0x1b, 0x03, 0x3b, 0x10, 0, 0, 0, 2, 0, 0, 0] + [UInt8](repeating: 0, count: 16)
        #expect(try problem(image(hdr: valid)) == nil)
        var flipped = valid
        flipped[3] = 0x3a
        #expect(try problem(image(hdr: flipped))?.contains("table encoding") == true)
        var version = valid
        version[0] = 2
        #expect(try problem(image(hdr: version))?.contains("version") == true)
        var tooMany = valid
        tooMany[8] = 0xff; tooMany[9] = 0xff
        #expect(try problem(image(hdr: tooMany))?.contains("does not fit") == true)
        var badEncoding = valid
        badEncoding[2] = 0x0f
        #expect(try problem(image(hdr: badEncoding))?.contains("header is invalid") == true)
        #expect(try problem(image(phnum: 0xffff, hdr: valid))?.contains("program header table") == true)
        var notELF = image(hdr: valid)
        notELF[4] = 1
        #expect(try problem(notELF)?.contains("64-bit") == true)
    }
}

@Suite struct MinimalReportTests {
    @Test("the minimal report: registers, the pc as the only frame, its image with the captured build-id, processing minimal")
    func minimal() throws {
        var capture = sampleCapture()
        capture.images[0].buildID = "aabbcc"
        let report = ReportBuilder.minimal(capture, crashwatchVersion: "1.2.3", extraSoftErrors: [SoftError(stage: "processing", message: "why")],
                                           finishedNanoseconds: 5_000_000)
        #expect(report.id == capture.reportID)
        #expect(report.crashwatchVersion == "1.2.3")
        #expect(report.diagnostics.processing == .minimal)
        #expect(report.holdDurationMs == 1.5)
        #expect(report.captureDurationMs == 5)
        let thread = try #require(report.threads.first)
        #expect(thread.crashed && thread.tid == 42 && thread.name == "main")
        #expect(thread.frames.map(\.address) == [Address(0x40_1000)])
        #expect(thread.frames.first?.how == .context)
        #expect(thread.unwindStopReason == "not unwound: minimal report")
        #expect(thread.registers.first { $0.name == "rsp" }?.value == Address(0x7ffc_0000_1000))
        #expect(report.images.count == 1)
        #expect(report.images.first?.buildID == "aabbcc")
        #expect(report.images.first?.inApp == true)
        #expect(report.softErrors.map(\.message) == ["why"])
        #expect(report.diagnostics.captureErrors == 1)
    }

    @Test("a thread without registers keeps why")
    func missingRegisters() {
        var capture = sampleCapture()
        capture.threads.append(RawThread(tid: 43, name: "late", crashed: false, registers: [], missingReason: "did not stop"))
        let report = ReportBuilder.minimal(capture, crashwatchVersion: "1")
        #expect(report.threads.last?.frames.isEmpty == true)
        #expect(report.threads.last?.unwindStopReason == "did not stop")
    }
}

@Suite struct ReportLimitTests {
    @Test("over the size limit, other threads' frames go first, then the crashed thread's outermost; a soft error says so")
    func sizeLimit() throws {
        var report = ReportBuilder.minimal(sampleCapture(), crashwatchVersion: "1")
        let frames = (0..<500).map { FrameRecord(index: $0, address: Address(UInt64($0)), symbol: String(repeating: "x", count: 100), how: .cfi) }
        report.threads[0].frames = frames
        for tid in 100..<110 {
            report.threads.append(ThreadRecord(tid: Int32(tid), name: nil, crashed: false, registers: [], frames: frames, unwindStopReason: nil))
        }
        let full = try report.fingerprinted().encodedJSON().count
        let limit = full / 20
        let bytes = try ReportSizeLimit.encode(report, limit: limit)
        #expect(bytes.count <= limit + 1024)
        let trimmed = try CrashReport.decode(bytes)
        #expect(trimmed.threads.filter { !$0.crashed }.allSatisfy { $0.frames.isEmpty && $0.unwindStopReason == "frames dropped: report size limit" })
        let crashed = try #require(trimmed.crashedThread)
        #expect(!crashed.frames.isEmpty && crashed.frames.first?.index == 0)
        #expect(trimmed.softErrors.last?.message.contains("frames were dropped") == true)
        // Under the limit: untouched, but for the fingerprint computed as it is written (from all its frames).
        #expect(try ReportSizeLimit.encode(report, limit: full) == report.fingerprinted().encodedJSON())
        #expect(trimmed.fingerprint == Fingerprint.of(report), "computed before frames were dropped")
    }

    @Test("names are cut at 4 KiB on a character boundary, with a mark")
    func names() {
        #expect(capped("short") == "short")
        let long = String(repeating: "é", count: 5000)
        let cut = capped(long)
        #expect(cut.utf8.count <= maximumNameBytes)
        #expect(cut.hasSuffix(truncationMark))
        #expect(cut.dropLast(truncationMark.count).allSatisfy { $0 == "é" })
    }

    @Test("the maps device column matches st_dev as glibc encodes it")
    func device() {
        let device = MapsDevice("fd:01")
        #expect(device?.matches(0xfd01) == true)
        #expect(device?.matches(0xfd02) == false)
        #expect(MapsDevice("103:05")?.matches(UInt64(0x103) << 8 | 5) == true)
        #expect(MapsDevice("nonsense") == nil)
    }
}

/// A processor that unwinds by table: each thread's frames given by tid.
private struct ScriptedProcessor: FrameProcessor {
    var framesByThread: [Int32: [UnsymbolizedFrame]]
    mutating func frames(registers: RegisterSet, words: [UInt64], thread: RawThread?) -> (frames: [UnsymbolizedFrame], stop: String) {
        guard let thread else { return ([UnsymbolizedFrame(pc: registers.pc, sp: registers.sp, how: .context, isExact: true)], "end of stack") }
        return (framesByThread[thread.tid] ?? [], "end of stack")
    }
    mutating func prepareLookups(in images: [LoadedImage]) {}
    mutating func lookup(_ address: UInt64) -> SymbolLookup? { nil }
    func fileBuildID(ofImageAt start: UInt64) -> String? { nil }
    var softErrors: [SoftError] { [] }
}

@Suite struct OriginalFaultTests {
    /// x86-64 registers with `pc` and `sp`.
    private func registers(pc: UInt64, sp: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Architecture.x86_64.prstatusSize)
        for byte in 0..<8 {
            bytes[16 * 8 + byte] = UInt8(truncatingIfNeeded: pc >> (8 * UInt64(byte)))
            bytes[19 * 8 + byte] = UInt8(truncatingIfNeeded: sp >> (8 * UInt64(byte)))
        }
        return bytes
    }

    private func fault(tid: Int32, pc: UInt64, sp: UInt64, at time: Int64, code: Int32 = 1) -> RawFault {
        RawFault(tid: tid, signal: SignalInfo(signo: 11, code: code, address: 0), timeNanoseconds: time,
                 registers: registers(pc: pc, sp: sp))
    }

    @Test("the original fault is the oldest handled fault whose interrupted frame is still on a stack; a returned one is not")
    func rootOfTheActiveChain() {
        var capture = sampleCapture()
        let ms: Int64 = 1_000_000
        let root = fault(tid: 42, pc: 0x40_1100, sp: 0x7ffc_0000_1800, at: 1 * ms)
        let returned = fault(tid: 42, pc: 0x40_1200, sp: 0x7ffc_0000_1400, at: 2 * ms, code: 2)
        let nested = fault(tid: 42, pc: 0x40_1300, sp: 0x7ffc_0000_1200, at: 3 * ms)
        capture.handledFaults = [root, returned, nested]
        capture.originalFault = nested  // what the supervisor guessed: ignored once the stacks say otherwise
        let frames: [UnsymbolizedFrame] = [
            UnsymbolizedFrame(pc: 0x40_1000, sp: 0x7ffc_0000_1000, how: .context, isExact: true),
            UnsymbolizedFrame(pc: 0x40_1300, sp: 0x7ffc_0000_1200, how: .context, isExact: true),   // nested's
            // root's: found by CFI, marked as its fault's interrupted frame by processing (Go's sigpanic returns there)
            UnsymbolizedFrame(pc: 0x40_1100, sp: 0x7ffc_0000_1800, how: .context, isExact: true),
        ]
        var builder = ReportBuilder(capture: capture, processor: ScriptedProcessor(framesByThread: [42: frames]))
        let report = builder.build()
        #expect(report.signal.originalFault?.time == RFC3339.format(nanosecondsSinceEpoch: 1 * ms))
        #expect(report.signal.activeFaults.map(\.time) == [1, 3].map { RFC3339.format(nanosecondsSinceEpoch: $0 * ms) })
        #expect(report.signal.originalFault?.codeName == "SEGV_MAPERR")
        #expect(report.diagnostics.processing == .complete)
    }

    @Test("a handler that re-raised with kill(getpid()) landing on another thread: the faulting thread is the crashed one")
    func crashedThreadMoves() {
        var capture = sampleCapture()
        capture.signal = SignalInfo(signo: 11, code: 0, pid: 42, uid: 0)  // SI_USER from the process itself
        var worker = RawThread(tid: 43, name: "worker", crashed: false, registers: registers(pc: 0x40_1000, sp: 0x7ffc_0000_1000))
        worker.stackStart = nil
        capture.threads.append(worker)
        capture.handledFaults = [fault(tid: 43, pc: 0x40_1100, sp: 0x7ffc_0000_1800, at: 1)]
        let frames: [Int32: [UnsymbolizedFrame]] = [
            42: [UnsymbolizedFrame(pc: 0x40_1000, sp: 0x7ffc_0000_1000, how: .context, isExact: true)],
            43: [UnsymbolizedFrame(pc: 0x40_1050, sp: 0x7ffc_0000_1000, how: .context, isExact: true),
                 UnsymbolizedFrame(pc: 0x40_1100, sp: 0x7ffc_0000_1800, how: .context, isExact: true)],
        ]
        var builder = ReportBuilder(capture: capture, processor: ScriptedProcessor(framesByThread: frames))
        let report = builder.build()
        #expect(report.crashedThread?.tid == 43)
        #expect(report.threads.first?.tid == 43, "the crashed thread comes first")
        #expect(report.threads.filter(\.crashed).count == 1)
        #expect(report.signal.originalFault?.tid == 43)
    }

    @Test("without unwinding (the minimal report) the supervisor's view stands")
    func minimalKeepsTheGuess() {
        var capture = sampleCapture()
        let guess = fault(tid: 42, pc: 0x40_1100, sp: 0x7ffc_0000_1800, at: 5)
        capture.handledFaults = [guess]
        capture.originalFault = guess
        let report = ReportBuilder.minimal(capture, crashwatchVersion: "1")
        #expect(report.signal.originalFault?.time == RFC3339.format(nanosecondsSinceEpoch: 5))
        #expect(report.signal.activeFaults.isEmpty)
    }
}

@Suite struct CommandLineRedactionTests {
    @Test("--redact-args keeps only the program's name, whatever the shape of what follows")
    func shapes() {
        #expect(CommandLineRedaction.redacted(["/bin/app", "--password", "hunter2"]) == ["/bin/app", "<redacted>", "<redacted>"])
        #expect(CommandLineRedaction.redacted(["redis-server *:6379 --requirepass hunter2"]) == ["redis-server <redacted>"])
        #expect(CommandLineRedaction.redacted(["postgres:\tcheckpointer"]) == ["postgres: <redacted>"])
        #expect(CommandLineRedaction.redacted(["/bin/app"]) == ["/bin/app"])
        #expect(CommandLineRedaction.redacted([]) == [])
    }
}
