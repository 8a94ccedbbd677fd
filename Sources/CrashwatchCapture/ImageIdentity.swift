// ImageIdentity.swift — what an image's ELF header and notes in a process's memory (or a core's) say about
// it: build-id, architecture and `.note.package` metadata, every length bounded.
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSymbols
import CrashwatchSystem
import FoundationEssentials

/// What an image's ELF header and notes say about it.
struct ImageIdentity {
    var buildID: [UInt8]?
    var architecture: Architecture?
    var package: PackageRecord?

    static let headerByteLimit = 64 << 10
    static let noteByteLimit = 64 << 10

    /// The identity of the image whose ELF header is at `base` in a process's memory, read through `read`
    /// (address, count → the bytes that could be read): nil without a build-id. Every length is bounded.
    static func read(base: UInt64, _ read: (UInt64, Int) -> [UInt8]) -> ImageIdentity? {
        guard let header = ELFHeaderInfo.read(limit: headerByteLimit, { read(base, $0) }) else { return nil }
        guard let bias = header.loadBias(imageBase: base) else { return nil }
        let notes = header.notes(limit: noteByteLimit) { read(bias &+ $0.virtualAddress, Int($0.size)) }
        let identity = ImageIdentity(notes: notes, architecture: header.architecture)
        return identity.buildID == nil ? nil : identity
    }

    /// Whether the bytes at `base` begin with the ELF magic: a mapped file that does not (a locale archive, the
    /// gconv cache, a JVM's CDS archive or hsperfdata) is no image, and its missing build-id no error.
    static func isELF(base: UInt64, _ read: (UInt64, Int) -> [UInt8]) -> Bool {
        read(base, 4) == [0x7f, 0x45, 0x4c, 0x46]
    }

    /// Reads the build-id and the `.note.package` metadata (JSON) from an image's notes.
    init(notes: [ELFNote], architecture: Architecture?) {
        self.buildID = ELFNotes.buildID(in: notes)
        self.architecture = architecture
        self.package = ELFNotes.packageMetadataJSON(in: notes).flatMap { json in
            try? JSONDecoder().decode(PackageRecord.self, from: Data(json.utf8))
        }
    }
}
