import Foundation
import StorageEngine
import TestSupport
import Testing

/// A put right after the previous put's key takes that put's path without a descent only
/// while the key sorts before the next entry: the leaf's next cell, else the nearest
/// separator to the right on the path. Ascending runs that cross leaves and separators,
/// replace entries, and interleave with puts to another tree and removals land where a
/// descent puts them.
@Suite struct PutRunTests {
    static func key(_ number: Int) -> [UInt8] { Array("k\(1_000_000 + number)".utf8) }

    @Test func ascendingRunsLandWhereADescentPutsThem() throws {
        let base = SeededRandom.environmentSeed ?? 7_300
        let seeds = SeededRandom.environmentSeed == nil ? 12 : 1
        for offset in 0..<seeds {
            var random = SeededRandom(seed: base &+ UInt64(offset))
            do {
                try Self.runs(random: &random)
            } catch {
                Issue.record("\(error) — \(SeededRandom(seed: base &+ UInt64(offset)).replayHint)")
            }
        }
    }

    static func runs(random: inout SeededRandom) throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(
            at: "runs.db", options: Database.Options(pageSize: 4_096, durability: .full, fileSystem: files))
        defer { try? database.close() }
        var model: [Int: [UInt8]] = [:]
        let space = 6_000
        try database.write { transaction in
            let tree = try transaction.openTree(named: "index")
            for number in stride(from: 0, to: space, by: random.int(in: 2...5)) {
                let value = random.bytes(random.int(in: 0...40))
                try tree.setValue(value, forKey: key(number))
                model[number] = value
            }
        }
        try database.write { transaction in
            let tree = try transaction.openTree(named: "index")
            let other = try transaction.openTree(named: "other")
            for _ in 0..<random.int(in: 2...6) {
                // One ascending run from a random start: new keys between existing ones,
                // and existing ones replaced.
                var number = random.int(in: 0...(space - 1))
                while number < space {
                    let value = random.bytes(random.int(in: 0...60))
                    try tree.setValue(value, forKey: key(number))
                    model[number] = value
                    if random.chance(0.02) { try other.setValue([1], forKey: key(number)) }
                    if random.chance(0.02) {
                        // Near the run's place, or anywhere.
                        let removed =
                            random.chance(0.5) ? number - random.int(in: 0...3) : random.int(in: 0...(space - 1))
                        #expect(try tree.removeValue(forKey: key(removed)) == (model[removed] != nil))
                        model[removed] = nil
                    }
                    number += random.int(in: 1...9)
                }
            }
        }
        try database.checkpoint()
        _ = try database.verify()
        try database.read { transaction in
            let tree = try #require(try transaction.tree(named: "index"))
            let entries = try tree.entries()
            let expected = model.sorted { $0.key < $1.key }
            #expect(entries.count == expected.count)
            for (entry, (number, value)) in zip(entries, expected)
            where entry.key != key(number) || entry.value != value {
                Issue.record("entry \(String(decoding: entry.key, as: UTF8.self)), expected \(number)")
                return
            }
        }
    }
}
