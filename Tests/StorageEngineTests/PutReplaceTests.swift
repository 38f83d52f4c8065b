import StorageEngine
import TestSupport
import Testing

/// A put of an existing key with an inline value over an inline one rewrites the value
/// in its cell (BTree+Write.swift); every other replacement removes and inserts the cell.
/// Both must leave the same entries: values that keep, shrink or grow their length, grow
/// past the leaf's free bytes (the leaf splits), or move into and out of overflow chains,
/// checked against a dictionary and by `verify()` after every transaction.
@Suite struct PutReplaceTests {
    static func key(_ number: Int) -> [UInt8] { Array("key\(1_000 + number)".utf8) }

    @Test(arguments: [UInt64(11), 12, 13])
    func replacementsLeaveWhatRemoveAndInsertLeave(seed: UInt64) throws {
        var random = SeededRandom(environmentOr: seed)
        let files = SimulatedFileSystem()
        let database = try Database.open(
            at: "replace.db", options: Database.Options(pageSize: 512, durability: .full, fileSystem: files))
        defer { try? database.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        for round in 0..<30 {
            try database.write { transaction in
                let tree = try transaction.openTree(named: "t")
                for _ in 0..<random.int(in: 1...40) {
                    let key = Self.key(random.int(in: 0...60))
                    let length: Int
                    switch random.int(in: 0...9) {
                    case 0: length = random.int(in: 200...700)  // overflows on 512-byte pages
                    case 1, 2: length = model[key]?.count ?? 8  // the same length
                    default: length = random.int(in: 0...60)
                    }
                    let value = random.bytes(length)
                    try tree.setValue(value, forKey: key)
                    model[key] = value
                }
            }
            let contents = try EngineHarness.contents(of: database)
            #expect(
                EngineHarness.difference(contents, ["t": model]) == nil,
                "round \(round), \(random.replayHint)")
            _ = try database.verify()
        }
    }
}
