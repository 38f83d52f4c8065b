import StorageEngine
import TestSupport
import Testing

/// The write cursor (TreeEditor): random walks against an oracle with verify() after every
/// round, and the cases its in-place paths single out.
@Suite struct TreeEditorTests {
    static func open(_ files: SimulatedFileSystem, pageSize: Int = 512, spill: Int? = nil) throws -> Database {
        var options = Database.Options(pageSize: pageSize, durability: .full, fileSystem: files)
        if let spill { options.spillThreshold = spill * pageSize }
        return try Database.open(at: "editor.db", options: options)
    }

    static func key(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    @Test func randomWalksMatchTheOracle() throws {
        let base = SeededRandom.environmentSeed ?? 3_100
        let seeds = SeededRandom.environmentSeed == nil ? 60 : 1
        for offset in 0..<UInt64(seeds) {
            var random = SeededRandom(seed: base &+ offset)
            do {
                try Self.runWalks(random: &random)
            } catch {
                Issue.record("\(error) — \(SeededRandom(seed: base &+ offset).replayHint)")
                return
            }
        }
    }

    /// Loads a tree, then walks it round after round (some rounds rolled back, some in
    /// transactions that spill), verifying the file and comparing it with the oracle.
    static func runWalks(random: inout SeededRandom) throws {
        let pageSize = random.pick([512, 1_024])
        let database = try open(SimulatedFileSystem(), pageSize: pageSize, spill: random.chance(0.3) ? 16 : nil)
        var oracle: EngineOracle = [:]
        let loaded = random.int(in: 0...400)
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<loaded {
                let key = random.chance(0.5) ? Self.key(index) : EngineHarness.randomKey(&random)
                let value = EngineHarness.randomValue(&random, pageSize: pageSize)
                try rows.setValue(value, forKey: key)
                oracle["rows", default: [:]][key] = value
            }
        }
        struct RolledBack: Error {}
        for round in 0..<8 {
            var entries = oracle["rows", default: [:]]
            var besideEntries = oracle["more", default: [:]]
            let rollsBack = random.chance(0.15)
            do {
                try database.write { transaction in
                    for _ in 0..<random.int(in: 1...3) {
                        try EngineHarness.randomEditWalk(
                            try transaction.openTree(named: "rows"), entries: &entries,
                            beside: try transaction.openTree(named: "more"), besideEntries: &besideEntries,
                            random: &random, pageSize: pageSize)
                    }
                    if rollsBack { throw RolledBack() }
                }
                oracle["rows"] = entries
                oracle["more"] = besideEntries
            } catch is RolledBack {}
            let report = try database.verify()
            #expect(report.entryCount == oracle.values.reduce(0) { $0 + $1.count })
            if let difference = EngineHarness.difference(try EngineHarness.contents(of: database), oracle) {
                throw HarnessFailure("round \(round): \(difference)")
            }
        }
        try database.close()
    }

