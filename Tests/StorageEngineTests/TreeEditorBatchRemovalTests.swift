import StorageEngine
import TestSupport
import Testing

/// The editor's batch removal (TreeEditor.removeEntries(count:keys:)): random runs of
/// sorted keys (present, absent, repeated, whole leaves, every key) against an oracle with
/// verify() after every round, and the same tree as removing each key in turn.
@Suite struct TreeEditorBatchRemovalTests {
    static func key(_ value: Int) -> [UInt8] { TreeEditorTests.key(value) }

    /// Removes `keys` (sorted) through one batch call.
    @discardableResult
    static func removeInBatch(_ tree: Tree, _ keys: [[UInt8]]) throws -> Int {
        try tree.edit { editor in try Self.removeInBatch(editor, keys) }
    }

    static func removeInBatch(_ editor: TreeEditor, _ keys: [[UInt8]]) throws -> Int {
        // The keys back to back in one buffer, as the store's writer passes them.
        let bytes = keys.flatMap { $0 }
        var ends: [Int] = []
        for key in keys { ends.append((ends.last ?? 0) + key.count) }
        return try bytes.withUnsafeBytes { base in
            try editor.removeEntries(count: keys.count) { position in
                UnsafeRawBufferPointer(rebasing: base[(position == 0 ? 0 : ends[position - 1])..<ends[position]])
            }
        }
    }

    @Test func randomBatchesMatchTheOracle() throws {
        let base = SeededRandom.environmentSeed ?? 7_700
        let seeds = SeededRandom.environmentSeed == nil ? 40 : 1
        for offset in 0..<UInt64(seeds) {
            var random = SeededRandom(seed: base &+ offset)
            do {
                try Self.runBatches(random: &random)
            } catch {
                Issue.record("\(error) — \(SeededRandom(seed: base &+ offset).replayHint)")
                return
            }
        }
    }

