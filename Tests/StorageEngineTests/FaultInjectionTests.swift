import StorageEngine
import TestSupport
import Testing

/// Fail the k-th I/O operation, once and from k on, for every k and every fault kind.
@Suite struct FaultInjectionTests {
    static let seed = SeededRandom.environmentSeed ?? 7

    @Test(arguments: [
        CrashWorkload.smallCommits, .checkpoint, .vacuum, .bigTransaction, .logReuse, .shrink, .packingShrink,
        .deferredShrink, .spill,
        .editWalk,
    ])
    func everyFaultSurfacesAndLosesNothing(workload: CrashWorkload) throws {
        for fault in SimulatedFileSystem.Fault.allCases {
            for persistent in [false, true] {
                do {
                    let count = try EngineHarness.enumerateFaults(
                        workload, fault: fault, persistent: persistent, seed: Self.seed)
                    #expect(count > 10)
                } catch {
                    Issue.record("\(error) — \(SeededRandom(seed: Self.seed).replayHint)")
                    return
                }
            }
        }
    }

    @Test func failedSyncPoisonsTheHandleUntilReopened() throws {
        let files = SimulatedFileSystem()
        let options = EngineHarness.crashOptions(files)
        let database = try Database.open(at: "poison.db", options: options)
        try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        files.injectFault(.ioError, at: 0, of: .sync, persistent: false)
        #expect(throws: StorageError.self) {
            try database.write { try $0.openTree(named: "t").setValue([2], forKey: [2]) }
        }
        // The fault was one-shot, yet the handle stays unusable: fsync is never retried.
        let afterwards = #expect(throws: StorageError.self) {
            try database.write { try $0.openTree(named: "t").setValue([3], forKey: [3]) }
        }
        #expect(afterwards?.code == .poisoned)
        #expect((try? database.read { _ in 0 }) == nil)
        try? database.close()
        let reopened = try Database.open(at: "poison.db", options: options)
        _ = try reopened.verify()
        let value = try reopened.read { try $0.tree(named: "t")?.value(forKey: [1]) }
        #expect(value == [1])
        try reopened.close()
    }
}
