// SeededGenerator.swift — the fuzz tests' random numbers: SplitMix64 from a fixed seed, so the same seed gives
// the same mutations on every run and a failure names a reproducible case.
/// A small deterministic generator (SplitMix64): the same seed gives the same sequence on every run.
public struct SeededGenerator: RandomNumberGenerator {
    /// The generator's state, starting at the seed.
    public var state: UInt64

    /// Starts the sequence at `state`.
    public init(state: UInt64) { self.state = state }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
