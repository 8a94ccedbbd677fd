// MemoryMapsTests.swift — `/proc/PID/maps` parsing, grouping into images and address lookup, over a
// trimmed copy of this machine's real maps plus the awkward cases: memfd, deleted files, spaces in
// paths, " (deleted)" in the middle of a path, and malformed lines.
import CrashwatchCapture
import CrashwatchSymbols
import CrashwatchSystem
import Foundation
import Testing

/// Real `cat /proc/self/maps` output from a Debian 12 x86-64 machine, trimmed, with added lines for a
/// deleted executable, a memfd, a path with spaces, a path with " (deleted)" inside, and two malformed lines.
private let mapsFixture = """
55d6b4a00000-55d6b4a02000 r--p 00000000 fe:00 524301                     /tmp/x/deleted_exe (deleted)
55d6b4a02000-55d6b4a03000 r-xp 00002000 fe:00 524301                     /tmp/x/deleted_exe (deleted)
55d6b4a03000-55d6b4a04000 rw-p 00003000 fe:00 524301                     /tmp/x/deleted_exe (deleted)
560c043cc000-560c043ce000 r--p 00000000 fe:00 253911                     /usr/bin/cat
560c043ce000-560c043d3000 r-xp 00002000 fe:00 253911                     /usr/bin/cat
560c043d3000-560c043d6000 r--p 00007000 fe:00 253911                     /usr/bin/cat
560c043d6000-560c043d7000 r--p 00009000 fe:00 253911                     /usr/bin/cat
560c043d7000-560c043d8000 rw-p 0000a000 fe:00 253911                     /usr/bin/cat
560c2dd55000-560c2dd76000 rw-p 00000000 00:00 0                          [heap]
7ff03f400000-7ff03f401000 r--p 00000000 00:01 1035                       /memfd:crashwatch-memfd (deleted)
7ff03f401000-7ff03f402000 r-xp 00001000 00:01 1035                       /memfd:crashwatch-memfd (deleted)
7ff03f402000-7ff03f403000 rw-p 00002000 00:01 1035                       /memfd:crashwatch-memfd (deleted)
7ff03f500000-7ff03f501000 r--p 00000000 fe:00 400001                     /opt/My App/lib/libplug in.so
7ff03f501000-7ff03f502000 r-xp 00001000 fe:00 400001                     /opt/My App/lib/libplug in.so
7ff03f580000-7ff03f581000 r--p 00000000 fe:00 400002                     /srv/data (deleted) copy/blob.bin
this line is not a mapping
7ff03f590000-7ff03f591000 r--p 00000000 fe:00                            /missing/inode
7ff03f5a8000-7ff03f5ca000 rw-p 00000000 00:00 0 
7ff03f5ca000-7ff03f621000 r--p 00000000 fe:00 323409                     /usr/lib/locale/C.utf8/LC_CTYPE
7ff03f62a000-7ff03f62d000 rw-p 00000000 00:00 0 
7ff03f62d000-7ff03f653000 r--p 00000000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ff03f653000-7ff03f7a9000 r-xp 00026000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ff03f7a9000-7ff03f7fc000 r--p 0017c000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ff03f7fc000-7ff03f800000 r--p 001cf000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ff03f800000-7ff03f802000 rw-p 001d3000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ff03f802000-7ff03f80f000 rw-p 00000000 00:00 0 
7ff03f810000-7ff03f817000 r--s 00000000 fe:00 332619                     /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache
7ff03f81a000-7ff03f81e000 r--p 00000000 00:00 0                          [vvar]
7ff03f81e000-7ff03f820000 r--p 00000000 00:00 0                          [vvar_vclock]
7ff03f820000-7ff03f822000 r-xp 00000000 00:00 0                          [vdso]
7ff03f822000-7ff03f823000 r--p 00000000 fe:00 332717                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7ff03f823000-7ff03f849000 r-xp 00001000 fe:00 332717                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7ff03f849000-7ff03f853000 r--p 00027000 fe:00 332717                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7ff03f853000-7ff03f855000 r--p 00031000 fe:00 332717                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7ff03f855000-7ff03f857000 rw-p 00033000 fe:00 332717                     /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
7ffc49e14000-7ffc49e35000 rw-p 00000000 00:00 0                          [stack]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]

"""

/// A private read-only file mapping line with single-space columns, for hand-made layouts.
private func line(_ start: UInt64, _ end: UInt64, _ offset: UInt64, inode: UInt64, _ path: String, perms: String = "r--p") -> String {
    "\(String(start, radix: 16))-\(String(end, radix: 16)) \(perms) \(String(offset, radix: 16)) fe:01 \(inode) \(path)"
}

