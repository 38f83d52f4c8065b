import Foundation
import TestSupport
import Testing

@testable import StorageEngine

/// Pins the on-disk layout of SPEC.md §2: a format change must update these bytes and
/// the spec together.
@Suite struct FormatGoldenTests {
    @Test func checksumIsXXH64() {
        #expect(checksum([]) == 0xEF46_DB37_51D8_E999)
        #expect(checksum(Array("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(checksum(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        let long = Array("Nobody inspects the spammish repetition".utf8)
        #expect(checksum(long) == 0xFBCE_A83C_8A37_8BF1)
    }

    @Test func metaSlotBytes() {
        let state = CommitState(transaction: 7, catalogRoot: 3, freeListHead: 5, pageCount: 9)
        let bytes = MetaSlot.encode(state, pageSize: 4_096, slot: 1)
        #expect(bytes.count == 256)
        #expect(Array(bytes[0..<8]) == Array("OCDSTORE".utf8))
        #expect(Array(bytes[8..<24]) == [1, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 1, 0, 0, 0])
        #expect(
            Array(bytes[24..<56]) == [
                7, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0,
            ])
        #expect(bytes[56..<248].allSatisfy { $0 == 0 })
        #expect(get64(bytes, 248) == checksum(Array(bytes[0..<248])))
        guard
            case .valid(let decoded, let pageSize) = MetaSlot.decode([UInt8](repeating: 0, count: 256) + bytes, slot: 1)
        else {
            Issue.record("the encoded slot does not decode")
            return
        }
        #expect(decoded == state && pageSize == 4_096)
    }

    @Test func leafPageBytes() throws {
        let files = SimulatedFileSystem()
        var options = Database.Options(pageSize: 512, durability: .full, fileSystem: files)
        options.checkpointOnClose = true
        let database = try Database.open(at: "golden.db", options: options)
        try database.write { try $0.openTree(named: "t").setValue([0xAA, 0xBB], forKey: [0x01, 0x02, 0x03]) }
        try database.close()
        let file = try #require(files.contents(ofPath: "golden.db"))
        // Page 1 is the tree's only leaf: one cell at the end of the page.
        let leaf = Array(file[512..<1024])
        #expect(get64(leaf, 0) == checksum(Array(leaf[8..<512])))
        #expect(get64(leaf, 8) == 1)  // its own page number
        #expect(get64(leaf, 16) == 1)  // written by transaction 1
        #expect(Array(leaf[24..<40]) == [1, 0, 1, 0, 0xF4, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(leaf[40..<42]) == [0xF4, 0x01])  // slot 0 -> offset 500
        #expect(Array(leaf[500..<512]) == [3, 0, 0, 2, 0, 0, 0, 1, 2, 3, 0xAA, 0xBB])
    }
}
