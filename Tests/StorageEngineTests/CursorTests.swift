import StorageEngine
import TestSupport
import Testing

/// Cursor movement over many leaves, in both directions, against a sorted array.
@Suite struct CursorTests {
    @Test func seekNextPreviousFirstLastAcrossLeaves() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(
            at: "cursor.db", options: .init(pageSize: 512, durability: .off, fileSystem: files))
        var random = SeededRandom(environmentOr: 31)
        var keys = Set<[UInt8]>()
        try database.write { transaction in
            let tree = try transaction.openTree(named: "t")
            for _ in 0..<600 {
                let key = EngineHarness.randomKey(&random)
                keys.insert(key)
                try tree.setValue(key, forKey: key)
            }
        }
        let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
        try database.read { transaction in
            let cursor = try #require(try transaction.tree(named: "t")).makeCursor()
            var forward: [[UInt8]] = []
            var more = try cursor.first()
            while more {
                forward.append(try cursor.key)
                #expect(try cursor.value == cursor.key)
                more = try cursor.next()
            }
            #expect(forward == sorted, "\(random.replayHint)")
            var backward: [[UInt8]] = []
            more = try cursor.last()
            while more {
                backward.append(try cursor.key)
                more = try cursor.previous()
            }
            #expect(backward == sorted.reversed())
            for _ in 0..<200 {
                let probe = EngineHarness.randomKey(&random)
                let expected = sorted.first { !$0.lexicographicallyPrecedes(probe) }
                let found = try cursor.seek(probe)
                #expect(found == (expected != nil))
                if let expected { #expect(try cursor.key == expected) }
                let before = sorted.last { $0.lexicographicallyPrecedes(probe) }
                #expect(try cursor.seek(before: probe) == (before != nil))
                if let before { #expect(try cursor.key == before) }
            }
        }
        try database.close()
    }

    /// `scan(ranges:)` walks one cursor through many ranges, searching only the current leaf
    /// when a range starts there: it must visit exactly what a separate scan of each range
    /// visits, in that order, for sorted, unsorted, overlapping, empty and open ranges, in
    /// a write transaction (pages without search tables) and after commit.
    @Test func aScanOfManyRangesVisitsWhatSeparateScansVisit() throws {
        let database = try Database.open(
            at: "ranges.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        var random = SeededRandom(environmentOr: 77)
        let hint = random.replayHint
        func randomRanges() -> [(lower: [UInt8]?, upper: [UInt8]?)] {
            var ranges: [(lower: [UInt8]?, upper: [UInt8]?)] = []
            for _ in 0..<random.int(in: 0...40) {
                let lower = random.chance(0.05) ? nil : EngineHarness.randomKey(&random)
                var upper = random.chance(0.05) ? nil : EngineHarness.randomKey(&random)
                if let low = lower, let high = upper, high.lexicographicallyPrecedes(low), random.chance(0.8) {
                    upper = low + [UInt8(random.int(in: 0...255))]
                }
                ranges.append((lower, upper))
            }
            if random.chance(0.7) {
                ranges.sort { ($0.lower ?? []).lexicographicallyPrecedes($1.lower ?? []) }
            }
            return ranges
        }
        func check(_ tree: Tree) throws {
            for _ in 0..<150 {
                let ranges = randomRanges()
                var expected: [(Int, [UInt8])] = []
                for (ordinal, range) in ranges.enumerated() {
                    try tree.scan(from: range.lower, to: range.upper) { key, _ in
                        expected.append((ordinal, Array(key)))
                        return true
                    }
                }
                let stop = random.chance(0.3) ? random.int(in: 0...max(expected.count, 1)) : Int.max
                var visited: [(Int, [UInt8])] = []
                try tree.scan(ranges: ranges) { ordinal, key, value in
                    #expect(Array(value) == Array(key).reversed())
                    visited.append((ordinal, Array(key)))
                    return visited.count < stop
                }
                let wanted = Array(expected.prefix(stop))
                #expect(visited.map(\.0) == wanted.map(\.0), "\(hint)")
                #expect(visited.map(\.1) == wanted.map(\.1), "\(hint)")
            }
        }
        try database.write { transaction in
            let tree = try transaction.openTree(named: "t")
            for _ in 0..<700 {
                let key = EngineHarness.randomKey(&random)
                try tree.setValue(key.reversed(), forKey: key)
            }
            try check(tree)
        }
        try database.read { transaction in try check(try #require(try transaction.tree(named: "t"))) }
        try database.close()
    }

    @Test func aCursorNoticesChangesToItsTree() throws {
        let database = try Database.open(
            at: "c.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        try database.write { transaction in
            let tree = try transaction.openTree(named: "t")
            try tree.setValue([1], forKey: [1])
            let cursor = try tree.makeCursor()
            #expect(try cursor.first())
            try tree.setValue([2], forKey: [2])
            #expect(throws: StorageError.self) { _ = try cursor.next() }
        }
        try database.close()
    }
}

/// Concurrent committers in full durability share syncs.
@Suite struct GroupCommitTests {
    @Test func eightWritersShareSyncs() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(
            at: "group.db", options: .init(pageSize: 4_096, durability: .full, fileSystem: files))
        files.syncLatency = 10_000
        let before = files.count(of: .sync)
        DispatchQueueRunner.concurrently(8) { thread in
            for index in 0..<25 {
                try? database.write { transaction in
                    try transaction.openTree(named: "t").setValue(
                        [UInt8(thread)], forKey: [UInt8(thread), UInt8(index)])
                }
            }
        }
        let syncs = files.count(of: .sync) - before
        let count = try database.read { try $0.tree(named: "t")?.count ?? 0 }
        #expect(count == 200)
        #expect(syncs < 100, "\(syncs) syncs for 200 concurrent commits: they should share syncs")
        _ = try database.verify()
        try database.close()
    }
}
