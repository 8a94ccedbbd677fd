// CoreFileTests.swift — the core dump reader on cores made to order: what each note becomes in the capture,
// what of the memory is kept and how it reads back from the capture file, and damaged or foreign files
// refused with a message rather than read out of bounds.
@testable import CrashwatchCapture
import CrashwatchModel
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

/// Builds a little-endian ELF64 core: program headers for the given segments, one PT_NOTE of `notes`.
struct CoreBuilder {
    var machine: UInt16 = 62
    var type: UInt16 = 4
    var loads: [(address: UInt64, bytes: [UInt8], flags: UInt32)] = []
    var notes: [(name: String, type: UInt32, descriptor: [UInt8])] = []

    static func words(_ values: [UInt64]) -> [UInt8] { values.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) } }

    func bytes() -> [UInt8] {
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4) }
        var noteBytes: [UInt8] = []
        for note in notes {
            let name = Array(note.name.utf8) + [0]
            noteBytes += le(UInt32(name.count)) + le(UInt32(note.descriptor.count)) + le(note.type)
            noteBytes += padded(name) + padded(note.descriptor)
        }
        let headerCount = loads.count + 1
        var offset = 64 + 56 * headerCount
        var headers: [UInt8] = [], data: [UInt8] = []
        headers += le(UInt32(4)) + le(UInt32(0)) + le(UInt64(offset)) + le(UInt64(0)) + le(UInt64(0))
            + le(UInt64(noteBytes.count)) + le(UInt64(0)) + le(UInt64(4))
        data += noteBytes
        offset += noteBytes.count
        for load in loads {
            headers += le(UInt32(1)) + le(load.flags) + le(UInt64(offset)) + le(load.address) + le(UInt64(0))
                + le(UInt64(load.bytes.count)) + le(UInt64(load.bytes.count)) + le(UInt64(4096))
            data += load.bytes
            offset += load.bytes.count
        }
        var header: [UInt8] = [0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 8)
        header += le(type) + le(machine) + le(UInt32(1)) + le(UInt64(0)) + le(UInt64(64)) + le(UInt64(0))
        header += le(UInt32(0)) + le(UInt16(64)) + le(UInt16(56)) + le(UInt16(headerCount)) + le(UInt16(0))
        header += le(UInt16(0)) + le(UInt16(0))
        return header + headers + data
    }

    func read(options: CaptureOptions = CaptureOptions(crashwatchVersion: "test")) throws -> StreamedCore {
        try Self.read(bytes(), options: options)
    }

    /// `bytes` read as a core, streamed from a file as `analyze-core` reads it.
    static func read(_ bytes: [UInt8], options: CaptureOptions = CaptureOptions(crashwatchVersion: "test")) throws -> StreamedCore {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cw-core-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try read(file: try UntrustedFile.open(path), options: options)
    }

    /// The core in `file`, streamed from it (the descriptor stays open while it is read).
    static func read(file: OwnedDescriptor, options: CaptureOptions = CaptureOptions(crashwatchVersion: "test")) throws -> StreamedCore {
        try withExtendedLifetime(file) {
            try StreamedCore(reading: InputStream(fd: file.fd), options: options, timeNanoseconds: 1_000, deadlineNanoseconds: .max)
        }
    }
}

