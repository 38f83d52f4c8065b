import Foundation
import StorageEngine
import TestSupport
import Testing

/// The file gives space back (SPEC.md §2.13): after a large delete, a checkpoint moves the
/// pages at the end of the file into free pages below and cuts the file; snapshots keep
/// reading their pages.
@Suite struct ShrinkTests {
    static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } }

    static func value(_ index: Int) -> [UInt8] {
        // Every 50th value overflows, so overflow chains move too.
        let length = index % 50 == 7 ? 9_000 : 60 + index % 40
        return (0..<length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
    }

    static func options(_ files: SimulatedFileSystem, shrinks: Bool = true) -> Database.Options {
        var options = Database.Options(pageSize: 4_096, durability: .full, fileSystem: files)
        options.shrinksAutomatically = shrinks
        return options
    }

    /// Loads 6,000 rows, then removes all but every seventh... of a random 40% in one transaction.
    static func loadAndPrune(_ database: Database, removing removed: Set<Int>) throws {
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<6_000 { try rows.setValue(value(index), forKey: key(index)) }
        }
        try database.checkpoint()
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in removed { try rows.removeValue(forKey: key(index)) }
        }
    }

    static func removedRows(_ fraction: Double, seed: UInt64) -> Set<Int> {
        var random = SeededRandom(seed: seed)
        var removed = Set<Int>()
        while removed.count < Int(6_000 * fraction) { removed.insert(random.int(in: 0...5_999)) }
        return removed
    }

    static func checkRows(_ transaction: ReadTransaction, removed: Set<Int>) throws {
        let rows = try #require(try transaction.tree(named: "rows"))
        #expect(try rows.count == 6_000 - removed.count)
        for index in stride(from: 0, to: 6_000, by: 7) {
            #expect(try rows.value(forKey: key(index)) == (removed.contains(index) ? nil : value(index)))
        }
    }

    @Test func aLargeDeleteGivesTheSpaceBack() throws {
        let removed = Self.removedRows(0.4, seed: 3)
        var sizes: [Bool: UInt64] = [:]
        for shrinks in [false, true] {
            let files = SimulatedFileSystem()
            let database = try Database.open(at: "shrink.db", options: Self.options(files, shrinks: shrinks))
            try Self.loadAndPrune(database, removing: removed)
            try database.close()
            sizes[shrinks] = try files.openFile(atPath: "shrink.db", create: false).size()
            let reopened = try Database.open(at: "shrink.db", options: Self.options(files, shrinks: shrinks))
            let report = try reopened.verify()
            try reopened.read { try Self.checkRows($0, removed: removed) }
            if shrinks {
                // What is left free is below the last page in use: at most a few percent.
                #expect(report.freePageCount * 20 < report.pageCount, "\(report)")
                #expect(UInt64(report.pageCount) * 4_096 == sizes[true])
            }
            try reopened.close()
        }
        let kept = try #require(sizes[false])
        let shrunk = try #require(sizes[true])
        // Copy-on-write copied nearly every page of the tree: without the shrink the file
        // keeps both copies' worth.
        #expect(shrunk * 10 < kept * 7, "shrunk to \(shrunk) bytes from \(kept)")
    }

    @Test func aSnapshotKeepsItsPagesUntilItEnds() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "snapshot.db", options: Self.options(files))
        let removed = Self.removedRows(0.4, seed: 4)
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<6_000 { try rows.setValue(Self.value(index), forKey: Self.key(index)) }
        }
        try database.checkpoint()
        let snapshot = try database.snapshot()
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in removed { try rows.removeValue(forKey: Self.key(index)) }
        }
        // Checkpoints while the snapshot lives move nothing it reads; new commits reuse
        // no page it reaches.
        for round in 0..<3 {
            try database.checkpoint()
            try database.write { transaction in
                let rows = try transaction.openTree(named: "rows")
                for index in 0..<200 { try rows.setValue([UInt8(round)], forKey: Self.key(10_000 + index)) }
            }
            try Self.checkRows(snapshot, removed: [])
        }
        let pinned = try files.openFile(atPath: "snapshot.db", create: false).size()
        snapshot.close()
        try database.checkpoint()
        let released = try files.openFile(atPath: "snapshot.db", create: false).size()
        #expect(released * 10 < pinned * 8, "\(released) bytes after the snapshot ended, \(pinned) before")
        _ = try database.verify()
        try database.read { transaction in
            let rows = try #require(try transaction.tree(named: "rows"))
            #expect(try rows.count == 6_000 - removed.count + 200)
        }
        try database.close()
    }

    @Test func theFileGrowsAgainAfterAShrink() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "regrow.db", options: Self.options(files))
        let removed = Self.removedRows(0.5, seed: 5)
        try Self.loadAndPrune(database, removing: removed)
        try database.checkpoint()
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in removed { try rows.setValue(Self.value(index), forKey: Self.key(index)) }
        }
        try database.close()
        let reopened = try Database.open(at: "regrow.db", options: Self.options(files))
        _ = try reopened.verify()
        try reopened.read { try Self.checkRows($0, removed: []) }
        try reopened.close()
    }

    @Test func crashesAtEveryPointOfAShrinkRecover() throws {
        let recoveries = try EngineHarness.enumerateCrashPoints(.shrink, seed: 11)
        #expect(recoveries > 100)
    }
}