@Suite struct MemoryMapsParseTests {
    let mappings = MemoryMapping.parse(mapsFixture)

    @Test func malformedLinesAreSkipped() {
        #expect(mappings.count == 35)
        #expect(!mappings.contains { $0.path.contains("missing") })
        #expect(MemoryMapping.parse("").isEmpty)
        #expect(MemoryMapping.parse("\n\n").isEmpty)
        for bad in ["7ff0-zz r--p 00000000 00:00 0", "7ff1000-7ff0000 r--p 00000000 00:00 0",
                    "1000-2000 rwzp 00000000 00:00 0", "1000-2000 r--p 00000000 0000 0",
                    "1000-2000 r--p 00000000 00:00 12x /p", "1000-2000 r--p", "10000000000000000-10000000000000001 r--p 0 00:00 0"] {
            #expect(MemoryMapping.parse(bad).isEmpty, "\(bad)")
        }
    }

    @Test func everyColumn() throws {
        let text = try #require(mappings.first { $0.path == "/usr/bin/cat" && $0.permissions.isExecutable })
        #expect(text.start == 0x560c_043c_e000)
        #expect(text.end == 0x560c_043d_3000)
        #expect(text.size == 0x5000)
        #expect(text.permissions == MemoryPermissions(isReadable: true, isWritable: false, isExecutable: true, isShared: false))
        #expect(text.permissions.description == "r-xp")
        #expect(text.offset == 0x2000)
        #expect(text.device == "fe:00")
        #expect(text.inode == 253_911)
        #expect(!text.isDeleted)
        #expect(text.kind == .file)
        #expect(text.contains(0x560c_043c_e000) && text.contains(0x560c_043d_2fff) && !text.contains(0x560c_043d_3000))
        let shared = try #require(mappings.first { $0.path.hasSuffix("gconv-modules.cache") })
        #expect(shared.permissions.isShared && shared.permissions.isReadable && !shared.permissions.isWritable)
        #expect(MemoryPermissions("rw-s")?.isShared == true)
        #expect(MemoryPermissions("rw-") == nil)
    }

    @Test func pseudoPathsHaveKinds() {
        func kind(_ path: String) -> MappingKind? { mappings.first { $0.path == path }?.kind }
        #expect(kind("[heap]") == .heap)
        #expect(kind("[stack]") == .stack)
        #expect(kind("[vdso]") == .vdso)
        #expect(kind("[vvar]") == .vvar)
        #expect(kind("[vvar_vclock]") == .vvar)
        #expect(kind("[vsyscall]") == .vsyscall)
        #expect(kind("/memfd:crashwatch-memfd") == .memfd)
        #expect(mappings.filter { $0.kind == .anonymous }.count == 3)
        #expect(mappings.filter { $0.kind == .anonymous }.allSatisfy { $0.path.isEmpty && $0.inode == 0 })
        #expect(MappingKind(path: "[anon:dalvik heap]") == .anonymous)
        #expect(MappingKind(path: "[stack:1234]") == .stack)
        #expect(MappingKind(path: "[uprobes]") == .pseudo("[uprobes]"))
        #expect(MappingKind(path: "anon_inode:[perf_event]") == .pseudo("anon_inode:[perf_event]"))
        let vsyscall = mappings.last!
        #expect(vsyscall.start == 0xffff_ffff_ff60_0000 && vsyscall.end == 0xffff_ffff_ff60_1000)
        #expect(vsyscall.permissions.description == "--xp")
    }

    @Test func deletedSuffixIsRemovedOnlyAtTheEnd() throws {
        let exe = try #require(mappings.first)
        #expect(exe.path == "/tmp/x/deleted_exe")
        #expect(exe.isDeleted)
        #expect(exe.kind == .file)
        #expect(exe.description.hasSuffix("/tmp/x/deleted_exe (deleted)"))
        let memfd = try #require(mappings.first { $0.kind == .memfd })
        #expect(memfd.path == "/memfd:crashwatch-memfd" && memfd.isDeleted && memfd.device == "00:01")
        let middle = try #require(mappings.first { $0.inode == 400_002 })
        #expect(middle.path == "/srv/data (deleted) copy/blob.bin")
        #expect(!middle.isDeleted)
        let twice = MemoryMapping.parse("1000-2000 r--p 00000000 fe:00 7 /a (deleted) (deleted)")
        #expect(twice.first?.path == "/a (deleted)" && twice.first?.isDeleted == true)
    }