    /// Loads a tree (values of every size, some overflowing), then removes sorted batches
    /// round after round, some rounds rolled back, some in transactions that spill, some
    /// with a put beside the batch, comparing with the oracle and verifying the file.
    static func runBatches(random: inout SeededRandom) throws {
        let pageSize = random.pick([512, 1_024])
        let database = try TreeEditorTests.open(
            SimulatedFileSystem(), pageSize: pageSize, spill: random.chance(0.3) ? 16 : nil)
        var entries: [[UInt8]: [UInt8]] = [:]
        let loaded = random.int(in: 0...1_500)
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<loaded {
                let key = random.chance(0.6) ? Self.key(index) : EngineHarness.randomKey(&random)
                let value =
                    random.chance(0.7)
                    ? [UInt8](repeating: UInt8(index % 251), count: random.int(in: 0...12))
                    : EngineHarness.randomValue(&random, pageSize: pageSize)
                try rows.setValue(value, forKey: key)
                entries[key] = value
            }
        }
        struct RolledBack: Error {}
        for round in 0..<6 {
            var next = entries
            let rollsBack = random.chance(0.15)
            do {
                try database.write { transaction in
                    let rows = try transaction.openTree(named: "rows")
                    let editor = try rows.makeEditor()
                    for _ in 0..<random.int(in: 1...3) {
                        let keys = batch(from: next, random: &random)
                        let removed = try removeInBatch(editor, keys)
                        let expected = Set(keys).filter { next[$0] != nil }
                        guard removed == expected.count else {
                            throw HarnessFailure("round \(round): removed \(removed) of \(expected.count)")
                        }
                        for key in expected { next[key] = nil }
                        if let last = keys.last, random.chance(0.3) {
                            // next() moves to the first entry after the batch's last key.
                            let moved = try editor.next()
                            let after = next.keys.filter { last.lexicographicallyPrecedes($0) }
                                .min { $0.lexicographicallyPrecedes($1) }
                            guard moved == (after != nil), try !moved || editor.currentKey == after else {
                                throw HarnessFailure("round \(round): next after the batch moved \(moved)")
                            }
                        }
                        if random.chance(0.2) {
                            // A change beside the batch, which the editor must notice.
                            let key = EngineHarness.randomKey(&random)
                            let value = EngineHarness.randomValue(&random, pageSize: pageSize)
                            try rows.setValue(value, forKey: key)
                            next[key] = value
                        }
                    }
                    if random.chance(0.8) { try editor.finish() }
                    if rollsBack { throw RolledBack() }
                }
                entries = next
            } catch is RolledBack {}
            let report = try database.verify()
            guard report.entryCount == entries.count else {
                throw HarnessFailure("round \(round): \(report.entryCount) entries, the oracle \(entries.count)")
            }
            if let difference = EngineHarness.difference(try EngineHarness.contents(of: database), ["rows": entries]) {
                throw HarnessFailure("round \(round): \(difference)")
            }
        }
        try database.close()
    }

    /// Sorted keys to remove: a share of the present ones (sometimes all, sometimes a
    /// contiguous run that empties whole leaves), absent ones, and some twice.
    static func batch(from entries: [[UInt8]: [UInt8]], random: inout SeededRandom) -> [[UInt8]] {
        let present = entries.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var keys: [[UInt8]]
        switch random.int(in: 0...3) {
        case 0: keys = present
        case 1:
            let start = present.isEmpty ? 0 : random.int(in: 0...(present.count - 1))
            keys = Array(present[start..<min(present.count, start + random.int(in: 1...400))])
        default:
            let share = random.pick([0.05, 0.15, 0.5, 0.9])
            keys = present.filter { _ in random.chance(share) }
        }
        keys += (0..<random.int(in: 0...20)).map { _ in EngineHarness.randomKey(&random) }
        keys += keys.filter { _ in random.chance(0.05) }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// A batch leaves the tree a removal of each key in turn leaves: the same entries, the
    /// same pages in use and depth (emptied leaves freed, thinned ones merged, B3).
    @Test func aBatchLeavesTheTreeOfSingleRemovals() throws {
        func shape(_ remove: (Tree, [[UInt8]]) throws -> Void) throws -> [Int] {
            let database = try TreeEditorTests.open(SimulatedFileSystem())
            try database.write { transaction in
                let rows = try transaction.openTree(named: "rows")
                for index in 0..<4_000 {
                    let value = [UInt8](repeating: UInt8(index % 251), count: index % 13)
                    try rows.setValue(value, forKey: Self.key(index))
                }
            }
            for pattern in [7, 3, 2] {
                let removed = (0..<4_100).filter { $0 % pattern == 0 || (1_000..<1_900).contains($0) }.map(Self.key)
                try database.write { try remove(try $0.openTree(named: "rows"), removed) }
            }
            let report = try database.verify()
            try database.close()
            return [report.entryCount, report.pageCount - report.freePageCount, report.maximumDepth]
        }
        let oneByOne = try shape { tree, keys in
            try tree.edit { editor in for key in keys { try editor.removeEntry(forKey: key) } }
        }
        let batched = try shape { tree, keys in try Self.removeInBatch(tree, keys) }
        #expect(batched == oneByOne)
        let kept = (0..<4_000).filter { (value: Int) -> Bool in
            value % 7 != 0 && value % 3 != 0 && value % 2 != 0 && !(1_000..<1_900).contains(value)
        }
        #expect(oneByOne[0] == kept.count)
    }

    /// Every key of the tree in one batch empties it; a batch on an empty tree, of no
    /// keys, or of absent keys only removes nothing and leaves next() after its last key.
    @Test func emptyTreesAndAbsentKeys() throws {
        let database = try TreeEditorTests.open(SimulatedFileSystem())
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            let none = try Self.removeInBatch(rows, [Self.key(1), Self.key(2)])
            #expect(none == 0)
            let nothing = try Self.removeInBatch(rows, [])
            #expect(nothing == 0)
            for index in stride(from: 0, to: 3_000, by: 2) { try rows.setValue([1, 2, 3], forKey: Self.key(index)) }
        }
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            try rows.edit { editor in
                let odd = stride(from: 1, to: 601, by: 2).map(Self.key)
                let removed = try Self.removeInBatch(editor, odd)
                #expect(removed == 0)
                #expect(try editor.next())
                #expect(try editor.currentKey == Self.key(600))
            }
        }
        #expect(try database.verify().entryCount == 1_500)
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            let all = (0..<3_001).map(Self.key)
            let removed = try Self.removeInBatch(rows, all)
            #expect(removed == 1_500)
            let moved = try rows.makeEditor().next()
            #expect(!moved)
        }
        let report = try database.verify()
        #expect(report.entryCount == 0)
        try database.close()
    }
}
