import StorageEngine
import TestSupport
import Testing

/// `Tree.scan(prefixes:)` walks one cursor through many prefixes (an IN list's index
/// points), finding a sorted next prefix from where the last one ended: it must visit
/// exactly what `scan(ranges:)` visits for the ranges `prefix <= key < successor(prefix)`.
@Suite struct KeyPrefixesTests {
    /// The least key above every key beginning with `prefix`; nil when there is none.
    static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }

    @Test func prefixesHoldTheirBytesBackToBack() {
        var prefixes = KeyPrefixes()
        #expect(prefixes.isEmpty)
        prefixes.append([1, 2])
        let appended = [[1, 2, 3], [1, 2, 3], [1, 2]].map { prefixes.appendUnlessRepeated($0) }
        #expect(appended == [true, false, true])
        prefixes.append([])
        #expect(prefixes.count == 4)
        #expect(prefixes.bytes == [1, 2, 1, 2, 3, 1, 2])
        #expect(prefixes.ends == [2, 5, 7, 7])
        #expect((0..<4).map { prefixes[$0] } == [[1, 2], [1, 2, 3], [1, 2], []])
        #expect(prefixes.bounds(of: 3) == 7..<7)
        let headed = prefixes.prefixed(by: [9])
        #expect((0..<4).map { headed[$0] } == [[9, 1, 2], [9, 1, 2, 3], [9, 1, 2], [9]])
        #expect(prefixes.prefixed(by: []) == prefixes)
        #expect(KeyPrefixes([[4], [5, 6]]).bytes == [4, 5, 6])
    }

    /// Sorted, unsorted, repeated, nested, empty and all-0xFF prefixes, short and long
    /// (many entries each, or one), early stops; in a write transaction (pages without
    /// search tables) and after commit.
    @Test func aScanOfManyPrefixesVisitsWhatItsRangesVisit() throws {
        let database = try Database.open(
            at: "prefixes.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        var random = SeededRandom(environmentOr: 91)
        let hint = random.replayHint
        func randomKey() -> [UInt8] {
            var key = EngineHarness.randomKey(&random)
            if random.chance(0.1) { key[0] = 0xFF }
            if random.chance(0.1) { key[key.count - 1] = 0xFF }
            return key
        }
        func randomPrefixes() -> [[UInt8]] {
            var prefixes: [[UInt8]] = []
            for _ in 0..<random.int(in: 0...60) {
                let key = randomKey()
                let length = random.chance(0.05) ? 0 : random.int(in: 1...key.count)
                prefixes.append(Array(key.prefix(length)))
                if random.chance(0.1), let last = prefixes.last { prefixes.append(last) }
            }
            if random.chance(0.7) { prefixes.sort { $0.lexicographicallyPrecedes($1) } }
            return prefixes
        }
        func check(_ tree: Tree) throws {
            for _ in 0..<150 {
                let list = randomPrefixes()
                var expected: [(Int, [UInt8])] = []
                for (ordinal, prefix) in list.enumerated() {
                    try tree.scan(from: prefix.isEmpty ? nil : prefix, to: Self.successor(of: prefix)) { key, _ in
                        expected.append((ordinal, Array(key)))
                        return true
                    }
                }
                let stop = random.chance(0.3) ? random.int(in: 0...max(expected.count, 1)) : Int.max
                var visited: [(Int, [UInt8])] = []
                try tree.scan(prefixes: KeyPrefixes(list)) { ordinal, key, value in
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
            for _ in 0..<900 {
                let key = randomKey()
                try tree.setValue(key.reversed(), forKey: key)
            }
            try check(tree)
        }
        try database.read { transaction in try check(try #require(try transaction.tree(named: "t"))) }
        try database.close()
    }

    /// `seek(nearby:)` lands where `seek(_:)` does for keys sought in order, out of order,
    /// repeated, past the end, and after the tree changed under the cursor.
    @Test func aNearbySeekLandsWhereASeekDoes() throws {
        let database = try Database.open(
            at: "nearby.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        var random = SeededRandom(environmentOr: 93)
        let hint = random.replayHint
        try database.write { transaction in
            let tree = try transaction.openTree(named: "t")
            for _ in 0..<800 {
                let key = EngineHarness.randomKey(&random)
                try tree.setValue(key, forKey: key)
            }
            let nearby = try tree.makeCursor()
            let plain = try tree.makeCursor()
            for round in 0..<20 {
                var probes = (0..<random.int(in: 1...80)).map { _ in EngineHarness.randomKey(&random) }
                if round % 3 != 2 { probes.sort { $0.lexicographicallyPrecedes($1) } }
                if round == 10 { probes.append([0xFF, 0xFF]) }
                for probe in probes {
                    let found = try probe.withUnsafeBytes { try nearby.seek(nearby: $0) }
                    #expect(found == (try plain.seek(probe)), "\(hint)")
                    if found { #expect(try nearby.key == (try plain.key), "\(hint)") }
                }
                if round == 5 { try tree.setValue([1], forKey: [0x50, 0x50]) }
            }
        }
        try database.close()
    }

    /// Points a few entries apart, as an IN list's over an index of numbers: each one found
    /// from where the last ended, every entry visited once.
    @Test func denseSortedPointsVisitEachEntryOnce() throws {
        let database = try Database.open(
            at: "points.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        try database.write { transaction in
            let tree = try transaction.openTree(named: "t")
            for number in 0..<3_000 {
                // A two-byte point, then a one-byte suffix (a primary key), two entries per point.
                for suffix in [UInt8(1), 2] {
                    try tree.setValue([], forKey: [UInt8(number >> 8), UInt8(number & 0xFF), suffix])
                }
            }
            var points = KeyPrefixes()
            var wanted: [[UInt8]] = []
            for number in stride(from: 3, to: 3_000, by: 7) {
                points.append([UInt8(number >> 8), UInt8(number & 0xFF)])
                wanted.append([UInt8(number >> 8), UInt8(number & 0xFF), 1])
                wanted.append([UInt8(number >> 8), UInt8(number & 0xFF), 2])
            }
            // A point past the end, and one with no entries.
            points.append([0x20, 0])
            var visited: [[UInt8]] = []
            try tree.scan(prefixes: points) { _, key, _ in
                visited.append(Array(key))
                return true
            }
            #expect(visited == wanted)
        }
        try database.close()
    }
}