    @Test func pathsKeepTheirSpaces() throws {
        let plugin = try #require(mappings.first { $0.inode == 400_001 })
        #expect(plugin.path == "/opt/My App/lib/libplug in.so")
        let tabbed = MemoryMapping.parse("1000-2000 r--p 00000000 fe:00 7\t/with  two  spaces ")
        #expect(tabbed.first?.path == "/with  two  spaces ")
        let noPadding = MemoryMapping.parse("1000-2000 r--p 00000000 fe:00 7")
        #expect(noPadding.first?.path == "" && noPadding.first?.kind == .anonymous)
    }

    @Test func parsesSubstrings() {
        let text = mapsFixture[...]
        #expect(MemoryMapping.parse(text) == mappings)
    }
}

@Suite struct LoadedImageTests {
    let table = ImageTable(mapsText: mapsFixture)

    @Test func imagesOfTheFixture() {
        #expect(table.images.map(\.name) == [
            "deleted_exe", "cat", "memfd:crashwatch-memfd", "libplug in.so", "blob.bin", "LC_CTYPE",
            "libc.so.6", "gconv-modules.cache", "[vdso]", "ld-linux-x86-64.so.2", "[vsyscall]",
        ])
        #expect(table.count == 11)
        #expect(table.images.map(\.start) == table.images.map(\.start).sorted())
        #expect(!table.images.contains { [MappingKind.heap, .stack, .anonymous, .vvar].contains($0.kind) })
    }

    @Test func libcIsOneImageOfFiveMappings() throws {
        let libc = try #require(table.first { $0.name == "libc.so.6" })
        #expect(libc.mappings.count == 5)
        #expect(libc.start == 0x7ff0_3f62_d000)
        #expect(libc.end == 0x7ff0_3f80_2000)  // the .bss tail after it is anonymous, not libc
        #expect(libc.baseAddress == 0x7ff0_3f62_d000)
        #expect(libc.path == "/usr/lib/x86_64-linux-gnu/libc.so.6")
        #expect(libc.inode == 333_151 && libc.device == "fe:00" && libc.kind == .file && !libc.isDeleted)
    }

    @Test func executablesAndSpecialImages() throws {
        let exe = try #require(table.first { $0.name == "deleted_exe" })
        #expect(exe.isDeleted && exe.path == "/tmp/x/deleted_exe" && exe.mappings.count == 3)
        #expect(exe.baseAddress == 0x55d6_b4a0_0000)
        let memfd = try #require(table.first { $0.kind == .memfd })
        #expect(memfd.isDeleted && memfd.mappings.count == 3 && memfd.baseAddress == 0x7ff0_3f40_0000)
        let vdso = try #require(table.first { $0.kind == .vdso })
        #expect(vdso.baseAddress == 0x7ff0_3f82_0000 && vdso.size == 0x2000)
        let ld = try #require(table.first { $0.name == "ld-linux-x86-64.so.2" })
        #expect(ld.mappings.count == 5 && ld.end == 0x7ff0_3f85_7000)
    }

    @Test func lookupByAddress() {
        #expect(table.image(containing: 0x7ff0_3f70_0000)?.name == "libc.so.6")
        #expect(table.image(containing: 0x7ff0_3f62_d000)?.name == "libc.so.6")  // first byte
        #expect(table.image(containing: 0x7ff0_3f80_1fff)?.name == "libc.so.6")  // last byte
        #expect(table.image(containing: 0x7ff0_3f80_2000) == nil)  // libc's anonymous .bss tail
        #expect(table.mapping(containing: 0x7ff0_3f80_2000)?.kind == .anonymous)
        #expect(table.image(containing: 0x560c_043d_0123)?.name == "cat")
        #expect(table.image(containing: 0x560c_2dd6_0000) == nil)  // heap
        #expect(table.mapping(containing: 0x560c_2dd6_0000)?.kind == .heap)
        #expect(table.image(containing: 0x7ff0_3f82_1000)?.kind == .vdso)
        #expect(table.image(containing: 0x7ff0_3f81_b000) == nil)  // vvar
        #expect(table.image(containing: 0xffff_ffff_ff60_0400)?.kind == .vsyscall)
        #expect(table.mapping(containing: 0) == nil)  // a NULL-call pc is outside every mapping
        #expect(table.mapping(containing: 0x10) == nil)
        #expect(table.mapping(containing: 0x7ff0_3f62_5000) == nil)  // an unmapped gap
        #expect(table.mapping(containing: UInt64.max) == nil)
        #expect(ImageTable(mappings: []).image(containing: 0x1000) == nil)
    }

    @Test func everyMappedAddressIsFoundByBinarySearch() {
        for mapping in table.mappings {
            #expect(table.mapping(containing: mapping.start) == mapping)
            #expect(table.mapping(containing: mapping.end - 1) == mapping)
        }
    }

    @Test func aFileLoadedTwiceIsTwoImages() {
        let text = [
            line(0x10000, 0x11000, 0, inode: 9, "/lib/libtwice.so"),
            line(0x11000, 0x12000, 0x1000, inode: 9, "/lib/libtwice.so", perms: "r-xp"),
            line(0x20000, 0x21000, 0, inode: 9, "/lib/libtwice.so"),
            line(0x21000, 0x22000, 0x1000, inode: 9, "/lib/libtwice.so", perms: "r-xp"),
        ].joined(separator: "\n")
        let images = ImageTable(mapsText: text).images
        #expect(images.map(\.baseAddress) == [0x10000, 0x20000])
        #expect(images.map(\.end) == [0x12000, 0x22000])
    }

    @Test func aSmallLLDLinkedFileIsOneImage() {
        // lld packs every segment of a small file into its first page: each mapping has offset 0.
        let text = [
            line(0x10000, 0x11000, 0, inode: 7, "/opt/app/small"),
            line(0x11000, 0x12000, 0, inode: 7, "/opt/app/small", perms: "r-xp"),
            line(0x12000, 0x13000, 0, inode: 7, "/opt/app/small"),
            line(0x13000, 0x14000, 0, inode: 7, "/opt/app/small", perms: "rw-p"),
            // The same file again, elsewhere: a second image.
            line(0x40000, 0x41000, 0, inode: 7, "/opt/app/small"),
        ].joined(separator: "\n")
        let images = ImageTable(mapsText: text).images
        #expect(images.map(\.baseAddress) == [0x10000, 0x40000])
        #expect(images.first?.mappings.count == 4 && images.first?.end == 0x14000)
    }

    @Test func interleavedFilesStaySeparate() {
        // libb was mapped into a hole inside liba's reserved range.
        let text = [
            line(0x10000, 0x11000, 0, inode: 1, "/lib/liba.so"),
            line(0x11000, 0x12000, 0, inode: 2, "/lib/libb.so"),
            line(0x12000, 0x13000, 0x1000, inode: 2, "/lib/libb.so", perms: "r-xp"),
            line(0x13000, 0x14000, 0x3000, inode: 1, "/lib/liba.so", perms: "r-xp"),
        ].joined(separator: "\n")
        let table = ImageTable(mapsText: text)
        #expect(table.images.map(\.name) == ["liba.so", "libb.so"])
        #expect(table.images[0].mappings.count == 2 && table.images[0].end == 0x14000)
        #expect(table.image(containing: 0x11800)?.name == "libb.so")
        #expect(table.image(containing: 0x13800)?.name == "liba.so")
        #expect(table.images[0].contains(0x13800) && !table.images[0].contains(0x11800))
    }

    @Test func aFileWithoutItsHeaderMappedHasNoBase() {
        let text = line(0x30000, 0x31000, 0x5000, inode: 4, "/data/blob")
        let image = ImageTable(mapsText: text).images.first
        #expect(image?.baseAddress == nil && image?.start == 0x30000)
    }

    @Test func unsortedInputIsSorted() {
        let sorted = MemoryMapping.parse(mapsFixture)
        let table = ImageTable(mappings: sorted.reversed())
        #expect(table.mappings == sorted)
        #expect(LoadedImage.images(from: sorted.reversed()) == self.table.images)
    }

    @Test func thisProcessMapsItsOwnCode() throws {
        let text = try ProcFS.readText("/proc/self/maps")
        let lines = text.split(separator: "\n")
        let table = ImageTable(mapsText: text)
        #expect(table.mappings.count == lines.count)
        let libc = try #require(table.first { $0.name == "libc.so.6" })
        #expect(libc.baseAddress != nil && libc.mappings.contains { $0.permissions.isExecutable })
        let function: @convention(c) () -> Void = {}
        let code = UInt64(UInt(bitPattern: unsafeBitCast(function, to: UnsafeRawPointer.self)))
        let image = try #require(table.image(containing: code))
        #expect(image.kind == .file && table.mapping(containing: code)?.permissions.isExecutable == true)
        var local = 0
        let stackAddress = withUnsafeMutablePointer(to: &local) { UInt64(UInt(bitPattern: $0)) }
        #expect(table.mapping(containing: stackAddress)?.permissions.isWritable == true)
    }
}
