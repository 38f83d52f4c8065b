import Foundation
import StorageEngine
import TestSupport
import Testing

/// The shrink is deferred (SPEC.md §2.13): a write leaves the pages it frees for the next
/// writes to reuse and shrinks only a file more than half free; ``Database/checkpoint()``
/// and the checkpoint at close give back a fifth.
@Suite struct DeferredShrinkTests {
    static let rowCount = 6_000

    /// ShrinkTests' options, with a checkpoint threshold low enough that every
    /// transaction below commits directly (its newest state is the checkpointed one).
    static func options(_ files: SimulatedFileSystem) -> Database.Options {
        var options = ShrinkTests.options(files)
        options.checkpointThreshold = 16 << 10
        return options
    }

    static func value(_ index: Int, round: Int) -> [UInt8] {
        ShrinkTests.value(index).map { $0 &+ UInt8(round) }
    }

    static func fileSize(_ files: SimulatedFileSystem, _ path: String) throws -> UInt64 {
        try files.openFile(atPath: path, create: false).size()
    }

    static func load(_ database: Database) throws {
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<rowCount { try rows.setValue(value(index, round: 0), forKey: ShrinkTests.key(index)) }
        }
        try database.checkpoint()
    }

    /// Every value replaced in one transaction: copy-on-write copies every leaf and chain.
    static func rewrite(_ database: Database, round: Int) throws {
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<rowCount { try rows.setValue(value(index, round: round), forKey: ShrinkTests.key(index)) }
        }
    }

    static func checkRows(_ database: Database, round: Int, removed: Set<Int> = []) throws {
        try database.read { transaction in
            let rows = try #require(try transaction.tree(named: "rows"))
            #expect(try rows.count == rowCount - removed.count)
            for index in stride(from: 0, to: rowCount, by: 7) {
                #expect(
                    try rows.value(forKey: ShrinkTests.key(index))
                        == (removed.contains(index) ? nil : value(index, round: round)))
            }
        }
    }

    @Test func aRewriteLeavesItsFreedPagesForTheNextWrite() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "reuse.db", options: Self.options(files))
        try Self.load(database)
        let loaded = try Self.fileSize(files, "reuse.db")

        try Self.rewrite(database, round: 1)
        let rewritten = try Self.fileSize(files, "reuse.db")
        let report = try database.verify()
        try Self.checkRows(database, round: 1)
        // The old copies are free below the new ones and the file was not shrunk, though a
        // fifth of it is free (a checkpoint would shrink it).
        #expect(rewritten * 2 > loaded * 3, "\(rewritten) bytes after the rewrite, \(loaded) after the load")
        #expect(report.freePageCount * 5 >= report.pageCount, "\(report)")
        #expect(report.freePageCount * 2 <= report.pageCount, "\(report)")
        #expect(UInt64(report.pageCount) * 4_096 == rewritten)

        // The next rewrite takes those pages: the file does not grow.
        try Self.rewrite(database, round: 2)
        let reused = try Self.fileSize(files, "reuse.db")
        #expect(reused <= rewritten + 4 * 4_096, "\(reused) bytes after the second rewrite, \(rewritten) before")
        _ = try database.verify()
        try Self.checkRows(database, round: 2)

        // The documented trigger gives the space back.
        try database.checkpoint()
        let shrunk = try Self.fileSize(files, "reuse.db")
        let final = try database.verify()
        #expect(final.freePageCount * 20 < final.pageCount, "\(final)")
        #expect(shrunk * 10 < reused * 7, "\(shrunk) bytes after the checkpoint, \(reused) before")
        try Self.checkRows(database, round: 2)
        try database.close()
    }

    @Test func aWriteShrinksAFileMoreThanHalfFree() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "half.db", options: Self.options(files))
        try Self.load(database)
        let loaded = try Self.fileSize(files, "half.db")
        let removed = Set((0..<Self.rowCount).filter { $0 % 6 != 0 })
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in removed { try rows.removeValue(forKey: ShrinkTests.key(index)) }
        }
        // No checkpoint or close: the write itself gave the space back.
        let pruned = try Self.fileSize(files, "half.db")
        #expect(pruned * 3 < loaded, "\(pruned) bytes after removing five sixths, \(loaded) before")
        let report = try database.verify()
        #expect(report.freePageCount * 8 < report.pageCount, "\(report)")
        try Self.checkRows(database, round: 0, removed: removed)
        try database.close()
    }

    @Test func aFifthFreeWaitsForTheCheckpointAtClose() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "fifth.db", options: Self.options(files))
        try Self.load(database)
        let loaded = try Self.fileSize(files, "fifth.db")
        let removed = ShrinkTests.removedRows(0.4, seed: 8)
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in removed { try rows.removeValue(forKey: ShrinkTests.key(index)) }
        }
        let pruned = try Self.fileSize(files, "fifth.db")
        let report = try database.verify()
        #expect(report.freePageCount * 5 >= report.pageCount, "\(report)")
        #expect(pruned >= loaded, "\(pruned) bytes after the delete, \(loaded) before: shrunk by the write")
        try database.close()
        let closed = try Self.fileSize(files, "fifth.db")
        #expect(closed * 10 < pruned * 7, "\(closed) bytes after close, \(pruned) before")
        let reopened = try Database.open(at: "fifth.db", options: Self.options(files))
        let reopenedReport = try reopened.verify()
        #expect(reopenedReport.freePageCount * 20 < reopenedReport.pageCount, "\(reopenedReport)")
        try Self.checkRows(reopened, round: 0, removed: removed)
        try reopened.close()
    }

    @Test func crashesAtEveryPointOfADeferredShrinkRecover() throws {
        let recoveries = try EngineHarness.enumerateCrashPoints(.deferredShrink, seed: 12)
        #expect(recoveries > 100)
    }
}
