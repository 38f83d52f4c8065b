import TestSupport
import Testing

@testable import StorageEngine

/// Values read from a file that the engine adds to or converts, forged at their limits with
/// valid checksums: each is a corruption error, never a trap and never a file the engine
/// then writes into a state it cannot reopen.
@Suite struct ForgedValueTests {
    private static func options(_ files: SimulatedFileSystem) -> Database.Options {
        var options = Database.Options(pageSize: 512, durability: .full, fileSystem: files)
        options.checkpointOnClose = true
        return options
    }

    /// A catalog entry whose count is `UInt64.max` (`Tree.count` converts it to `Int`).
    @Test func aForgedTreeEntryCountIsCorruption() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "f.db", options: Self.options(files))
        try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        try database.write { transaction in
            let core = transaction.core
            let name = Array("t".utf8)
            let stored = try #require(try name.withUnsafeBytes { try core.value(in: core.catalog, key: $0) })
            let entry = try #require(CatalogEntry(decoding: stored))
            let forged = CatalogEntry(root: entry.root, count: UInt64.max).encoded
            _ = try name.withUnsafeBytes { key in
                try forged.withUnsafeBytes { try core.put(core.catalog, key: key, value: $0) }
            }
        }
        let error = #expect(throws: StorageError.self) {
            _ = try database.read { try $0.tree(named: "t")?.count }
        }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("entries, impossible in") == true)
        try database.close()
    }

    /// A meta slot at the last transaction id (2^63 - 1): the next commit would record
    /// one no build can open, so the write is refused as damage.
    @Test func aForgedTransactionIdAtTheLimitIsCorruption() throws {
        let files = SimulatedFileSystem()
        try Database.open(at: "f.db", options: Self.options(files)).close()
        var data = try #require(files.contents(ofPath: "f.db"))
        let state = CommitState(
            transaction: (1 << 63) - 1, catalogRoot: 0, freeListHead: 0, pageCount: 1)
        data.replaceSubrange(0..<MetaSlot.size, with: MetaSlot.encode(state, pageSize: 512, slot: 0))
        files.setContents(data, ofPath: "f.db")
        let database = try Database.open(at: "f.db", options: Self.options(files))
        let error = #expect(throws: StorageError.self) {
            try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("limit of 2^63") == true)
        try database.close()
    }
}
