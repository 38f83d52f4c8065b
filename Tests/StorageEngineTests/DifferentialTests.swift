import StorageEngine
import TestSupport
import Testing

/// Random operation sequences against an in-memory oracle, on tiny pages so splits,
/// merges and overflow chains happen constantly.
@Suite struct DifferentialTests {
    @Test func randomOperationsMatchTheOracle() throws {
        let base = SeededRandom.environmentSeed ?? 1_000
        let seeds = SeededRandom.environmentSeed == nil ? 1_000 : 1
        for offset in 0..<UInt64(seeds) {
            var random = SeededRandom(seed: base &+ offset)
            do {
                try EngineHarness.runDifferential(random: &random, steps: 40, pageSize: 512)
            } catch {
                Issue.record("\(error) — \(SeededRandom(seed: base &+ offset).replayHint)")
                return
            }
        }
    }

    @Test func longerRunsOnDefaultPageSize() throws {
        var random = SeededRandom(environmentOr: 77)
        do {
            try EngineHarness.runDifferential(random: &random, steps: 400, pageSize: 4_096)
        } catch {
            Issue.record("\(error) — \(random.replayHint)")
        }
    }
}
