import StorageEngine
import TestSupport
import Testing

/// The log's steady state (SPEC.md §2.3 W3): commits overwrite blocks the log already
/// has, one sync per durable commit, and a log that grew large shrinks at its next reset.
@Suite struct LogReuseTests {
    static let seed = SeededRandom.environmentSeed ?? 11

    private static func key(_ value: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) }
    }

    private static func put(_ database: Database, _ key: Int, _ value: [UInt8]) throws {
        try database.write { try $0.openTree(named: "rows").setValue(value, forKey: Self.key(key)) }
    }

    @Test func steadyStateCommitsDoNotGrowTheLog() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "reuse.db", options: EngineHarness.crashOptions(files))
        var sizes: [Int] = []
        for index in 0..<300 {
            try Self.put(database, index % 40, [UInt8(truncatingIfNeeded: index)])
            sizes.append(files.contents(ofPath: "reuse.db-wal")?.count ?? 0)
        }
        // The log reaches its size within the first generations, then only overwrites.
        let settled = sizes[100]
        #expect(sizes[100...].allSatisfy { $0 == settled })
        #expect(Set(sizes).count <= 12)
        #expect(settled > 0 && settled < 4 * EngineHarness.crashOptions(files).checkpointThreshold)
        let oracle = try EngineHarness.contents(of: database)
        try database.close()
        let reopened = try Database.open(at: "reuse.db", options: EngineHarness.crashOptions(files))
        _ = try reopened.verify()
        #expect(try EngineHarness.contents(of: reopened) == oracle)
        try reopened.close()
    }

    @Test func aDurableCommitSyncsOnceEvenWhenTheLogExtends() throws {
        let files = SimulatedFileSystem()
        var options = EngineHarness.crashOptions(files)
        // Large enough that no commit checkpoints, small enough for 128 KiB growth steps.
        options.checkpointThreshold = 1 << 20
        let database = try Database.open(at: "sync.db", options: options)
        try Self.put(database, 0, [0])
        let before = files.count(of: .sync)
        let sizeBefore = files.contents(ofPath: "sync.db-wal")?.count ?? 0
        for index in 1...150 { try Self.put(database, index, Array(repeating: 1, count: 60)) }
        #expect(files.count(of: .sync) - before == 150)
        #expect(files.count(of: .directorySync) <= 1)
        // 150 commits of several frames crossed preallocation steps: the log did extend.
        #expect((files.contents(ofPath: "sync.db-wal")?.count ?? 0) > sizeBefore)
        try database.close()
    }

    /// W3: each preallocation step writes zeros (from a shared zero mapping, not from the
    /// frame buffer, which still holds the commit's frames): a commit that extends the log
    /// leaves it ending in a step of at least 4 frames of zeros after its last frame.
    @Test func preallocationStepsAreZeros() throws {
        let files = SimulatedFileSystem()
        var options = EngineHarness.crashOptions(files)
        options.checkpointThreshold = 1 << 20
        let database = try Database.open(at: "zeros.db", options: options)
        var size = 0
        var extensions = 0
        for index in 0..<150 {
            try Self.put(database, index, Array(repeating: 0xA5, count: 60))
            let log = try #require(files.contents(ofPath: "zeros.db-wal"))
            guard log.count > size else { continue }
            size = log.count
            extensions += 1
            #expect(log.suffix(4 * options.pageSize).allSatisfy { $0 == 0 }, "commit \(index)")
        }
        #expect(extensions > 2)
        try database.close()
    }

    @Test func anOversizedLogShrinksAtTheNextReset() throws {
        let files = SimulatedFileSystem()
        var growing = EngineHarness.crashOptions(files)
        growing.checkpointThreshold = Int.max
        growing.checkpointOnClose = false
        let first = try Database.open(at: "shrink.db", options: growing)
        for index in 0..<200 { try Self.put(first, index * 7 % 200, Array(repeating: 2, count: 40)) }
        let oracle = try EngineHarness.contents(of: first)
        try first.close()
        let grown = files.contents(ofPath: "shrink.db-wal")?.count ?? 0
        let threshold = EngineHarness.crashOptions(files).checkpointThreshold
        #expect(grown > 8 * threshold)
        let database = try Database.open(at: "shrink.db", options: EngineHarness.crashOptions(files))
        try database.checkpoint()
        let shrunk = files.contents(ofPath: "shrink.db-wal")?.count ?? 0
        #expect(shrunk < 4 * threshold && shrunk > 0)
        #expect(try EngineHarness.contents(of: database) == oracle)
        try database.close()
        let reopened = try Database.open(at: "shrink.db", options: EngineHarness.crashOptions(files))
        _ = try reopened.verify()
        #expect(try EngineHarness.contents(of: reopened) == oracle)
        try reopened.close()
    }

    /// After a reset the previous generation's frames lie beyond the new end with the old
    /// salt; a crash (without close) must replay only the new generation's commits.
    @Test func staleFramesBeyondTheEndAreNotReplayed() throws {
        let files = SimulatedFileSystem()
        var options = EngineHarness.crashOptions(files)
        options.checkpointThreshold = Int.max
        options.checkpointOnClose = false
        let database = try Database.open(at: "stale.db", options: options)
        for index in 0..<30 { try Self.put(database, index, [1, UInt8(index)]) }
        try database.checkpoint()
        try Self.put(database, 5, [9])
        try database.write { _ = try $0.openTree(named: "rows").removeValue(forKey: Self.key(6)) }
        let oracle = try EngineHarness.contents(of: database)
        var random = SeededRandom(seed: Self.seed)
        let image = files.afterCrash(model: .dropUnsynced, random: &random)
        try database.close()
        let recovered = try Database.open(at: "stale.db", options: EngineHarness.crashOptions(image))
        _ = try recovered.verify()
        #expect(try EngineHarness.contents(of: recovered) == oracle)
        try recovered.close()
    }

    /// The crash enumeration's `logReuse` workload must reach the paths it is there for.
    @Test func theCrashWorkloadShrinksAndWrapsTheLog() throws {
        let files = SimulatedFileSystem()
        try EngineHarness.run(.logReuse, on: files, log: CommitLog(), seed: Self.seed)
        // One truncation shrinks the grown log at its first reset, one empties it at close.
        #expect(files.count(of: .truncate) >= 2)
        #expect(files.contents(ofPath: "crash.db-wal")?.count == 0)
    }

    /// A transaction that writes no page (it empties the catalog) logs only free records
    /// and may still have grown the file by pages it allocated and freed; reopening must
    /// accept its page count (SPEC.md §5 counts frames, not bytes).
    @Test func aCommitOfOnlyFreeRecordsReopens() throws {
        let files = SimulatedFileSystem()
        var options = EngineHarness.crashOptions(files)
        options.checkpointThreshold = Int.max
        options.checkpointOnClose = false
        let database = try Database.open(at: "only.db", options: options)
        try Self.put(database, 1, [1])
        try database.checkpoint()  // the log then holds only the next transaction
        try database.write { transaction in
            let scratch = try transaction.openTree(named: "scratch")
            for index in 0..<4_000 { try scratch.setValue(Array(repeating: 3, count: 100), forKey: Self.key(index)) }
            #expect(try transaction.deleteTree(named: "scratch"))
            #expect(try transaction.deleteTree(named: "rows"))
        }
        try database.close()
        let reopened = try Database.open(at: "only.db", options: options)
        _ = try reopened.verify()
        #expect(try reopened.read { try $0.treeNames() }.isEmpty)
        try Self.put(reopened, 2, [2])
        try reopened.close()
    }

    /// A clean close leaves the page file alone (an empty log); the next session
    /// preallocates again. A close without a checkpoint keeps the log.
    @Test func aCleanCloseEmptiesTheLog() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "close.db", options: EngineHarness.crashOptions(files))
        for index in 0..<30 { try Self.put(database, index, [UInt8(index)]) }
        #expect((files.contents(ofPath: "close.db-wal")?.count ?? 0) > 0)
        let oracle = try EngineHarness.contents(of: database)
        try database.close()
        #expect(files.contents(ofPath: "close.db-wal")?.count == 0)
        var keeping = EngineHarness.crashOptions(files)
        keeping.checkpointOnClose = false
        let reopened = try Database.open(at: "close.db", options: keeping)
        #expect(try EngineHarness.contents(of: reopened) == oracle)
        try Self.put(reopened, 100, [1])
        try reopened.close()
        #expect((files.contents(ofPath: "close.db-wal")?.count ?? 0) > 0)
        let last = try Database.open(at: "close.db", options: EngineHarness.crashOptions(files))
        _ = try last.verify()
        #expect(try last.read { try $0.tree(named: "rows")?.value(forKey: Self.key(100)) } == [1])
        try last.close()
    }
}
