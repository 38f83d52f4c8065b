import Foundation
import Synchronization
import TestSupport
import Testing

@testable import StorageEngine

/// A committed page's search table (`Page.prefixes`) is built on the page's first search by
/// a reader, not when a commit publishes the page: until then every search of the page
/// reads its slot array. Lookups with and without the table must agree, whoever searches.
@Suite struct SearchTableTests {
    /// Leaf and branch pages in the cache written by `transaction`, and how many of them
    /// have no search table yet.
    static func tablelessPages(_ database: Database, writtenBy transaction: UInt64) -> (
        pages: Int, tableless: Int
    ) {
        var pages = 0
        var tableless = 0
        for number in 1..<1_000 {
            guard let page = database.store.cachedPage(UInt64(number)), page.transaction == transaction,
                page.kindByte == PageKind.leaf.rawValue || page.kindByte == PageKind.branch.rawValue
            else { continue }
            pages += 1
            if page.prefixes == nil { tableless += 1 }
        }
        return (pages, tableless)
    }

    @Test func publishedPagesGetTheirTablesOnTheirFirstSearchAndEverySearchAgrees() throws {
        var options = Database.Options(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem())
        options.cacheSize = 160 * 512
        let database = try Database.open(at: "lazy.db", options: options)
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SeededRandom(environmentOr: 1_414)
        let hint = random.replayHint
        func checkAll(_ tree: Tree, _ label: String) throws {
            for (key, value) in model {
                #expect(try tree.value(forKey: key) == value, "\(label) — \(hint)")
            }
            var scanned: [[UInt8]] = []
            try tree.scan(from: nil, to: nil) { key, value in
                scanned.append(Array(key))
                return Array(value) == model[Array(key)]
            }
            #expect(scanned == model.keys.sorted { $0.lexicographicallyPrecedes($1) }, "\(label) scan — \(hint)")
        }
        for round in 0..<30 {
            try database.write { transaction in
                let tree = try transaction.openTree(named: "rows")
                for _ in 0..<random.int(in: 1...40) {
                    let key = EngineHarness.randomKey(&random)
                    if random.chance(0.15), !model.isEmpty {
                        let victim = random.pick(model.keys.sorted { $0.lexicographicallyPrecedes($1) })
                        _ = try tree.removeValue(forKey: victim)
                        model[victim] = nil
                    } else {
                        let value = [UInt8(truncatingIfNeeded: round)] + key
                        try tree.setValue(value, forKey: key)
                        model[key] = value
                    }
                }
                // The writer searches the committed pages it has not copied without tables.
                try checkAll(tree, "writer, round \(round)")
            }
            // The pages this commit published carry the newest transaction id in the cache.
            let transaction = (1..<1_000).compactMap { database.store.cachedPage(UInt64($0))?.transaction }.max() ?? 0
            let published = Self.tablelessPages(database, writtenBy: transaction)
            #expect(published.pages > 0 && published.tableless == published.pages, "round \(round): built at publish")
            try database.read { transaction in
                try checkAll(try #require(try transaction.tree(named: "rows")), "reader, round \(round)")
            }
            let searched = Self.tablelessPages(database, writtenBy: transaction)
            #expect(searched.tableless < published.tableless, "round \(round): no table built by the reader's search")
            try database.read { transaction in
                try checkAll(try #require(try transaction.tree(named: "rows")), "reader again, round \(round)")
            }
        }
        _ = try database.verify()
        try database.close()
    }

    /// Readers on other threads build tables (under the page store's lock) while the writer
    /// searches the same committed pages without the lock: every read transaction still
    /// sees one commit's values for every key.
    @Test func readersBuildingTablesWhileTheWriterSearchesSeeWholeCommits() throws {
        let database = try Database.open(
            at: "lazy-threads.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        let keys = (0..<400).map { withUnsafeBytes(of: UInt64($0 &* 7_919).bigEndian) { Array($0) } }
        try database.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for key in keys { try tree.setValue([0, 0], forKey: key) }
        }
        let rounds = 60
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            do {
                if worker == 0 {
                    for round in 1...rounds {
                        try database.write { transaction in
                            let tree = try transaction.openTree(named: "rows")
                            let value = withUnsafeBytes(of: UInt16(round).bigEndian) { Array($0) }
                            for key in keys {
                                let previous = withUnsafeBytes(of: UInt16(round - 1).bigEndian) { Array($0) }
                                guard try tree.value(forKey: key) == previous else {
                                    throw StorageError.corrupt("writer read a stale value in round \(round)")
                                }
                                try tree.setValue(value, forKey: key)
                            }
                        }
                    }
                } else {
                    for _ in 0..<rounds {
                        try database.read { transaction in
                            let tree = try #require(try transaction.tree(named: "rows"))
                            let first = try #require(try tree.value(forKey: keys[0]))
                            for key in keys where try tree.value(forKey: key) != first {
                                failures.withLock { $0.append("a reader saw two commits' values") }
                                return
                            }
                        }
                    }
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        _ = try database.verify()
        try database.close()
    }
}
