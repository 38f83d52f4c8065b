// Deterministic randomness for tests, the fuzzer and the benchmarks. Every random
// test draws from a SeededRandom whose seed it prints on failure; setting
// OPENCOREDATA_SEED replays it.
import Foundation

/// A fast, seedable generator (SplitMix64), deterministic on every platform.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The seed this generator started from: print it, replay it.
    public let seed: UInt64
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    /// A generator seeded from `OPENCOREDATA_SEED` when set, otherwise from `fallback`
    /// (tests pass a fixed value so CI runs are reproducible).
    public init(environmentOr fallback: UInt64) {
        self.init(seed: SeededRandom.environmentSeed ?? fallback)
    }

    /// The seed in `OPENCOREDATA_SEED`, decimal or 0x-prefixed hexadecimal, if any.
    public static var environmentSeed: UInt64? {
        guard let text = ProcessInfo.processInfo.environment["OPENCOREDATA_SEED"] else { return nil }
        if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }

    /// The next 64 random bits (SplitMix64).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly random integer in `range`.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// A random element of a non-empty collection.
    public mutating func pick<C: Collection>(_ collection: C) -> C.Element {
        guard let element = collection.randomElement(using: &self) else {
            preconditionFailure("pick needs a non-empty collection")
        }
        return element
    }

    /// The message to print when a seeded check fails: how to replay it.
    public var replayHint: String {
        "seed \(seed) (replay with OPENCOREDATA_SEED=\(seed))"
    }
}