@Suite struct CoreFileReaderTests {
    /// An x86-64 NT_PRSTATUS: pr_pid at 32, pr_reg (27 words, rsp at slot 19, rip at 16) at 112.
    static func prstatus(tid: Int32, sp: UInt64, pc: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 336)
        withUnsafeBytes(of: tid.littleEndian) { bytes.replaceSubrange(32..<36, with: $0) }
        var registers = [UInt64](repeating: 0, count: 27)
        registers[19] = sp
        registers[16] = pc
        bytes.replaceSubrange(112..<(112 + 216), with: CoreBuilder.words(registers))
        return bytes
    }

    static var sample: CoreBuilder {
        var core = CoreBuilder()
        let stack: UInt64 = 0x7ffd_0000_0000
        core.loads = [(0x5555_0000_0000, [UInt8](repeating: 0, count: 4096), 5), (stack, [UInt8](repeating: 7, count: 8192), 6)]
        var siginfo = [UInt8](repeating: 0, count: 128)
        siginfo.replaceSubrange(0..<4, with: [11, 0, 0, 0])          // SIGSEGV
        siginfo.replaceSubrange(8..<12, with: [1, 0, 0, 0])          // SEGV_MAPERR
        siginfo.replaceSubrange(16..<24, with: CoreBuilder.words([0xdead]))
        var psinfo = [UInt8](repeating: 0, count: 136)
        psinfo.replaceSubrange(16..<20, with: [0xe8, 0x03, 0, 0])     // uid 1000
        psinfo.replaceSubrange(24..<28, with: [0x2a, 0x10, 0, 0])     // pid 4138
        psinfo.replaceSubrange(40..<44, with: Array("app\0".utf8))
        psinfo.replaceSubrange(56..<70, with: Array("/opt/app -v x\0".utf8))
        let file = CoreBuilder.words([1, 4096, 0x5555_0000_0000, 0x5555_0000_1000, 0]) + Array("/opt/app\0".utf8)
        core.notes = [("CORE", 1, prstatus(tid: 4139, sp: stack + 0x100, pc: 0x5555_0000_0010)),
                      ("CORE", 1, prstatus(tid: 4138, sp: stack + 0x1000, pc: 0x5555_0000_0020)),
                      ("CORE", 0x5349_4749, siginfo), ("CORE", 3, psinfo), ("CORE", 0x4649_4c45, file),
                      ("CORE", 6, CoreBuilder.words([3, 0x5555_0000_0040, 0, 0]))]
        return core
    }

    @Test func notesBecomeTheCapture() throws {
        let core = try Self.sample.read()
        let capture = core.capture
        #expect(capture.source == "core" && capture.architecture == .x86_64)
        #expect(capture.threads.map(\.tid) == [4139, 4138])
        #expect(capture.threads.map(\.crashed) == [true, false])
        #expect(capture.threads[0].stackStart == 0x7ffd_0000_0100 && capture.threads[0].stackEnd == 0x7ffd_0000_2000)
        #expect(capture.signal.signal.number == 11 && capture.signal.code.rawValue == 1 && capture.signal.faultAddress == 0xdead)
        #expect(capture.process.pid == 4138 && capture.process.uid == 1000 && capture.process.comm == "app")
        #expect(capture.process.commandLine == ["/opt/app", "-v", "x"])
        #expect(capture.process.executable == "/opt/app")
        #expect(capture.maps.contains("555500000000-555500001000 r-xp 0 00:00 1 /opt/app"))
        // One mapping per segment, the stack's whole though only its used part is kept.
        #expect(capture.maps.contains("7ffd00000000-7ffd00002000 rw-p 0 00:00 0"))
        // The file mapping's head, and the stack from 128 bytes (the red zone) below the lowest stack pointer.
        #expect(core.regions.map(\.address) == [0x5555_0000_0000, 0x7ffd_0000_0100 - 128])
        #expect(capture.capturedBytes == 4096 + 0x2000 - 0x80)
        #expect(CoreContents.read(core.regions, 0x7ffd_0000_1ffe, 8) == [7, 7])
        #expect(CoreContents.read(core.regions, 0x7ffd_0000_0000, 8).isEmpty, "below the stack kept")
        #expect(CoreContents.read(core.regions, 0x1000, 8).isEmpty)
    }

    /// The capture file the stream wrote, completed, reads back as the worker reads it: the same capture, the
    /// same regions with the same bytes; a program-header table claiming gigabytes is refused before anything
    /// is read.
    @Test func streamedCoreIsTheCaptureFile() throws {
        let core = try Self.sample.read()
        core.capture.coreFile = "/var/lib/crashwatch/cores/x.core.gz"
        let file = try RawCaptureFile(try core.captureFile(), limit: 1 << 30)
        #expect(file.capture.threads == core.capture.threads && file.capture.maps == core.capture.maps)
        #expect(file.capture.coreFile == "/var/lib/crashwatch/cores/x.core.gz", "what is set before the file is completed is in it")
        #expect(file.regions.map(\.address) == core.regions.map(\.address))
        #expect(file.regions.map { Array($0.bytes) } == core.regions.map { Array($0.bytes) })
        #expect(try core.captureFile().fd == core.captureFile().fd, "completed once")

        var bytes = Self.sample.bytes()
        bytes.replaceSubrange(54..<56, with: [0xff, 0xff])  // e_phentsize 65,535: a 4 GiB table
        #expect(throws: CoreFileError.self) { try CoreBuilder.read(bytes) }
    }

    @Test func redactedArguments() throws {
        var options = CaptureOptions(crashwatchVersion: "test")
        options.redactArguments = true
        #expect(try Self.sample.read(options: options).capture.process.commandLine == ["/opt/app", "<redacted>", "<redacted>"])
    }

    @Test func damagedAndForeignFilesAreRefused() throws {
        var notCore = Self.sample
        notCore.type = 2
        #expect(throws: CoreFileError.self) { try notCore.read() }
        var otherMachine = Self.sample
        otherMachine.machine = 40  // ARM (32-bit)
        #expect(throws: CoreFileError.self) { try otherMachine.read() }
        var noThreads = Self.sample
        noThreads.notes.removeAll { $0.type == 1 }
        #expect(throws: CoreFileError.self) { try noThreads.read() }
        // A short NT_PRSTATUS is skipped with a soft error; a NT_FILE claiming more entries than it holds is ignored.
        var damaged = Self.sample
        damaged.notes.append(("CORE", 1, [0, 1, 2]))
        damaged.notes[4].descriptor = CoreBuilder.words([UInt64.max / 2, 4096])
        let capture = try damaged.read().capture
        #expect(capture.threads.count == 2)
        #expect(capture.softErrors.contains { $0.message.contains("NT_PRSTATUS") })
        #expect(capture.process.executable == "")
        // Program headers past the end of the file.
        var bytes = Self.sample.bytes()
        bytes.replaceSubrange(32..<40, with: CoreBuilder.words([UInt64(bytes.count)]))
        #expect(throws: CoreFileError.self) { try CoreBuilder.read(bytes) }
        #expect(throws: CoreFileError.self) {
            try CoreBuilder.read(file: try UntrustedFile.open("/etc/hostname"))
        }
    }
}

