import Foundation
import TestSupport
import Testing

@testable import StorageEngine

/// A reader's lookups start each branch search at the child its previous lookup took
/// (DescentHint.swift). The hint only shortens the search: lookups in every order, hits
/// and misses, through trees deeper than the levels it remembers, find what the rows hold.
@Suite struct DescentHintTests {
    /// Keys of two shapes: 8-byte integers, and long keys sharing their first 8 bytes,
    /// so separators compare by prefix and by whole key.
    static func key(_ value: Int, long: Bool) -> [UInt8] {
        let number = withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) }
        return long ? Array("group-\(value / 500)-".utf8.prefix(8)) + number : number
    }

    static func value(_ index: Int) -> [UInt8] { (0..<(1 + index % 40)).map { UInt8(truncatingIfNeeded: index &+ $0) } }

    /// Every third key of 0..<rows is absent.
    static func expected(_ index: Int, rows: Int) -> [UInt8]? {
        index >= 0 && index < rows && index % 3 != 0 ? value(index) : nil
    }

    @Test(arguments: [false, true]) func lookupsInEveryOrderFindTheRows(long: Bool) throws {
        let options = Database.Options(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem())
        let database = try Database.open(at: "hint.db", options: options)
        let rows = 6_000
        try database.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for index in 0..<rows where index % 3 != 0 {
                try tree.setValue(Self.value(index), forKey: Self.key(index, long: long))
            }
        }
        try database.checkpoint()
        var random = SeededRandom(environmentOr: 7_117)
        let seedHint = random.replayHint
        var orders: [(String, [Int])] = [
            ("ascending", Array(-2..<(rows + 2))),
            ("descending", Array((-2..<(rows + 2)).reversed())),
            ("random", (0..<8_000).map { _ in random.int(in: -5...(rows + 5)) }),
        ]
        for step in [7, 37, 100, 251, 1_999] {
            orders.append(("every \(step)th", Array(stride(from: step % 5, to: rows + 3, by: step))))
        }
        // Ascending runs that jump back: the hint points past the key.
        orders.append(
            ("sawtooth", (0..<40).flatMap { round in stride(from: round * 13, to: rows, by: 401).map { $0 } }))
        try database.read { transaction in
            // One tree handle per order, so each order starts from the previous order's hint.
            let tree = try #require(try transaction.tree(named: "rows"))
            for (name, indices) in orders {
                var mismatches = 0
                for index in indices {
                    let key = index >= 0 ? Self.key(index, long: long) : [UInt8(truncatingIfNeeded: index & 0xFF)]
                    let found = try key.withUnsafeBytes { try tree.withValue(forKey: $0) { Array($0) } }
                    let expected = index >= 0 ? Self.expected(index, rows: rows) : nil
                    if found != expected { mismatches += 1 }
                }
                #expect(mismatches == 0, "\(name): \(mismatches) lookups found another value — \(seedHint)")
            }
        }
        _ = try database.verify()
    }

    @Test func aHintFromAnotherPageIsNotUsed() {
        var hint = DescentHint()
        hint.record(5, atLevel: 0, of: 40)
        hint.record(2, atLevel: 1, of: 41)
        hint.record(9, atLevel: 7, of: 42)
        #expect(hint.child(atLevel: 0, of: 40) == 5)
        #expect(hint.child(atLevel: 0, of: 41) == nil)
        #expect(hint.child(atLevel: 1, of: 41) == 2)
        #expect(hint.child(atLevel: 7, of: 42) == nil)
    }
}
