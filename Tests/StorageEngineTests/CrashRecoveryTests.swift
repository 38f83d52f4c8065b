import StorageEngine
import TestSupport
import Testing

/// Crash after every I/O operation of scripted workloads, recover under every crash
/// model, and compare with the oracle.
@Suite struct CrashRecoveryTests {
    static let seed = SeededRandom.environmentSeed ?? 42

    @Test(arguments: CrashWorkload.allCases)
    func everyCrashPointRecovers(workload: CrashWorkload) throws {
        var recoveries = 0
        var seed = Self.seed
        // Several seeds per workload: at least 1,000 recoveries each, 5,000+ per run.
        while recoveries < 1_000 {
            do {
                recoveries += try EngineHarness.enumerateCrashPoints(workload, seed: seed)
            } catch {
                Issue.record("\(error) — \(SeededRandom(seed: seed).replayHint)")
                return
            }
            seed &+= 1
        }
        #expect(recoveries >= 1_000)
    }

    /// Normal durability may lose commits to a power loss, but never mixes states.
    @Test(arguments: [CrashWorkload.smallCommits, .checkpoint, .bigTransaction, .logReuse, .spill, .editWalk])
    func normalDurabilityRecoversSomeCommittedState(workload: CrashWorkload) throws {
        do {
            let recoveries = try EngineHarness.enumerateCrashPoints(workload, seed: Self.seed, durability: .normal)
            #expect(recoveries >= 50)
        } catch {
            Issue.record("\(error) — \(SeededRandom(seed: Self.seed).replayHint)")
        }
    }

    /// Images of crashes while transactions spill (a quarter, half and three quarters of
    /// the way through the spill workload), crashed again during their recovery.
    @Test(arguments: [0.25, 0.5, 0.75])
    func crashDuringRecoveryOfASpillRecovers(fraction: Double) throws {
        do {
            let recoveries = try EngineHarness.enumerateCrashesDuringRecovery(
                seed: Self.seed, workload: .spill, fraction: fraction)
            #expect(recoveries >= 20)
        } catch {
            Issue.record("\(error) — \(SeededRandom(seed: Self.seed).replayHint)")
        }
    }

    @Test func crashDuringRecoveryRecovers() throws {
        do {
            let recoveries = try EngineHarness.enumerateCrashesDuringRecovery(seed: Self.seed)
            #expect(recoveries >= 20)
        } catch {
            Issue.record("\(error) — \(SeededRandom(seed: Self.seed).replayHint)")
        }
    }
}
