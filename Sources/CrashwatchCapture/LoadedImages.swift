// LoadedImages.swift — a process's mappings grouped into loaded images (one load of a file, the vdso), and
// the table that answers "which image holds this address?" by binary search. Built from the mappings that
// MemoryMaps.swift parses; no I/O.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols

/// A file (or the vdso) as loaded in a process: its mappings that belong to one load of it.
public struct LoadedImage: Sendable, Equatable, CustomStringConvertible {
    /// The path as printed in the maps, minus ` (deleted)`.
    public let path: String
    /// Whether the file was deleted (or is a memfd) when the maps were read.
    public let isDeleted: Bool
    /// What backs the image: `file`, `memfd`, `vdso` or `vsyscall`.
    public let kind: MappingKind
    /// The device of the backing file as printed (`fe:00`).
    public let device: String
    /// The inode of the backing file.
    public let inode: UInt64
    /// The lowest start address of the image's mappings.
    public let start: UInt64
    /// The highest end address of the image's mappings.
    public let end: UInt64
    /// The start of the mapping of file offset 0 (where the ELF header is); nil when that part is not mapped.
    ///
    /// For a shared object or PIE whose first `PT_LOAD` has `p_vaddr` 0 this is also the load bias;
    /// in general the bias is `ELFHeaderInfo.loadBias(imageBase:)` of the header read here.
    public let baseAddress: UInt64?
    /// The image's mappings in address order.
    public let mappings: [MemoryMapping]

    /// Sets every field explicitly.
    public init(path: String, isDeleted: Bool, kind: MappingKind, device: String, inode: UInt64,
                start: UInt64, end: UInt64, baseAddress: UInt64?, mappings: [MemoryMapping]) {
        self.path = path
        self.isDeleted = isDeleted
        self.kind = kind
        self.device = device
        self.inode = inode
        self.start = start
        self.end = end
        self.baseAddress = baseAddress
        self.mappings = mappings
    }

    /// The last component of the path (`libc.so.6`), or the whole path for `[vdso]`-style names.
    public var name: String {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The bytes from `start` to `end`, including any unmapped gaps between the mappings.
    public var size: UInt64 { end - start }

    /// Whether one of the image's mappings contains the address (gaps between them do not count).
    public func contains(_ address: UInt64) -> Bool {
        address >= start && address < end && mappings.contains { $0.contains(address) }
    }

    /// A one-line summary: name, range, base and deletion.
    public var description: String {
        "\(path)\(isDeleted ? " (deleted)" : "") \(hex(start))-\(hex(end)) base \(baseAddress.map(hex) ?? "none")"
    }

    /// Groups mappings into images, in address order.
    ///
    /// Mappings of the same (device, inode, path) join the image most recently opened for that file,
    /// even with other mappings in between; a mapping of file offset 0 always opens a new image, so a
    /// file loaded twice gives two images. Only kinds that `formsImage` take part.
    public static func images(from mappings: [MemoryMapping]) -> [LoadedImage] {
        group(mappings.sorted { $0.start < $1.start }).images
    }

    /// The identity that ties mappings of one file together.
    private struct FileKey: Hashable {
        /// The device as printed.
        let device: String
        /// The inode number.
        let inode: UInt64
        /// The path without ` (deleted)`.
        let path: String
    }

    /// Groups address-sorted mappings; also returns, per mapping, the index of its image.
    static func group(_ sorted: [MemoryMapping]) -> (images: [LoadedImage], owner: [Int?]) {
        var members: [[MemoryMapping]] = []
        var bases: [UInt64?] = []
        var open: [FileKey: Int] = [:]
        var owner: [Int?] = []
        owner.reserveCapacity(sorted.count)
        for mapping in sorted {
            guard mapping.kind.formsImage else { owner.append(nil); continue }
            let key = FileKey(device: mapping.device, inode: mapping.inode, path: mapping.path)
            // A mapping at offset 0 usually starts a new image; but a small file linked by lld packs every
            // segment into its first page, so each of its mappings has offset 0: one directly following the
            // same file's previous mapping, with other permissions, continues that image.
            let continues = open[key].map { index in
                mapping.offset != 0
                    || (members[index].last.map { $0.end == mapping.start && $0.permissions != mapping.permissions } ?? false)
            } ?? false
            if continues, let index = open[key] {
                members[index].append(mapping)
                owner.append(index)
            } else {
                open[key] = members.count
                owner.append(members.count)
                members.append([mapping])
                bases.append(mapping.offset == 0 ? mapping.start : nil)
            }
        }
        let images = zip(members, bases).map { group, base in
            let first = group[0]
            return LoadedImage(path: first.path, isDeleted: first.isDeleted, kind: first.kind,
                               device: first.device, inode: first.inode, start: first.start,
                               end: group.map(\.end).max()!, baseAddress: base, mappings: group)
        }
        return (images, owner)
    }
}

/// A process's mappings and images, sorted by address, answering "what holds this address?" by binary search.
public struct ImageTable: Sendable, RandomAccessCollection {
    /// Every mapping, sorted by start address.
    public let mappings: [MemoryMapping]
    /// The images, sorted by start address.
    public let images: [LoadedImage]
    /// For each entry of `mappings`, the index in `images` of the image it belongs to.
    private let imageIndex: [Int?]

    /// Sorts the mappings and groups them into images.
    public init(mappings: [MemoryMapping]) {
        let sorted = mappings.sorted { $0.start < $1.start }
        let grouped = LoadedImage.group(sorted)
        self.mappings = sorted
        self.images = grouped.images
        self.imageIndex = grouped.owner
    }

    /// Parses `/proc/PID/maps` text and builds the table from it.
    public init(mapsText: some StringProtocol) {
        self.init(mappings: MemoryMapping.parse(mapsText))
    }

    /// The index of the first image.
    public var startIndex: Int { images.startIndex }
    /// One past the index of the last image.
    public var endIndex: Int { images.endIndex }
    /// The image at a position.
    public subscript(position: Int) -> LoadedImage { images[position] }

    /// The index in `mappings` of the mapping containing the address, by binary search.
    private func mappingIndex(containing address: UInt64) -> Int? {
        guard let index = mappings.lastIndex(startingAtOrBelow: address, start: { $0.start }),
              mappings[index].contains(address) else { return nil }
        return index
    }

    /// The mapping that contains the address, nil when the address is not mapped.
    public func mapping(containing address: UInt64) -> MemoryMapping? {
        mappingIndex(containing: address).map { mappings[$0] }
    }

    /// The image one of whose mappings contains the address; nil for unmapped or non-image memory.
    public func image(containing address: UInt64) -> LoadedImage? {
        guard let index = mappingIndex(containing: address), let owner = imageIndex[index] else { return nil }
        return images[owner]
    }
}

extension RandomAccessCollection where Index == Int {
    /// In a collection sorted by `start`, the index of the last element starting at or below `key`, found by
    /// bisection; nil when every element starts above it. (Whether that element reaches `key` is the caller's.)
    func lastIndex(startingAtOrBelow key: UInt64, start: (Element) -> UInt64) -> Int? {
        var low = startIndex, high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if start(self[middle]) <= key { low = middle + 1 } else { high = middle }
        }
        return low > startIndex ? low - 1 : nil
    }
}
