// CoreFuzzTests.swift — the core reader against hostile cores: a real small core (the null_deref fixture's,
// dumped by this kernel) mutated the ways an attacker would (truncated, sizes, offsets and counts flipped to
// overflowing values, note headers lying, notes by the hundred thousand), with a fixed seed. Every mutation
// must end in a capture or a CoreFileError — never a trap — within time, with what is kept bounded: the
// memory kept within the memory limit, the threads within the cap, the minimal report within the report
// limit, and the capture file reading back as the worker reads it. (The same cores through the CLI: IntegrationTests/HostileCoreTests.swift.)
@testable import CrashwatchCapture
import CrashwatchModel
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

/// Mutations of a core dump's bytes, as an attacker would make them.
enum CoreMutator {
    static func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }
    static func put<T: FixedWidthInteger>(_ value: T, _ bytes: inout [UInt8], _ at: Int) {
        let raw = withUnsafeBytes(of: value.littleEndian, Array.init)
        guard at >= 0, at + raw.count <= bytes.count else { return }
        bytes.replaceSubrange(at..<(at + raw.count), with: raw)
    }

    /// Values that break naive arithmetic: zero, the top, just below it, the sign bit, the file's size.
    static func extreme(_ random: inout SeededGenerator, fileSize: Int) -> UInt64 {
        let choices: [UInt64] = [0, 1, .max, .max - 0xfff, .max - UInt64(fileSize), 1 << 63, UInt64(fileSize),
                                 UInt64(fileSize) + 1, 0xffff_ffff, 1 << 32, UInt64.random(in: 0...(.max), using: &random)]
        return choices[Int.random(in: 0..<choices.count, using: &random)]
    }

    /// The offset of the first note segment's bytes and its size, from the program headers.
    static func noteSegment(_ core: [UInt8]) -> (offset: Int, size: Int)? {
        let phoff = Int(u64(core, 32)), count = u16(core, 56)
        for index in 0..<count where phoff + index * 56 + 56 <= core.count {
            let at = phoff + index * 56
            if core[at] == 4 { return (Int(u64(core, at + 8)), Int(u64(core, at + 32))) }
        }
        return nil
    }

    /// One mutated copy of `core`.
    static func mutate(_ core: [UInt8], _ random: inout SeededGenerator) -> (what: String, bytes: [UInt8]) {
        var bytes = core
        let phoff = Int(u64(core, 32)), count = u16(core, 56)
        let header = phoff + Int.random(in: 0..<count, using: &random) * 56
        // Many notes (case 5) cost the most to read: one mutation in sixteen.
        switch [0, 1, 1, 2, 3, 3, 4, 5, 6, 6, 7, 0, 1, 3, 6, 7][Int.random(in: 0..<16, using: &random)] {
        case 0:
            let length = Int.random(in: 0..<core.count, using: &random)
            return ("truncated to \(length) bytes", Array(core.prefix(length)))
        case 1:
            // p_offset, p_vaddr, p_filesz or p_memsz of one program header.
            let field = [8, 16, 32, 40][Int.random(in: 0..<4, using: &random)]
            let value = extreme(&random, fileSize: core.count)
            put(value, &bytes, header + field)
            return ("program header at \(header), field \(field) = 0x\(String(value, radix: 16))", bytes)
        case 2:
            // e_phoff, e_phentsize or e_phnum.
            let (field, value): (Int, UInt64) = [(32, extreme(&random, fileSize: core.count)),
                                                 (54, UInt64.random(in: 0...0xffff, using: &random)),
                                                 (56, UInt64.random(in: 0...0xffff, using: &random))][Int.random(in: 0..<3, using: &random)]
            if field == 32 { put(value, &bytes, field) } else { put(UInt16(value), &bytes, field) }
            return ("ELF header field \(field) = 0x\(String(value, radix: 16))", bytes)
        case 3:
            // A note header's name or descriptor size, somewhere in the note segment.
            guard let notes = noteSegment(core), notes.size >= 12 else { return ("unchanged", bytes) }
            let at = notes.offset + Int.random(in: 0..<(notes.size / 4), using: &random) * 4
            let value = UInt32(truncatingIfNeeded: extreme(&random, fileSize: core.count))
            put(value, &bytes, at)
            return ("note word at \(at) = 0x\(String(value, radix: 16))", bytes)
        case 4:
            // Many program headers' sizes at once.
            for index in 0..<count where Bool.random(using: &random) {
                put(extreme(&random, fileSize: core.count), &bytes, phoff + index * 56 + [8, 32, 40][index % 3])
            }
            return ("several program headers", bytes)
        case 5:
            // Thousands of NT_PRSTATUS notes: the first one, repeated, inside a note segment grown to hold them.
            guard let notes = noteSegment(core) else { return ("unchanged", bytes) }
            let first = 12 + 8 + Int(core[notes.offset + 4]) + Int(core[notes.offset + 5]) << 8
            let copies = Int.random(in: 1_000...6_000, using: &random)
            let note = Array(core[notes.offset..<(notes.offset + first)])
            var grown = Array(core[..<(notes.offset + notes.size)])
            for _ in 0..<copies { grown += note }
            // The note segment now overlaps what followed it: the loads' offsets are shifted past it.
            let shift = (copies * note.count + 4095) & ~4095
            grown += [UInt8](repeating: 0, count: shift - copies * note.count) + core[(notes.offset + notes.size)...]
            for index in 0..<count {
                let at = phoff + index * 56
                if grown[at] == 4 { put(UInt64(notes.size + copies * note.count), &grown, at + 32) }
                else { put(u64(grown, at + 8) + UInt64(shift), &grown, at + 8) }
            }
            return ("\(copies) more NT_PRSTATUS notes", grown)
        case 6:
            // Random bytes over the headers and notes.
            let end = min(core.count, (noteSegment(core).map { $0.offset + $0.size }) ?? 4096)
            for _ in 0..<Int.random(in: 1...32, using: &random) {
                bytes[Int.random(in: 0..<end, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            return ("random bytes in the headers and notes", bytes)
        default:
            // NT_FILE's count or page size.
            guard let notes = noteSegment(core),
                  let file = core[notes.offset..<(notes.offset + notes.size)].firstRange(of: [0x45, 0x4c, 0x49, 0x46]) else {
                return ("unchanged", bytes)
            }
            let descriptor = file.lowerBound + 4 + 8  // type, then "CORE\0" padded to 8
            put(extreme(&random, fileSize: core.count), &bytes, descriptor + (Bool.random(using: &random) ? 0 : 8))
            return ("NT_FILE count or page size", bytes)
        }
    }
}

@Suite(.serialized) struct CoreFuzzTests {
    /// A real core of the null_deref fixture, dumped into a temporary directory; nil when cores go to a helper.
    static func realCore() throws -> [UInt8]? {
        guard Cores.skipReason == nil else { return nil }
        let directory = try TemporaryDirectory("cw-fuzz")
        defer { directory.remove() }
        try Cores.run([Paths.fixture("null_deref")], in: directory.path)
        guard let name = try FileManager.default.contentsOfDirectory(atPath: directory.path).first(where: { $0.hasPrefix("core") }) else {
            return nil
        }
        return Array(try Data(contentsOf: URL(fileURLWithPath: directory.join(name))))
    }

    /// Reads `bytes` as a core, streamed as the CLI reads it, and builds the minimal report; what was kept is
    /// checked against its bounds.
    static func read(_ bytes: [UInt8], what: String, limit: Int = 64 << 20) throws {
        var options = CaptureOptions(crashwatchVersion: "fuzz")
        options.captureBytes = limit
        let started = Clock.monotonicNanoseconds()
        do {
            try check(try CoreBuilder.read(bytes, options: options), what: what, limit: limit)
        } catch is CoreFileError {
        } catch let error as SystemError {
            Issue.record("\(what): a system error reading it: \(error)")
        }
        // A guard against a reader that loops, not a speed target (make bench measures speed): generous enough for
        // a machine two busy loops and a build share (one case takes tens of milliseconds idle).
        let seconds = Double(Clock.monotonicNanoseconds() - started) / 1e9
        #expect(seconds < 60, "\(what): \(seconds) s")
    }

    static func check(_ core: StreamedCore, what: String, limit: Int) throws {
        let capture = core.capture
        #expect(!capture.threads.isEmpty && capture.threads.count <= CoreNotes.maxThreads, "\(what): \(capture.threads.count) threads")
        #expect(capture.capturedBytes <= limit, "\(what): \(capture.capturedBytes) bytes of memory kept")
        let minimal = try ReportSizeLimit.encodeMinimal(capture, crashwatchVersion: "fuzz", limit: capture.options.reportByteLimit)
        #expect(minimal.count <= capture.options.reportByteLimit, "\(what): a minimal report of \(minimal.count) bytes")
        _ = try CrashReport.decode(minimal)
        let file = try RawCaptureFile(try core.captureFile(), limit: 1 << 30)
        // The file holds the regions in the core's file order (a hostile core may list segments out of address
        // order); the address space the worker builds from them sorts them.
        #expect(file.regions.map(\.address).sorted() == core.regions.map(\.address).sorted(), "\(what): the capture file's regions")
        #expect(file.capture.threads.count == capture.threads.count, "\(what): the capture file's threads")
    }

    /// The slow one (~21 s idle): `make unit` skips it by name (the Makefile's UNIT_SKIP), `make test` runs it.
    @Test("hundreds of mutated real cores each end in a capture or a clear error, never a trap, within bounds",
          .timeLimit(.minutes(5)))
    func mutatedCores() throws {
        let core = try #require(try Self.realCore(), "no core was dumped here (core_pattern pipes to a helper?); skip")
        var random = SeededGenerator(state: 24)
        var kinds: [String: Int] = [:]
        for _ in 0..<300 {
            let (what, bytes) = CoreMutator.mutate(core, &random)
            kinds[String(what.prefix(12)), default: 0] += 1
            try Self.read(bytes, what: what)
        }
        #expect(kinds.count >= 6, "the mutations were not varied: \(kinds)")
    }

    @Test("a PT_LOAD whose p_filesz is 0xffff… (a range with lower > upper) is left out with a soft error, not a trap")
    func fileSizeOverflow() throws {
        let core = try #require(try Self.realCore(), "no core was dumped here; skip")
        for field in [32, 40, 8, 16] {  // p_filesz, p_memsz, p_offset, p_vaddr
            var bytes = core
            let phoff = Int(CoreMutator.u64(core, 32))
            CoreMutator.put(UInt64.max, &bytes, phoff + 56 + field)  // the first PT_LOAD
            try Self.read(bytes, what: "field \(field) 0xffff…")
        }
        var bytes = core
        CoreMutator.put(UInt64.max, &bytes, Int(CoreMutator.u64(core, 32)) + 56 + 32)
        let capture = try CoreBuilder.read(bytes).capture
        #expect(capture.softErrors.contains { $0.message.hasPrefix("segment 1 was left out") }, "\(capture.softErrors)")
    }

    @Test("100,000 NT_PRSTATUS notes: threads capped at 4,096 (fewer for a small memory limit), the rest dropped and said")
    func hundredThousandNotes() throws {
        let core = try #require(try Self.realCore(), "no core was dumped here; skip")
        let notes = try #require(CoreMutator.noteSegment(core))
        let first = 12 + 8 + Int(core[notes.offset + 4]) + Int(core[notes.offset + 5]) << 8
        var bytes = Array(core[..<(notes.offset + notes.size)])
        let note = Array(core[notes.offset..<(notes.offset + first)])
        for _ in 0..<100_000 { bytes += note }
        // Only the notes: the memory is not needed to count threads (each stack pointer then in no segment).
        CoreMutator.put(UInt64(notes.size + 100_000 * note.count), &bytes, Int(CoreMutator.u64(core, 32)) + 32)
        for (limit, threads) in [(64 << 20, 4096), (8 << 20, 512)] {
            let started = Clock.monotonicNanoseconds()
            var options = CaptureOptions(crashwatchVersion: "t")
            options.captureBytes = limit
            let capture = try CoreBuilder.read(bytes, options: options).capture
            let problems = capture.softErrors.map(\.message)
            #expect(capture.threads.count == threads)
            #expect(problems.contains { $0.contains("NT_PRSTATUS notes beyond the first \(threads) were dropped") }, "\(problems)")
            #expect(problems.contains { $0.contains("more than 65536 notes") }, "\(problems)")
            let minimal = try ReportSizeLimit.encodeMinimal(capture, crashwatchVersion: "t", limit: 16 << 20)
            #expect(minimal.count <= 16 << 20)
            #expect(Double(Clock.monotonicNanoseconds() - started) / 1e9 < 20)
        }
    }
}