    /// Every value of leaves filled by appends (no free space) grown by one byte: the
    /// leaves split where they must, and every key keeps its new value.
    @Test func growingValuesInFullLeavesSplitsThem() throws {
        let database = try Self.open(SimulatedFileSystem())
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<600 { try rows.setValue([UInt8](repeating: 1, count: 20), forKey: Self.key(index)) }
        }
        try database.write { transaction in
            try transaction.openTree(named: "rows").edit { editor in
                while try editor.next() { try editor.replaceValue([UInt8](repeating: 2, count: 21)) }
            }
        }
        _ = try database.verify()
        let contents = try EngineHarness.contents(of: database)["rows"] ?? [:]
        #expect(contents.count == 600)
        #expect(contents.values.allSatisfy { $0 == [UInt8](repeating: 2, count: 21) })
    }

    /// A value replaced by one of the same length, or shorter, changes no page but the
    /// leaf's path: the transaction copies one path per leaf, as puts would.
    @Test func sameSizeReplacesKeepTheTreeShape() throws {
        let database = try Self.open(SimulatedFileSystem())
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<500 { try rows.setValue([UInt8](repeating: 1, count: 30), forKey: Self.key(index)) }
        }
        let before = try database.verify()
        try database.write { transaction in
            try transaction.openTree(named: "rows").edit { editor in
                for index in stride(from: 0, to: 500, by: 3) where try editor.seek(Self.key(index)) {
                    try editor.replaceValue([UInt8](repeating: 9, count: index % 2 == 0 ? 30 : 12))
                }
            }
        }
        let after = try database.verify()
        #expect(after.maximumDepth == before.maximumDepth)
        #expect(after.pageCount - after.freePageCount == before.pageCount - before.freePageCount)
        try database.read { transaction in
            let rows = try #require(try transaction.tree(named: "rows"))
            #expect(try rows.value(forKey: Self.key(3)) == [UInt8](repeating: 9, count: 12))
            #expect(try rows.value(forKey: Self.key(6)) == [UInt8](repeating: 9, count: 30))
            #expect(try rows.value(forKey: Self.key(4)) == [UInt8](repeating: 1, count: 30))
        }
    }

    /// A run of keys removed through the editor leaves the tree as compact as removing
    /// them one by one does (emptied leaves freed, thinned ones merged, B3).
    @Test func removingARunLeavesTheTreeAsCompactAsRemovals() throws {
        func pagesInUse(_ remove: (Tree, [[UInt8]]) throws -> Void) throws -> Int {
            let database = try Self.open(SimulatedFileSystem())
            try database.write { transaction in
                let rows = try transaction.openTree(named: "rows")
                for index in 0..<3_000 { try rows.setValue([UInt8(index % 251)], forKey: Self.key(index)) }
            }
            let removed = (0..<3_000).filter { (300..<2_700).contains($0) || $0 % 7 == 0 }.map(Self.key)
            try database.write { try remove(try $0.openTree(named: "rows"), removed) }
            let report = try database.verify()
            #expect(report.entryCount == 3_000 - removed.count)
            try database.close()
            return report.pageCount - report.freePageCount
        }
        let oneByOne = try pagesInUse { tree, keys in for key in keys { try tree.removeValue(forKey: key) } }
        let walked = try pagesInUse { tree, keys in
            try tree.edit { editor in
                for key in keys where try editor.seek(key) { try editor.removeEntry() }
            }
        }
        #expect(walked <= oneByOne + 2)
        let removedByKey = try pagesInUse { tree, keys in
            try tree.edit { editor in
                for key in keys {
                    let removed = try editor.removeEntry(forKey: key)
                    #expect(removed)
                }
            }
        }
        #expect(removedByKey == walked)
    }

    /// Seeks to ascending keys (the next key one entry on or dozens, present or absent,
    /// after a removal or not) find what a lookup of each key finds: the search forward
    /// from the editor's place answers as a search of the whole leaf.
    @Test func ascendingSeeksFindWhatLookupsFind() throws {
        var random = SeededRandom(seed: SeededRandom.environmentSeed ?? 41)
        let database = try Self.open(SimulatedFileSystem())
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in stride(from: 0, to: 6_000, by: 2) {
                try rows.setValue([UInt8(index % 251)], forKey: Self.key(index))
            }
        }
        var removed: Set<Int> = []
        try database.write { transaction in
            try transaction.openTree(named: "rows").edit { editor in
                var index = 0
                while index < 6_100 {
                    let found = try editor.seek(Self.key(index))
                    let expected = index < 6_000 && index % 2 == 0 && !removed.contains(index)
                    #expect(found == expected, "key \(index)")
                    if found {
                        #expect(try editor.withValue { Array($0) } == [UInt8(index % 251)], "key \(index)")
                        if random.chance(0.3) {
                            try editor.removeEntry()
                            removed.insert(index)
                        }
                    }
                    // Now and then the same key again (not after it: the search of the leaf).
                    if random.chance(0.05) { continue }
                    index += random.pick([1, 1, 2, 3, 5, 8, 13, 40, 70])
                }
            }
        }
        #expect(try database.verify().entryCount == 3_000 - removed.count)
    }

    /// removeEntry(forKey:) removes what a seek then removeEntry() remove, says whether
    /// the key was there, and leaves next() on the first entry after the key.
    @Test func removingByKeyIsASeekThenARemoval() throws {
        let database = try Self.open(SimulatedFileSystem())
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            #expect(try !rows.edit { try $0.removeEntry(forKey: Self.key(1)) })
            for index in stride(from: 0, to: 2_000, by: 2) { try rows.setValue([1, 2, 3], forKey: Self.key(index)) }
        }
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            try rows.edit { editor in
                // Present (every sixth), absent (odd) and past the last key, ascending.
                for index in 0..<2_100 where index % 6 == 0 || index % 6 == 1 {
                    let removed = try editor.removeEntry(forKey: Self.key(index))
                    #expect(removed == (index < 2_000 && index % 2 == 0), "key \(index)")
                }
                // Back to a key removed above, then to one kept.
                #expect(try editor.removeEntry(forKey: Self.key(498)) == false)
                #expect(try editor.next())
                #expect(try editor.currentKey == Self.key(500))
                #expect(try editor.removeEntry(forKey: Self.key(500)))
                #expect(try editor.next())
                #expect(try editor.currentKey == Self.key(502))
            }
        }
        let report = try database.verify()
        let kept = stride(from: 0, to: 2_000, by: 2).filter { $0 % 6 != 0 && $0 != 500 }
        #expect(report.entryCount == kept.count)
        try database.read { transaction in
            let rows = try #require(try transaction.tree(named: "rows"))
            for index in 0..<2_000 {
                #expect(try (rows.value(forKey: Self.key(index)) != nil) == kept.contains(index), "key \(index)")
            }
        }
    }

    @Test func anEditorNeedsAWriteTransactionAndAnEntry() throws {
        let database = try Self.open(SimulatedFileSystem())
        try database.write { try $0.openTree(named: "rows").setValue([1], forKey: [1]) }
        try database.read { transaction in
            let rows = try #require(try transaction.tree(named: "rows"))
            #expect(throws: StorageError.self) { try rows.makeEditor() }
        }
        try database.write { transaction in
            let editor = try transaction.openTree(named: "rows").makeEditor()
            #expect(try !editor.seek([0]))
            #expect(!editor.isOnEntry)
            #expect(throws: StorageError.self) { try editor.removeEntry() }
            #expect(throws: StorageError.self) { try editor.withValue { $0.count } }
            #expect(try editor.next())
            #expect(try editor.currentKey == [1])
            // Another change removes the entry under the editor: it notices.
            try transaction.openTree(named: "rows").removeValue(forKey: [1])
            #expect(throws: StorageError.self) { try editor.replaceValue([2]) }
            #expect(try !editor.next())
        }
    }

    /// A read cursor open on the tree sees the editor's change and refuses to go on.
    @Test func aReadCursorNoticesTheEditorsChange() throws {
        let database = try Self.open(SimulatedFileSystem())
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows")
            for index in 0..<10 { try rows.setValue([1], forKey: Self.key(index)) }
            let cursor = try rows.makeCursor()
            #expect(try cursor.first())
            try rows.edit { editor in
                #expect(try editor.seek(Self.key(4)))
                try editor.replaceValue([2])
            }
            #expect(throws: StorageError.self) { try cursor.next() }
        }
    }
}
