import Foundation
import StorageEngine
import TestSupport
import Testing

/// A sorted batch landing inside a tree (a save's index entries between existing ones)
/// fills its pages as an append at the end does (SPEC.md §2.2 B3): a full leaf splits
/// right after a key that continues an ascending run, not in half.
@Suite struct SplitFillTests {
    static func key(_ prefix: String, _ index: Int) -> [UInt8] { Array("\(prefix)\(100_000 + index)".utf8) }

    static func value(_ index: Int) -> [UInt8] { (0..<100).map { UInt8(truncatingIfNeeded: index &+ $0) } }

    /// Pages in use (all pages but the free ones) of a database holding `setup`'s
    /// entries, then `run` put in one transaction.
    static func usedPages(setup: [[UInt8]], run: [[UInt8]]) throws -> Int {
        let files = SimulatedFileSystem()
        let database = try Database.open(
            at: "fill.db", options: Database.Options(pageSize: 4_096, durability: .full, fileSystem: files))
        defer { try? database.close() }
        if !setup.isEmpty {
            try database.write { transaction in
                let tree = try transaction.openTree(named: "index")
                for (index, key) in setup.enumerated() { try tree.setValue(value(index), forKey: key) }
            }
        }
        try database.write { transaction in
            let tree = try transaction.openTree(named: "index")
            for (index, key) in run.enumerated() { try tree.setValue(value(index), forKey: key) }
        }
        try database.checkpoint()
        let report = try database.verify()
        try database.read { transaction in
            let tree = try #require(try transaction.tree(named: "index"))
            #expect(try tree.count == setup.count + run.count)
            for (index, key) in run.enumerated() where index % 97 == 0 {
                #expect(try tree.value(forKey: key) == value(index))
            }
        }
        return report.pageCount - report.freePageCount
    }

    @Test func aSortedRunInsideATreeFillsItsPages() throws {
        let before = (0..<1_000).map { Self.key("a", $0) }
        let after = (0..<1_000).map { Self.key("c", $0) }
        let run = (0..<4_000).map { Self.key("b", $0) }
        // The same entries appended in one ascending pass: every leaf full.
        let appended = try Self.usedPages(setup: [], run: before + run + after)
        let landed = try Self.usedPages(setup: before + after, run: run)
        // Halving splits would leave the run's ~120 pages half full (~60 pages more).
        #expect(landed <= appended + 6, "run inside the tree: \(landed) pages, appended: \(appended)")
    }

    @Test func runsIntoManyPlacesFillTheirPages() throws {
        // A save's entries of an index on a small-valued attribute: one ascending run per
        // value, each landing after the entries the value already has.
        func key(_ group: Int, _ index: Int) -> [UInt8] { Array("g\(group)-\(100_000 + index)".utf8) }
        let setup = (0..<10).flatMap { group in (0..<300).map { key(group, $0) } }
        let run = (0..<10).flatMap { group in (300..<1_500).map { key(group, $0) } }
        let appended = try Self.usedPages(setup: [], run: (setup + run).sorted { $0.lexicographicallyPrecedes($1) })
        let landed = try Self.usedPages(setup: setup, run: run)
        #expect(landed <= appended + 2 * 10 + 4, "runs inside the tree: \(landed) pages, appended: \(appended)")
    }
}
