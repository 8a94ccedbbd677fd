// CoreNotes.swift — the notes of a core dump, read as hostile input: one scanner over the PT_NOTE bytes as
// they stream past (CoreStream), that keeps only the notes a report uses and bounds what it holds. A crashed
// program chooses its core's contents (a `core_pattern` helper runs as root on it): 100,000 NT_PRSTATUS
// notes, a 4 GiB descriptor or an NT_FILE with a million entries must cost no more than a real core. The caps:
// - threads (NT_PRSTATUS): `maxThreads`, and one per 16 KiB of `--max-memory` (a thread costs about that
//   in reports and their checks); the kernel's first is the thread that took the signal;
// - notes looked at in all: `maxNotes` (the kernel writes about five per thread), the rest of the segment
//   is skipped unread;
// - bytes kept: NT_FILE at most `maxFileNoteBytes`, every other kept note at most `maxSmallNoteBytes`, all
//   of them together at most half of `--max-memory` (`CoreStream.noteBudget`);
// - one NT_PRPSINFO, NT_SIGINFO, NT_AUXV, NT_FILE and NT_ARM_PAC_MASK: later ones are ignored.
// What a cap drops is said once, as a problem the capture turns into a soft error.
import CrashwatchSymbols

/// The notes of a core dump a report uses, kept within caps (see the file's banner).
public struct CoreNotes {
    /// The most threads (NT_PRSTATUS notes) kept: a minimal report of that many stays well under the 16 MiB
    /// report limit (about 2 KiB a thread), and the worker can unwind them within its deadline.
    public static let maxThreads = 4096
    /// The memory limit's bytes per thread kept (see `threadLimit`).
    public static let bytesPerThread = 16 << 10
    /// The most notes looked at in one core (kept or not): about five per thread for `maxThreads` threads, with room.
    public static let maxNotes = 1 << 16
    /// The largest NT_FILE descriptor kept: the kernel's own limit is 4 MiB by default
    /// (`kernel.core_file_note_size_limit`), which may be raised.
    public static let maxFileNoteBytes = 16 << 20
    /// The largest descriptor kept of the other notes a report uses (NT_PRSTATUS is 336 or 392 bytes,
    /// NT_PRPSINFO 136, NT_SIGINFO 128, NT_AUXV a few hundred).
    public static let maxSmallNoteBytes = 4096

    /// The notes kept, in the order the core has them.
    public private(set) var kept: [ELFNote] = []
    /// What the caps dropped, a sentence each.
    public var problems: [String] {
        var lines: [String] = []
        if droppedThreads > 0 {
            lines.append("\(droppedThreads) NT_PRSTATUS notes beyond the first \(threadLimit) were dropped: those threads are not in the report")
        }
        if notesLeftUnread {
            lines.append("the core has more than \(Self.maxNotes) notes: the rest were not read (threads, files or the signal they hold are not in the report)")
        }
        for (kind, count) in oversized.sorted(by: { $0.key < $1.key }) {
            lines.append("\(count) \(kind) note\(count == 1 ? " was" : "s were") dropped: larger than \(limit(of: kind)) bytes")
        }
        if overBudget > 0 {
            lines.append("\(overBudget) notes were dropped: the notes kept reached \(byteBudget) bytes (half of the memory limit)")
        }
        for (kind, count) in duplicates.sorted(by: { $0.key < $1.key }) {
            lines.append("\(count) more \(kind) note\(count == 1 ? " was" : "s were") ignored: only the first counts")
        }
        if truncated { lines.append("the note segment ends inside a note: the rest of it was not read") }
        return lines
    }

    /// The most descriptor bytes kept in all.
    public let byteBudget: Int
    /// The most threads kept: `maxThreads`, fewer for a memory limit under 64 MiB (at least one).
    public let threadLimit: Int
    /// The descriptor bytes kept so far.
    public private(set) var keptByteCount = 0
    private var seen = 0
    private var threads = 0
    private var droppedThreads = 0
    private var notesLeftUnread = false
    private var truncated = false
    private var overBudget = 0
    private var oversized: [String: Int] = [:]
    private var duplicates: [String: Int] = [:]
    private var singles: Set<String> = []

