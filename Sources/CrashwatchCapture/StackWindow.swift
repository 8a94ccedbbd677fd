// StackWindow.swift — the one rule for which part of a thread's stack a capture keeps, whatever the source
// (a held process: CaptureReader.planStack; a core: StreamScan.computeStackLows): the readable memory its
// stack pointer is in or — a stack overflow, the pointer in the guard page below the stack — the next
// readable range starting at most `guardReach` above it; from just below the red zone up to that range's end
// (each source then caps the length). When the cap cuts the window short of the stack's end, the stack's top
// `topBytes` are kept too: the outer frames and their return addresses live there, above a frame larger than
// the window, and the unwinder steps over such a frame with its CFA from CFI into that region.
/// Which part of a thread's stack a capture keeps (see the file's banner).
enum StackWindow {
    /// How far above a stack pointer the stack may start: a pointer in the guard page or just below a mapping.
    static let guardReach: UInt64 = 64 << 10

    /// Bytes below the stack pointer a leaf function may use without moving it (x86-64's red zone).
    static func redZone(_ architecture: Architecture) -> UInt64 { architecture == .x86_64 ? 128 : 0 }

    /// Whether the readable range `range` holds the stack of `sp`: it ends above `sp` and starts at most
    /// `guardReach` above it. The first such range (ranges by start, not overlapping) is the stack's.
    static func holdsStack(_ range: Range<UInt64>, sp: UInt64) -> Bool {
        range.upperBound > sp && range.lowerBound <= sp &+ guardReach
    }

    /// How much of a stack's top is kept beside a window cut short of the stack's end.
    static let topBytes: UInt64 = 256 << 10

    /// The stack's top kept beside a window `window` of a stack ending at `end`: the last `topBytes` (at most
    /// the stack's own size from the window's start), never overlapping the window; nil when the window
    /// reaches the end.
    static func top(window: Range<UInt64>, end: UInt64) -> Range<UInt64>? {
        guard window.upperBound < end else { return nil }
        let low = max(window.upperBound, end - min(topBytes, end - window.lowerBound))
        return low..<end
    }

    /// Where the stack window of `sp` starts in a range starting at `rangeStart` that `holdsStack`.
    static func low(sp: UInt64, rangeStart: UInt64, architecture: Architecture) -> UInt64 {
        let redZone = redZone(architecture)
        return max(rangeStart, sp >= redZone ? sp - redZone : 0)
    }
}
