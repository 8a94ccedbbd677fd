// ImageIdentity.swift — what an image's ELF header and notes in a process's memory (or a core's) say about
// it: build-id, architecture, `.note.package` metadata and the annotation tables its `crashwatch` notes declare
// (`AnnotationFormat`), every length bounded.
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
    /// The addresses of the annotation tables the image's notes declare (at most `AnnotationFormat.maximumTables`).
    var annotationTables: [UInt64] = []
    /// How many table notes the image has, counting those past the cap and malformed ones.
    var annotationNotes = 0
    /// Whether a note segment was larger than `noteByteLimit`: the notes past it were not read.
    var notesCut = false

    static let headerByteLimit = 64 << 10
    static let noteByteLimit = 64 << 10

    /// The identity of the image whose ELF header is at `base` in a process's memory, read through `read`
    /// (address, count → the bytes that could be read): nil without a build-id or an annotation table. Every
    /// length is bounded.
    static func read(base: UInt64, _ read: (UInt64, Int) -> [UInt8]) -> ImageIdentity? {
        guard let header = ELFHeaderInfo.read(limit: headerByteLimit, { read(base, $0) }) else { return nil }
        guard let bias = header.loadBias(imageBase: base) else { return nil }
        let located = header.locatedNotes(limit: noteByteLimit) { read(bias &+ $0.virtualAddress, Int($0.size)) }
        var identity = ImageIdentity(notes: located.map(\.note), architecture: header.architecture)
        identity.notesCut = header.noteSegments.prefix(16).contains { $0.size > UInt64(noteByteLimit) }
        // Linkers such as gold and swiftc's emit overlapping PT_NOTE segments: one note met twice at the same
        // address is one declaration.
        var descriptors = Set<UInt64>()
        for (segment, note, offset) in located where AnnotationFormat.isTableNote(note)
            && descriptors.insert(bias &+ segment.virtualAddress &+ UInt64(offset)).inserted {
            identity.annotationNotes += 1
            guard identity.annotationTables.count < AnnotationFormat.maximumTables,
                  let table = AnnotationFormat.tableAddress(note, descriptorAt: bias &+ segment.virtualAddress &+ UInt64(offset))
            else { continue }
            identity.annotationTables.append(table)
        }
        return identity.buildID == nil && identity.annotationNotes == 0 ? nil : identity
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
