import Foundation
import TestSupport
import Testing

@testable import StorageEngine

/// A handle's write transactions reuse one writer state (WriterState+Reuse.swift): the next
/// transaction finds it exactly as a new one, whatever the last one did (spilled, freed,
/// opened trees, committed, rolled back, failed), and a transaction kept past its end keeps
/// its state to itself.
@Suite struct WriterReuseTests {
    static let pageSize = 512

    static func options(_ files: SimulatedFileSystem) -> Database.Options {
        var options = Database.Options(pageSize: pageSize, durability: .full, fileSystem: files)
        options.spillThreshold = 16 * pageSize
        return options
    }

    static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } }

    static func value(_ index: Int, round: Int) -> [UInt8] {
        (0..<(10 + index % 30)).map { UInt8(truncatingIfNeeded: index &* 7 &+ round &* 13 &+ $0) }
    }

    /// Puts 1,200 rows into two trees in scattered order (spilling), then removes every
    /// third (freeing pages): every field of the writer state is in use afterwards.
    static func dirtyEverything(_ transaction: WriteTransaction, round: Int, oracle: inout [[UInt8]: [UInt8]]) throws {
        let writer = try #require(transaction.core.writer)
        let rows = try transaction.openTree(named: "rows")
        let other = try transaction.openTree(named: "other-\(round)")
        for index in (0..<1_200).map({ ($0 &* 7_919) % 1_200 }) {
            try rows.setValue(value(index, round: round), forKey: key(index))
            try other.setValue(value(index, round: round), forKey: key(index))
            oracle[key(index)] = value(index, round: round)
        }
        #expect(writer.runHint != nil)
        for index in stride(from: 0, to: 1_200, by: 3) {
            try rows.removeValue(forKey: key(index))
            oracle[key(index)] = nil
        }
        #expect(!writer.spilled.isEmpty)
        #expect(!writer.dirty.isEmpty)
        // The first transaction's removals free only its own pages, which it reuses at once.
        #expect(!writer.freed.isEmpty || round == 0)
        #expect(!writer.pathPages.isEmpty)
        #expect(transaction.core.trees.count == 2)
    }

    /// `transaction`'s writer state is `previous` (when given), set up exactly as a new one.
    static func expectFresh(_ transaction: WriteTransaction, reusing previous: ObjectIdentifier?) throws {
        let core = transaction.core
        let writer = try #require(core.writer)
        if let previous { #expect(ObjectIdentifier(writer) == previous) }
        #expect(writer.transaction == core.snapshot.transaction + 1)
        #expect(writer.pageCount == core.snapshot.pageCount)
        #expect(writer.basePageCount == core.snapshot.pageCount)
        #expect(writer.dirty.isEmpty)
        #expect(writer.spilled.isEmpty)
        #expect(writer.spillAt == writer.spillLimit)
        #expect(writer.spillLimit == 16)
        #expect(writer.taken.isEmpty)
        #expect(writer.freed.isEmpty)
        #expect(!writer.freeListReturned)
        #expect(writer.reusable.allSatisfy { $0 >= 1 && $0 < writer.pageCount })
        #expect(writer.reusable == writer.reusable.sorted(by: >))
        #expect(writer.pathPages.isEmpty)
        #expect(writer.pathIndices.isEmpty)
        #expect(writer.appendHint == nil)
        #expect(writer.runHint == nil)
        #expect(writer.spareTrees.count == 0)
        #expect(core.trees.count == 0)
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            #expect(writer.freedThisTransaction.isEmpty)
            #expect(!writer.isCommitting)
        #endif
    }

    struct Rollback: Error {}

    @Test func reusedStateCarriesNothingOverAfterCommitRollbackOrError() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "reuse.db", options: Self.options(files))
        var oracle: [[UInt8]: [UInt8]] = [:]
        let first = try database.write { transaction in
            try Self.expectFresh(transaction, reusing: nil)
            try Self.dirtyEverything(transaction, round: 0, oracle: &oracle)
            return ObjectIdentifier(try #require(transaction.core.writer))
        }
        #expect(database.spareWriter != nil)
        // Rolled back by the body's error.
        var discarded = oracle
        #expect(throws: Rollback.self) {
            try database.write { transaction in
                try Self.expectFresh(transaction, reusing: first)
                // The tree table's storage came along (no allocation for the first tree).
                #expect(transaction.core.trees.capacity >= 8)
                try Self.dirtyEverything(transaction, round: 1, oracle: &discarded)
                throw Rollback()
            }
        }
        // Ended by an engine error halfway through.
        #expect(throws: StorageError.self) {
            try database.write { transaction in
                try Self.expectFresh(transaction, reusing: first)
                try Self.dirtyEverything(transaction, round: 2, oracle: &discarded)
                _ = try transaction.openTree(named: "")
            }
        }
        try database.write { transaction in
            try Self.expectFresh(transaction, reusing: first)
            try Self.dirtyEverything(transaction, round: 3, oracle: &oracle)
        }
        try database.write { transaction in try Self.expectFresh(transaction, reusing: first) }
        #expect(try database.read { try EngineHarness.contents(of: $0)["rows"] ?? [:] } == oracle)
        #expect(try database.read { try $0.treeNames() }.sorted() == ["other-0", "other-3", "rows"])
        _ = try database.verify()
        try database.close()
        let reopened = try Database.open(at: "reuse.db", options: Self.options(files))
        #expect(try reopened.read { try EngineHarness.contents(of: $0)["rows"] ?? [:] } == oracle)
        _ = try reopened.verify()
        try reopened.close()
    }

    @Test func transactionKeptPastItsEndKeepsItsState() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "kept.db", options: Self.options(files))
        var kept: WriteTransaction?
        try database.write { transaction in
            kept = transaction
            try transaction.openTree(named: "rows").setValue([1], forKey: [1])
        }
        let stale = try #require(kept)
        #expect(database.spareWriter == nil)
        let staleWriter = try #require(stale.core.writer)
        try database.write { transaction in
            try Self.expectFresh(transaction, reusing: nil)
            #expect(transaction.core.writer !== staleWriter)
            try transaction.openTree(named: "rows").setValue([2], forKey: [2])
        }
        // The kept transaction is closed, and the next one did not touch its state.
        #expect(throws: StorageError.self) { try stale.openTree(named: "rows") }
        #expect(staleWriter.freeListReturned)
        #expect(try database.read { try EngineHarness.contents(of: $0)["rows"] ?? [:] } == [[1]: [1], [2]: [2]])
        kept = nil
        try database.close()
    }
}
