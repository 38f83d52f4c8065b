// The fuzz targets' registry. Each target is a seeded loop: it draws inputs from a
// SeededRandom, must never trap or hang, and reports a failing seed. Register a
// target by adding it to `FuzzTarget.all` (one line; its code lives in its own file).
import Foundation
import TestSupport

/// One fuzz target: a name, what it exercises, and a body run once per iteration.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    /// Runs one iteration with its own generator; throws `FuzzFailure` on a finding.
    let iteration: @Sendable (inout SeededRandom) throws -> Void

    static let all: [FuzzTarget] = [
        .randomSelfCheck,
        .predicateLanguage,
        .predicateDifferential,
        .predicateStrings,
        .engineFile, .engineDifferential, .engineKillChild, .engineKillPointChild,
        .binaryStoreFile,
    ]
}

/// A finding: a property the target checks did not hold.
struct FuzzFailure: Error, CustomStringConvertible {
    let description: String
}

extension FuzzTarget {
    /// Checks the harness itself: the generator is deterministic per seed.
    static let randomSelfCheck = FuzzTarget(
        name: "random", summary: "the seeded generator replays identically"
    ) { random in
        var copy = random
        let expected = copy.next()
        guard random.next() == expected else { throw FuzzFailure(description: "generator not deterministic") }
    }
}
