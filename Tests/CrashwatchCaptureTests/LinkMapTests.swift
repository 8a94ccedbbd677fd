// LinkMapTests.swift — naming a core's mappings from the dynamic linker's list when it has no NT_FILE, on
// memory made to order around a real executable: objects found and laid out from their files, and a list
// that loops, never ends or names nothing readable followed only as far as it is sound.
@testable import CrashwatchCapture
import CrashwatchSymbols
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct LinkMapTests {
    static let libc = "/lib/x86_64-linux-gnu/libc.so.6"

    /// Memory as a core holds it: byte regions by address.
    struct Memory {
        var regions: [UInt64: [UInt8]] = [:]

        mutating func put(_ address: UInt64, words: [UInt64]) {
            regions[address] = words.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) }
        }

        func read(_ address: UInt64, _ count: Int) -> [UInt8] {
            for (start, bytes) in regions where address >= start && address - start < UInt64(bytes.count) {
                let from = Int(address - start)
                return Array(bytes[from..<min(from + count, bytes.count)])
            }
            return []
        }
    }

    /// An executable (the null_deref fixture), where it is loaded, and memory holding its dynamic section with
    /// DT_DEBUG pointing at an r_debug whose list starts at `firstEntry`.
    static func process(firstEntry: UInt64) throws -> (OwnedDescriptor, [UInt8], Memory, UInt64) {
        let executable = try UntrustedFile.open(Paths.fixture("null_deref"))
        let header = try #require(LinkMap.programHeaders(of: executable))
        let phdr = try #require(header.programHeaders.first { $0.type == ProgramHeader.programHeaderType })
        let dynamic = try #require(header.programHeaders.first { $0.type == ProgramHeader.dynamicType })
        let bias: UInt64 = 0x5555_0000_0000
        var memory = Memory()
        memory.put(bias + dynamic.vaddr, words: [1, 0x10, 21, 0x7000_0000, 0, 0])
        memory.put(0x7000_0000, words: [1, firstEntry, 0, 0])
        let auxv = CoreBuilder.words([3, bias + phdr.vaddr, 0, 0])
        return (executable, auxv, memory, bias)
    }

    @Test("the executable and each listed object are laid out from their files; a loop in the list is cut")
    func loopingList() throws {
        var (executable, auxv, memory, bias) = try Self.process(firstEntry: 0x7000_1000)
        // main program (no name) -> libc -> an object whose name never ends -> one whose name climbs out of
        // the sysroot -> back to libc.
        memory.put(0x7000_1000, words: [bias, 0x7000_2000, 0, 0x7000_1100, 0])
        memory.put(0x7000_1100, words: [0x7f00_0000_0000, 0x7000_3000, 0, 0x7000_1200, 0x7000_1000])
        memory.put(0x7000_1200, words: [0x7f10_0000_0000, 0x7000_4000, 0, 0x7000_1300, 0x7000_1100])
        memory.put(0x7000_1300, words: [0x7f20_0000_0000, 0x7000_6000, 0, 0x7000_1100, 0x7000_1200])
        memory.regions[0x7000_2000] = [0]
        memory.regions[0x7000_3000] = Array(Self.libc.utf8) + [0]
        memory.regions[0x7000_4000] = [UInt8](repeating: UInt8(ascii: "a"), count: 5000)
        memory.regions[0x7000_6000] = Array("/usr/lib/../../etc/shadow".utf8) + [0]
        var opened: [String] = []
        let (mappings, problems) = LinkMap.mappings(auxv: auxv, executable: executable, executablePath: "/srv/app",
                                                    read: memory.read, open: { path in
                                                        opened.append(path)
                                                        return try? UntrustedFile.open(path)
                                                    })
        #expect(opened == [Self.libc])
        #expect(problems.contains { $0.contains("loops") }, "\(problems)")
        #expect(problems.contains { $0.contains("'..'") }, "\(problems) \(mappings.map(\.path))")
        let executableLoads = try #require(LinkMap.programHeaders(of: executable)).programHeaders.filter { $0.type == ProgramHeader.loadType }
        #expect(mappings.filter { $0.path == "/srv/app" }.count == executableLoads.count)
        #expect(mappings.filter { $0.path == "/srv/app" }.allSatisfy { $0.start >= bias && $0.start % 4096 == 0 })
        let libcMappings = mappings.filter { $0.path == Self.libc }
        #expect(!libcMappings.isEmpty && libcMappings.allSatisfy { $0.start >= 0x7f00_0000_0000 && $0.end <= 0x7f00_1000_0000 })
        #expect(libcMappings.first?.offset == 0)
    }

    @Test("a list longer than any process's is followed only as far as the cap")
    func endlessList() throws {
        var (executable, auxv, memory, _) = try Self.process(firstEntry: 0x6000_0000)
        // 10,000 entries, each naming nothing, each pointing at the next.
        let count = 10_000
        var words: [UInt64] = []
        for index in 0..<count {
            let next: UInt64 = index + 1 < count ? 0x6000_0000 + UInt64(index + 1) * 40 : 0
            words += [0, 0, 0, next, 0]
        }
        memory.put(0x6000_0000, words: words)
        var opens = 0
        let (_, problems) = LinkMap.mappings(auxv: auxv, executable: executable, executablePath: "/srv/app",
                                             read: memory.read, open: { _ in opens += 1; return nil })
        #expect(opens == 0)
        #expect(problems.contains { $0.contains("longer than \(LinkMap.maximumObjects)") }, "\(problems)")
    }

    @Test("without DT_DEBUG's target in the dump, only the executable is named, with the reason")
    func missingDebug() throws {
        var (executable, auxv, memory, _) = try Self.process(firstEntry: 0x7000_1000)
        memory.regions[0x7000_0000] = nil
        let (mappings, problems) = LinkMap.mappings(auxv: auxv, executable: executable, executablePath: "/srv/app",
                                                    read: memory.read, open: { _ in nil })
        #expect(!mappings.isEmpty && mappings.allSatisfy { $0.path == "/srv/app" })
        #expect(problems == ["r_debug at 0x70000000 is not in the core dump"])
    }
}
