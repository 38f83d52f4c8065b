import Foundation
import StorageEngine
import TestSupport
import Testing

/// The catalog entries a commit carries over to the next transaction: every writer and
/// reader must find each tree as the last commit left it, whatever the cache holds.
@Suite struct CatalogCacheTests {
    static let treeNames = ["alpha", "beta", "gamma", "delta"]

    /// A random mix of puts, removals, tree deletions and abandoned transactions over a few
    /// trees, each transaction checked against a plain model of every tree.
    @Test func everyTransactionSeesTheTreesAsTheLastCommitLeftThem() throws {
        try randomRounds(seed: 0xCA7A_1065, mixingHandles: false)
    }

    /// The same with trees opened, looked up and checked by ``TreeHandle`` or by name at
    /// random: a handle must find what its name finds, in the transaction's open trees and
    /// in the cache, whichever way the tree was first opened or cached.
    @Test func handlesAndNamesFindTheSameTrees() throws {
        try randomRounds(seed: 0x4A4D_1E5, mixingHandles: true)
    }

    private func randomRounds(seed: UInt64, mixingHandles: Bool) throws {
        var random = SeededRandom(environmentOr: seed)
        var options = Database.Options()
        options.durability = .off
        options.checkpointThreshold = 64 << 10
        let path = DatabaseBasicsTests.temporaryPath("catalog-cache")
        let database = try Database.open(at: path, options: options)
        var model: [String: [[UInt8]: [UInt8]]] = [:]
        for round in 0..<300 {
            let name = random.pick(Self.treeNames)
            let action = random.int(in: 0...9)
            var next = model
            struct Abandoned: Error {}
            do {
                let byHandle = mixingHandles && random.chance(0.5)
                let checkByHandle = mixingHandles && random.chance(0.5)
                try database.write { transaction in
                    try Self.expect(transaction, holds: model, round: round, seed: random.seed, byHandle: checkByHandle)
                    switch action {
                    case 0:
                        #expect(try transaction.deleteTree(named: name) == (model[name] != nil))
                        next[name] = nil
                    case 1:
                        // Deleted and made again in one transaction: the new tree's entry wins.
                        _ = try transaction.deleteTree(named: name)
                        let tree =
                            byHandle
                            ? try transaction.openTree(TreeHandle.named(name)) : try transaction.openTree(named: name)
                        try tree.setValue([7], forKey: DatabaseBasicsTests.key(round))
                        next[name] = [DatabaseBasicsTests.key(round): [7]]
                    default:
                        let tree =
                            byHandle
                            ? try transaction.openTree(TreeHandle.named(name)) : try transaction.openTree(named: name)
                        var entries = next[name] ?? [:]
                        for _ in 0..<random.int(in: 1...40) {
                            let key = DatabaseBasicsTests.key(random.int(in: 0...400))
                            if random.chance(0.3) {
                                _ = try tree.removeValue(forKey: key)
                                entries[key] = nil
                            } else {
                                let value = random.bytes(random.int(in: 1...120))
                                try tree.setValue(value, forKey: key)
                                entries[key] = value
                            }
                        }
                        next[name] = entries
                    }
                    // Some transactions change trees and then give up: nothing of them may stay.
                    if action == 9 { throw Abandoned() }
                }
                model = next
            } catch is Abandoned {}
            let readByHandle = mixingHandles && random.chance(0.5)
            try database.read {
                try Self.expect($0, holds: model, round: round, seed: random.seed, byHandle: readByHandle)
            }
        }
        _ = try database.verify()
        try database.close()
    }

    /// Two handles taking turns: each one's writers must see the other's commits, whose
    /// transaction ids its cache never held.
    @Test func handlesTakingTurnsSeeEachOthersTrees() throws {
        let path = DatabaseBasicsTests.temporaryPath("catalog-cache-handles")
        let handles = [
            try Database.open(at: path, options: MultiProcessTests.options()),
            try Database.open(at: path, options: MultiProcessTests.options()),
        ]
        var model: [String: [[UInt8]: [UInt8]]] = [:]
        for round in 0..<80 {
            let handle = handles[round % 2]
            let name = Self.treeNames[(round / 2) % Self.treeNames.count]
            try handle.write { transaction in
                try Self.expect(transaction, holds: model, round: round, seed: 0)
                if round % 11 == 10 {
                    _ = try transaction.deleteTree(named: name)
                    model[name] = nil
                } else {
                    let key = DatabaseBasicsTests.key(round)
                    try transaction.openTree(named: name).setValue([UInt8(round)], forKey: key)
                    model[name, default: [:]][key] = [UInt8(round)]
                }
            }
            for reader in handles { try reader.read { try Self.expect($0, holds: model, round: round, seed: 0) } }
        }
        for handle in handles { try handle.close() }
    }

    /// A vacuum moves every tree to new pages under the same transaction id: the next
    /// writer must not find the old roots.
    @Test func aWriterAfterAVacuumFindsTheMovedTrees() throws {
        var options = Database.Options()
        options.durability = .off
        let database = try Database.open(
            at: DatabaseBasicsTests.temporaryPath("catalog-cache-vacuum"), options: options)
        var model: [String: [[UInt8]: [UInt8]]] = [:]
        for (index, name) in Self.treeNames.enumerated() {
            try database.write { transaction in
                let tree = try transaction.openTree(named: name)
                for key in 0..<(200 * (index + 1)) {
                    try tree.setValue(Array(repeating: UInt8(index), count: 60), forKey: DatabaseBasicsTests.key(key))
                    model[name, default: [:]][DatabaseBasicsTests.key(key)] = Array(repeating: UInt8(index), count: 60)
                }
            }
        }
        try database.write { transaction in
            let tree = try transaction.openTree(named: "alpha")
            for key in 0..<150 {
                _ = try tree.removeValue(forKey: DatabaseBasicsTests.key(key))
                model["alpha"]?[DatabaseBasicsTests.key(key)] = nil
            }
        }
        try database.vacuum()
        try database.write { transaction in
            try Self.expect(transaction, holds: model, round: 0, seed: 0)
            try transaction.openTree(named: "beta").setValue([1], forKey: DatabaseBasicsTests.key(9_999))
            model["beta"]?[DatabaseBasicsTests.key(9_999)] = [1]
        }
        try database.read { try Self.expect($0, holds: model, round: 1, seed: 0) }
        _ = try database.verify()
        try database.close()
    }

    static func expect(
        _ transaction: ReadTransaction, holds model: [String: [[UInt8]: [UInt8]]], round: Int, seed: UInt64,
        byHandle: Bool = false
    ) throws {
        for name in treeNames {
            let tree = byHandle ? try transaction.tree(TreeHandle.named(name)) : try transaction.tree(named: name)
            guard let expected = model[name] else {
                #expect(tree == nil, "round \(round), seed \(seed): tree \(name) should not exist")
                continue
            }
            let found = try #require(tree, "round \(round), seed \(seed): tree \(name) is missing")
            #expect(try found.count == expected.count, "round \(round), seed \(seed): count of \(name)")
            var entries: [[UInt8]: [UInt8]] = [:]
            try found.scan { key, value in
                entries[Array(key)] = Array(value)
                return true
            }
            #expect(entries == expected, "round \(round), seed \(seed): entries of \(name)")
        }
    }
}