    /// An empty set of notes for a memory limit of `memoryLimit` bytes (`--max-memory`): it keeps at most
    /// `CoreStream.noteBudget(memoryLimit:)` descriptor bytes and `threadLimit` threads.
    public init(memoryLimit: Int) {
        byteBudget = CoreStream.noteBudget(memoryLimit: memoryLimit)
        threadLimit = max(1, min(Self.maxThreads, max(memoryLimit, 0) / Self.bytesPerThread))
    }

    /// The NT_PRSTATUS notes kept (one per thread, the crashed one first).
    public var threadCount: Int { threads }

    /// The kind of note (`NT_FILE`…) a report uses, or nil for one it does not (NT_FPREGSET, NT_X86_XSTATE…).
    static func kind(name: String, type: UInt32) -> String? {
        switch (name, type) {
        case ("CORE", CoreRecords.NoteType.prstatus): "NT_PRSTATUS"
        case ("CORE", CoreRecords.NoteType.prpsinfo): "NT_PRPSINFO"
        case ("CORE", CoreRecords.NoteType.auxv): "NT_AUXV"
        case ("CORE", CoreRecords.NoteType.file): "NT_FILE"
        case ("CORE", CoreRecords.NoteType.siginfo): "NT_SIGINFO"
        case ("LINUX", CoreRecords.NoteType.armPACMask): "NT_ARM_PAC_MASK"
        default: nil
        }
    }

    private func limit(of kind: String) -> Int { kind == "NT_FILE" ? Self.maxFileNoteBytes : Self.maxSmallNoteBytes }

    /// Whether a note of `kind` with a descriptor of `size` bytes is kept; counts what it drops.
    private mutating func accepts(_ kind: String, size: UInt32) -> Bool {
        if kind == "NT_PRSTATUS" {
            guard threads < threadLimit else {
                droppedThreads += 1
                return false
            }
        } else if singles.contains(kind) {
            duplicates[kind, default: 0] += 1
            return false
        }
        guard size <= limit(of: kind) else {
            oversized[kind, default: 0] += 1
            return false
        }
        guard Int(size) <= byteBudget - keptByteCount else {
            overBudget += 1
            return false
        }
        return true
    }

    private mutating func keep(_ note: ELFNote, kind: String) {
        kept.append(note)
        keptByteCount += note.descriptor.count
        if kind == "NT_PRSTATUS" { threads += 1 } else { singles.insert(kind) }
    }

    /// Reads the notes of one PT_NOTE segment from `source` to its end (what is left of it is skipped),
    /// keeping those a report uses within the caps. `alignment` is the segment's `p_align` (8 or the usual 4).
    mutating func scan(_ source: inout StreamNoteSource, alignment: UInt64) throws {
        let align: UInt64 = alignment == 8 ? 8 : 4
        func padded(_ size: UInt64) -> UInt64 { (size + align - 1) & ~(align - 1) }  // size < 2^33: no overflow
        while source.remaining >= 12 {
            guard seen < Self.maxNotes else {
                notesLeftUnread = true
                break
            }
            seen += 1
            guard let header = try source.take(12).map(ByteReader.init), let nameSize = header.u32(0).map(UInt64.init),
                  let descriptorSize = header.u32(4), let type = header.u32(8) else { break }
            // The name and descriptor start on `align` boundaries counted from the note's start (12 is one for 4).
            let nameSpace = padded(12 + nameSize) - 12, descriptorSpace = padded(UInt64(descriptorSize))
            guard nameSpace <= source.remaining else {
                truncated = true
                break
            }
            var name = ""
            if nameSize <= 16 {  // "CORE", "LINUX", "GNU": anything longer is no note a report uses
                guard let bytes = try source.take(Int(nameSpace)) else { break }
                name = String(decoding: bytes.prefix(Int(nameSize)).prefix { $0 != 0 }, as: UTF8.self)
            } else {
                try source.drop(nameSpace)
            }
            guard descriptorSpace <= source.remaining else {
                truncated = true
                break
            }
            if let kind = Self.kind(name: name, type: type), accepts(kind, size: descriptorSize) {
                guard let bytes = try source.take(Int(descriptorSpace)) else { break }
                keep(ELFNote(name: name, type: type, descriptor: Array(bytes.prefix(Int(descriptorSize)))), kind: kind)
            } else {
                try source.drop(descriptorSpace)
            }
        }
        try source.drop(source.remaining)
    }
}
