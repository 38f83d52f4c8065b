import StorageEngine
import TestSupport
import Testing

/// Reader lookups through a page cache far smaller than the tree, so pages are evicted and
/// reloaded in the middle of descents (the reader's fast path keeps its own slot table in
/// step with the cache).
@Suite struct PageCacheTests {
    static func key(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    static func value(_ index: Int, large: Bool) -> [UInt8] {
        let count = large ? 700 + index % 300 : 1 + index % 60
        return (0..<count).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
    }

    @Test func lookupsThroughATinyCacheMatchTheRows() throws {
        var options = Database.Options(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem())
        options.cacheSize = 512
        let database = try Database.open(at: "cache.db", options: options)
        let rows = 3_000
        try database.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for index in 0..<rows where index % 3 != 0 {
                try tree.setValue(Self.value(index, large: index % 97 == 1), forKey: Self.key(index))
            }
        }
        try database.checkpoint()
        var random = SeededRandom(environmentOr: 4_242)
        let seedHint = random.replayHint
        try database.read { transaction in
            let tree = try #require(try transaction.tree(named: "rows"))
            for _ in 0..<4_000 {
                let index = random.int(in: 0...rows)
                let expected = index % 3 != 0 && index < rows ? Self.value(index, large: index % 97 == 1) : nil
                let found = try tree.value(forKey: Self.key(index))
                let inPlace = try Self.key(index).withUnsafeBytes { try tree.withValue(forKey: $0) { Array($0) } }
                #expect(found == expected, "key \(index) — \(seedHint)")
                #expect(inPlace == expected, "key \(index), in place — \(seedHint)")
                if found != expected || inPlace != expected { return }
            }
        }
        // A snapshot keeps reading its pages while a writer replaces them.
        let snapshot = try database.snapshot()
        defer { snapshot.close() }
        try database.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for index in stride(from: 1, to: rows, by: 3) { try tree.setValue([7], forKey: Self.key(index)) }
        }
        let old = try #require(try snapshot.tree(named: "rows"))
        for index in stride(from: 1, to: rows, by: 3) {
            #expect(try old.value(forKey: Self.key(index)) == Self.value(index, large: index % 97 == 1))
        }
        try database.read { transaction in
            let tree = try #require(try transaction.tree(named: "rows"))
            for index in stride(from: 1, to: rows, by: 3) { #expect(try tree.value(forKey: Self.key(index)) == [7]) }
        }
        _ = try database.verify()
    }
}
