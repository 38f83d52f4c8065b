import Foundation
import StorageEngine
import TestSupport
import Testing

/// A shrink packs sparse trees (SPEC.md §2.13 step 2): after a delete of 15% of the rows
/// at random, every leaf is that much emptier; the shrink rewrites the tree into full
/// leaves, so the file ends up as small as the same rows loaded afresh.
@Suite struct PackTests {
    static let rowCount = 20_000

    /// Inline values of 60 to 99 bytes.
    static func value(_ index: Int) -> [UInt8] {
        (0..<(60 + index % 40)).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
    }

    /// Pages in use after loading `rows` in key order into a fresh database.
    static func freshPages(_ rows: [Int]) throws -> Int {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "fresh.db", options: ShrinkTests.options(files))
        defer { try? database.close() }
        try database.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for index in rows { try tree.setValue(value(index), forKey: ShrinkTests.key(index)) }
        }
        try database.checkpoint()
        let report = try database.verify()
        return report.pageCount - report.freePageCount
    }

    @Test func aShrinkAfterARandomDeletePacksTheLeaves() throws {
        var random = SeededRandom(seed: 7)
        var removed = Set<Int>()
        while removed.count < Self.rowCount * 15 / 100 { removed.insert(random.int(in: 0...(Self.rowCount - 1))) }
        let remaining = (0..<Self.rowCount).filter { !removed.contains($0) }
        var pageCounts: [Bool: Int] = [:]
        for shrinks in [false, true] {
            let files = SimulatedFileSystem()
            let database = try Database.open(at: "pack.db", options: ShrinkTests.options(files, shrinks: shrinks))
            try database.write { transaction in
                let tree = try transaction.openTree(named: "rows")
                for index in 0..<Self.rowCount { try tree.setValue(Self.value(index), forKey: ShrinkTests.key(index)) }
            }
            try database.checkpoint()
            try database.write { transaction in
                let tree = try transaction.openTree(named: "rows")
                for index in removed { try tree.removeValue(forKey: ShrinkTests.key(index)) }
            }
            try database.checkpoint()
            #expect(try database.verify().entryCount == remaining.count)
            try database.read { transaction in
                let tree = try #require(try transaction.tree(named: "rows"))
                for index in stride(from: 0, to: Self.rowCount, by: 13) {
                    #expect(
                        try tree.value(forKey: ShrinkTests.key(index))
                            == (removed.contains(index) ? nil : Self.value(index)))
                }
            }
            try database.close()
            pageCounts[shrinks] = Int(try files.openFile(atPath: "pack.db", create: false).size()) / 4_096
            // The packed file opens as any other, and takes more commits.
            let reopened = try Database.open(at: "pack.db", options: ShrinkTests.options(files, shrinks: shrinks))
            try reopened.write { try $0.openTree(named: "rows").setValue([1], forKey: ShrinkTests.key(99_999)) }
            _ = try reopened.verify()
            try reopened.close()
        }
        let fresh = try Self.freshPages(remaining)
        let packed = try #require(pageCounts[true])
        let unpacked = try #require(pageCounts[false])
        // Leaves keeping 85% of their cells would take ~70 pages more than a fresh load;
        // packed, the file is the fresh load's size give or take the shrink's slack.
        #expect(packed <= fresh + 24, "packed \(packed) pages, a fresh load \(fresh), unpacked \(unpacked)")
        #expect(unpacked > packed * 2)
    }
}
