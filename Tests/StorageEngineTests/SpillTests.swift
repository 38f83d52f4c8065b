import Foundation
import TestSupport
import Testing

@testable import StorageEngine

/// Write transactions larger than the writer's memory (SPEC.md §2.4 step 7a): dirty pages
/// past the spill limit go to their slots of the page file before the commit, are read back
/// when needed, and nothing but the committing transaction ever sees them.
@Suite struct SpillTests {
    static let pageSize = 512
    static let limit = 16

    static func options(_ files: SimulatedFileSystem) -> Database.Options {
        var options = Database.Options(pageSize: pageSize, durability: .full, fileSystem: files)
        options.spillThreshold = limit * pageSize
        return options
    }

    static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } }

    /// Every ninth value overflows into a chain of pages.
    static func value(_ index: Int, round: Int = 0) -> [UInt8] {
        let length = index % 9 == 4 ? 1_300 : 10 + index % 30
        return (0..<length).map { UInt8(truncatingIfNeeded: index &* 7 &+ round &* 13 &+ $0) }
    }

    /// A scattered order of `0..<count`, so that puts land on pages spilled long ago.
    static func scattered(_ count: Int) -> [Int] { (0..<count).map { ($0 &* 7_919) % count } }

    /// Puts `count` rows in scattered order, then overwrites every third and removes every
    /// fifth: most of those pages were spilled and are read back and changed again.
    static func bigTransaction(_ transaction: WriteTransaction, count: Int, oracle: inout [[UInt8]: [UInt8]]) throws {
        let rows = try transaction.openTree(named: "rows")
        for index in scattered(count) {
            try rows.setValue(value(index), forKey: key(index))
            oracle[key(index)] = value(index)
        }
        for index in scattered(count) where index % 3 == 0 {
            try rows.setValue(value(index, round: 1), forKey: key(index))
            oracle[key(index)] = value(index, round: 1)
        }
        for index in scattered(count) where index % 5 == 0 {
            try rows.removeValue(forKey: key(index))
            oracle[key(index)] = nil
        }
    }

    static func rows(of transaction: ReadTransaction) throws -> [[UInt8]: [UInt8]] {
        try EngineHarness.contents(of: transaction)["rows"] ?? [:]
    }

    /// `database` holds `oracle`, passes `verify()`, and does again once reopened.
    static func expectCommitted(_ oracle: [[UInt8]: [UInt8]], in database: Database, files: SimulatedFileSystem)
        throws
    {
        #expect(try database.read { try rows(of: $0) } == oracle)
        _ = try database.verify()
        try database.close()
        let reopened = try Database.open(at: "spill.db", options: options(files))
        #expect(try reopened.read { try rows(of: $0) } == oracle)
        _ = try reopened.verify()
        try reopened.close()
    }

    @Test func spillingTransactionReadsItsLatestPagesAndCommitsThemDirectly() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "spill.db", options: Self.options(files))
        var oracle: [[UInt8]: [UInt8]] = [:]
        try database.write { transaction in
            let writer = try #require(transaction.core.writer)
            let rows = try transaction.openTree(named: "rows")
            var mostDirty = 0
            for index in Self.scattered(1_500) {
                try rows.setValue(Self.value(index), forKey: Self.key(index))
                oracle[Self.key(index)] = Self.value(index)
                mostDirty = max(mostDirty, writer.dirty.count)
            }
            #expect(!writer.spilled.isEmpty)
            // Bounded by the limit, not by the transaction (about 700 pages): a put adds at
            // most a path, its splits and an overflow chain to what the limit allows.
            #expect(mostDirty <= 2 * Self.limit)
            for index in Self.scattered(1_500) where index % 3 == 0 {
                try rows.setValue(Self.value(index, round: 1), forKey: Self.key(index))
                oracle[Self.key(index)] = Self.value(index, round: 1)
            }
            for index in Self.scattered(1_500) where index % 5 == 0 {
                try rows.removeValue(forKey: Self.key(index))
                oracle[Self.key(index)] = nil
            }
            // A tree filled and deleted within the transaction: its spilled pages are freed.
            let scratch = try transaction.openTree(named: "scratch")
            for index in 0..<400 { try scratch.setValue(Self.value(index), forKey: Self.key(index)) }
            #expect(try transaction.deleteTree(named: "scratch"))
            // Point reads and a full scan see the newest version of every spilled page.
            for index in 0..<1_500 { #expect(try rows.value(forKey: Self.key(index)) == oracle[Self.key(index)]) }
            #expect(try Self.rows(of: transaction) == oracle)
        }
        // The log holds nothing of the transaction: its pages went to the page file.
        #expect(try database.committedLogBytes() == 0)
        try Self.expectCommitted(oracle, in: database, files: files)
    }

    /// Pages first written in the current log and freed by the next commit are reused at
    /// once (F1); spilled, their page-file slots hold the new images, which the commit's
    /// checkpoint must not overwrite with the log's older ones.
    @Test func pagesReusedFromTheLogKeepTheirSpilledImages() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "spill.db", options: Self.options(files))
        var oracle: [[UInt8]: [UInt8]] = [:]
        func put(_ indices: Range<Int>, round: Int, _ transaction: WriteTransaction) throws {
            let rows = try transaction.openTree(named: "rows")
            for index in indices {
                try rows.setValue(Self.value(index, round: round), forKey: Self.key(index))
                oracle[Self.key(index)] = Self.value(index, round: round)
            }
        }
        try database.write { try put(0..<12, round: 0, $0) }
        try database.write { try put(0..<12, round: 1, $0) }
        #expect(try database.committedLogBytes() > 0)
        try database.write { transaction in
            try put(1_000..<1_600, round: 0, transaction)
            #expect(!(transaction.core.writer?.spilled.isEmpty ?? true))
        }
        try Self.expectCommitted(oracle, in: database, files: files)
    }

    @Test func snapshotsAndNewReadersNeverSeeSpilledPages() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "spill.db", options: Self.options(files))
        var before: [[UInt8]: [UInt8]] = [:]
        try database.write { transaction in try Self.bigTransaction(transaction, count: 600, oracle: &before) }
        let snapshot = try database.snapshot()
        var after = before
        try database.write { transaction in
            try Self.bigTransaction(transaction, count: 1_200, oracle: &after)
            #expect(!(transaction.core.writer?.spilled.isEmpty ?? true))
            #expect(try Self.rows(of: snapshot) == before)
            #expect(try database.read { try Self.rows(of: $0) } == before)
        }
        #expect(try Self.rows(of: snapshot) == before)
        #expect(try database.read { try Self.rows(of: $0) } == after)
        snapshot.close()
        _ = try database.verify()
        try database.close()
    }

    @Test func rolledBackSpillLeavesTheStoreAsBeforeAndItsSpaceReusable() throws {
        struct RolledBack: Error {}
        func base(_ database: Database) throws -> [[UInt8]: [UInt8]] {
            var oracle: [[UInt8]: [UInt8]] = [:]
            try database.write { try Self.bigTransaction($0, count: 500, oracle: &oracle) }
            // Leaves free pages in the free list for the next transaction to reuse.
            try database.write { transaction in
                let rows = try transaction.openTree(named: "rows")
                for index in 0..<200 where oracle.removeValue(forKey: Self.key(index)) != nil {
                    try rows.removeValue(forKey: Self.key(index))
                }
            }
            return oracle
        }
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "spill.db", options: Self.options(files))
        let oracle = try base(database)
        let report = try database.verify()
        #expect(throws: RolledBack.self) {
            try database.write { transaction in
                var ignored = oracle
                try Self.bigTransaction(transaction, count: 1_500, oracle: &ignored)
                #expect(!(transaction.core.writer?.spilled.isEmpty ?? true))
                throw RolledBack()
            }
        }
        let afterRollback = try database.verify()
        #expect(afterRollback.transaction == report.transaction)
        #expect(afterRollback.pageCount == report.pageCount)
        #expect(afterRollback.freePageCount == report.freePageCount)
        #expect(try database.read { try Self.rows(of: $0) } == oracle)
        var expected = oracle
        try database.write { try Self.bigTransaction($0, count: 1_500, oracle: &expected) }
        let final = try database.verify()
        #expect(try database.read { try Self.rows(of: $0) } == expected)
        try database.close()
        // The same two transactions without the rolled-back one end at the same size.
        let control = try Database.open(at: "control.db", options: Self.options(SimulatedFileSystem()))
        var controlOracle = try base(control)
        try control.write { try Self.bigTransaction($0, count: 1_500, oracle: &controlOracle) }
        #expect(try control.verify().pageCount == final.pageCount)
        try control.close()
    }

    /// A spill write that fails fails its transaction only: nothing committed depends on
    /// it, so the handle is not poisoned and the next transaction commits.
    @Test func failedSpillWriteRollsBackWithoutPoisoning() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "spill.db", options: Self.options(files))
        var oracle: [[UInt8]: [UInt8]] = [:]
        try database.write { try Self.bigTransaction($0, count: 300, oracle: &oracle) }
        let failure = #expect(throws: StorageError.self) {
            try database.write { transaction in
                let rows = try transaction.openTree(named: "rows")
                // The next write of the file system is the first spill's.
                files.injectFault(.ioError, at: 0, of: .write, persistent: false)
                for index in 5_000..<6_000 { try rows.setValue(Self.value(index), forKey: Self.key(index)) }
            }
        }
        #expect(failure?.code == .io)
        #expect(try database.read { try Self.rows(of: $0) } == oracle)
        try database.write { try Self.bigTransaction($0, count: 900, oracle: &oracle) }
        try Self.expectCommitted(oracle, in: database, files: files)
    }

    @Test func anotherHandlesSnapshotNeverSeesSpilledPages() throws {
        var options = Database.Options()
        options.durability = .normal
        options.multiProcess = true
        options.pageSize = Self.pageSize
        options.spillThreshold = Self.limit * Self.pageSize
        let path = DatabaseBasicsTests.temporaryPath("spill-handles")
        let writer = try Database.open(at: path, options: options)
        let reader = try Database.open(at: path, options: options)
        var before: [[UInt8]: [UInt8]] = [:]
        try writer.write { try Self.bigTransaction($0, count: 400, oracle: &before) }
        // The reader's snapshot keeps the commit out of the page file (L2): the spilled
        // pages are read back and logged.
        let snapshot = try reader.snapshot()
        var after = before
        try writer.write { transaction in
            try Self.bigTransaction(transaction, count: 1_200, oracle: &after)
            #expect(!(transaction.core.writer?.spilled.isEmpty ?? true))
            #expect(try Self.rows(of: snapshot) == before)
        }
        #expect(try writer.committedLogBytes() > 0)
        #expect(try Self.rows(of: snapshot) == before)
        #expect(try reader.read { try Self.rows(of: $0) } == after)
        snapshot.close()
        // Without another snapshot the next spilling transaction commits directly.
        var last = after
        try writer.write { try Self.bigTransaction($0, count: 1_000, oracle: &last) }
        #expect(try reader.read { try Self.rows(of: $0) } == last)
        _ = try writer.verify()
        _ = try reader.verify()
        try reader.close()
        try writer.close()
    }
}