/// A real aarch64 core: a fixture cross-built with PAC return addresses (`-mbranch-protection=pac-ret`), run
/// under qemu-aarch64, dumped by qemu. The reader and the ARM64 decoder on real data: the crashed thread's pc
/// is in `crash_here` and its link register, with any PAC bits stripped, returns into `middle`.
@Suite struct RealAArch64CoreTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/qemu-aarch64-static")
                    && FileManager.default.isExecutableFile(atPath: "/usr/bin/aarch64-linux-gnu-gcc")))
    func crashedThreadOfARealCore() throws {
        let temporary = try TemporaryDirectory("cw-a64")
        defer { temporary.remove() }
        let directory = temporary.path
        let source = Paths.source("null_deref.c")
        #expect(try Cores.run(["aarch64-linux-gnu-gcc", "-O0", "-g", "-mbranch-protection=pac-ret", "-o", "app", source], in: directory).succeeded)
        try Cores.run(["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", "./app"], in: directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        let coreName = try #require(names.first { $0.hasPrefix("qemu_app_") && $0.hasSuffix(".core") }, "no guest core: \(names)")
        let core = try CoreBuilder.read(file: try UntrustedFile.open("\(directory)/\(coreName)"))
        let capture = core.capture
        #expect(capture.architecture == .aarch64)
        #expect(capture.threads.count == 1 && capture.threads[0].crashed)
        #expect(capture.signal.signal.number == 11)

        // Where the program was loaded: AT_ENTRY less _start's offset (the symbols from the cross nm).
        let symbols = try Subprocess.run("/usr/bin/aarch64-linux-gnu-nm", ["\(directory)/app"]).stdout
        func offset(_ name: String) throws -> UInt64 {
            let line = try #require(symbols.split(separator: "\n").first { $0.hasSuffix(" \(name)") })
            return try #require(UInt64(line.split(separator: " ")[0], radix: 16))
        }
        let entry = try #require(CoreRecords.auxvValue(Hex.bytes(capture.auxv) ?? [], key: 9))
        let base = entry - (try offset("_start"))
        let registers = try RegisterDecoder.decode(capture.threads[0].registers, architecture: .aarch64)
        let pc = registers.pc - base
        let crashHere = try offset("crash_here"), middle = try offset("middle"), outer = try offset("outer")
        #expect(pc >= crashHere && pc < middle, "pc \(hex(pc)) not in crash_here")
        let mask = capture.pointerAuthenticationMask ?? 0xff7f_0000_0000_0000
        let lr = (try #require(registers["lr"]) & ~mask) - base
        #expect(lr >= middle && lr < outer, "lr \(hex(lr)) does not return into middle")
        let stack = try #require(capture.threads[0].stackStart)
        #expect(CoreContents.read(core.regions, stack, 8).count == 8, "the crashed thread's stack is in the dump")
    }
}
