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

    /// A catalog value (§2.2): the root page, then the entry count, little-endian; the
    /// commit's stack-built form and the array form agree byte for byte.
    @Test func catalogEntryBytes() {
        let entry = CatalogEntry(root: 0x0102_0304_0506_0708, count: 0x1122_3344_5566_7788)
        let golden: [UInt8] = [
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
        ]
        #expect(entry.encoded == golden)
        #expect(entry.withEncoded { Array($0) } == golden)
        #expect(CatalogEntry(decoding: golden) == entry)
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
        #expect(bytes[56..<248].allSatisfy { $0 == 0 })  // no successor (M3), reserved
        #expect(get64(bytes, 248) == checksum(Array(bytes[0..<248])))
        guard
            case .valid(let decoded, let pageSize, let successor) = MetaSlot.decode(
                [UInt8](repeating: 0, count: 256) + bytes, slot: 1)
        else {
            Issue.record("the encoded slot does not decode")
            return
        }
        #expect(decoded == state && pageSize == 4_096 && successor == 0)
    }

    /// M3: the older slot names the newer meta's transaction in bytes 56..<64.
    @Test func metaSlotSuccessorBytes() {
        let state = CommitState(transaction: 7, catalogRoot: 3, freeListHead: 5, pageCount: 9)
        let bytes = MetaSlot.encode(state, pageSize: 512, slot: 0, successor: 0x0102_0304)
        #expect(Array(bytes[56..<64]) == [4, 3, 2, 1, 0, 0, 0, 0])
        #expect(bytes[64..<248].allSatisfy { $0 == 0 })
        #expect(get64(bytes, 248) == checksum(Array(bytes[0..<248])))
        guard case .valid(let decoded, _, let successor) = MetaSlot.decode(bytes, slot: 0) else {
            Issue.record("the encoded slot does not decode")
            return
        }
        #expect(decoded == state && successor == 0x0102_0304)
        // A successor at or below the slot's own transaction is refused (a forged slot).
        guard case .invalid = MetaSlot.decode(MetaSlot.encode(state, pageSize: 512, slot: 0, successor: 7), slot: 0)
        else {
            Issue.record("a successor equal to the slot's transaction decoded")
            return
        }
        // A slot of zeros was never written.
        guard case .neverWritten = MetaSlot.decode(bytes + [UInt8](repeating: 0, count: 256), slot: 1) else {
            Issue.record("a zero slot is not reported as never written")
            return
        }
    }

    /// The first checkpoint of a new database writes slot 1, then names it in slot 0
    /// (M3): the bytes of page 0 after a clean close.
    @Test func pageZeroAfterTheFirstCheckpoint() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "golden.db", options: .init(pageSize: 512, fileSystem: files))
        try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        try database.close()
        let file = try #require(files.contents(ofPath: "golden.db"))
        let newest = CommitState(transaction: 1, catalogRoot: 2, freeListHead: 0, pageCount: 3)
        let created = CommitState(transaction: 0, catalogRoot: 0, freeListHead: 0, pageCount: 1)
        #expect(Array(file[256..<512]) == MetaSlot.encode(newest, pageSize: 512, slot: 1))
        #expect(Array(file[0..<256]) == MetaSlot.encode(created, pageSize: 512, slot: 0, successor: 1))
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

    /// Log format 2 (SPEC.md §2.3): the header, page frames, and a short free record, with
    /// the checksum chain recomputed from the spec's definition.
    @Test func logFrameBytes() throws {
        let files = SimulatedFileSystem()
        var options = Database.Options(pageSize: 512, durability: .full, fileSystem: files)
        options.checkpointOnClose = false
        let database = try Database.open(at: "golden.db", options: options)
        try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        try database.write { try $0.openTree(named: "t").setValue([2], forKey: [1]) }
        try database.close()
        let log = try #require(files.contents(ofPath: "golden.db-wal"))
        #expect(Array(log[0..<8]) == Array("OCDWALOG".utf8))
        #expect(Array(log[8..<16]) == [2, 0, 0, 0, 0, 2, 0, 0])  // format 2, page size 512
        let salt = get64(log, 16)
        #expect(get64(log, 24) == 0)  // base transaction
        #expect(log[32..<56].allSatisfy { $0 == 0 })
        #expect(get64(log, 56) == checksum(Array(log[0..<56])))
        // Walk the frames as recovery does: (page number, transaction, flags, payload).
        var frames: [(page: UInt64, transaction: UInt64, flags: UInt32, payload: [UInt8])] = []
        var position = 64
        var chain = salt
        while position + 64 <= log.count, get64(log, position + 48) == salt {
            let header = Array(log[position..<position + 64])
            let length = Int(get32(header, 20))
            let payloadBytes = length == 0 ? 512 : length
            let payload = Array(log[position + 64..<position + 64 + payloadBytes])
            var hashed = Array(header[0..<56])
            hashed += withUnsafeBytes(
                of: (length == 0 ? get64(payload, 0) : checksum(payload)).littleEndian, Array.init)
            chain = checksum(hashed, seed: chain)
            #expect(get64(header, 56) == chain)
            frames.append((get64(header, 0), get64(header, 8), get32(header, 16), payload))
            position += 64 + payloadBytes
        }
        // Transaction 1: the tree's leaf and the catalog leaf; transaction 2: a 16-byte
        // free record listing both, then their copies, the last flagged commit.
        #expect(frames.map(\.transaction) == [1, 1, 2, 2, 2])
        #expect(frames.map(\.flags) == [0, 1, 0, 0, 1])
        let record = frames[2]
        #expect(record.page == 0 && record.payload.count == 16)
        #expect(Set([get64(record.payload, 0), get64(record.payload, 8)]) == Set(frames[0...1].map(\.page)))
        #expect(frames[3...].allSatisfy { $0.page != 0 && $0.payload.count == 512 })
        // The rest of the file is zeros (W3): the first commit's frames (2 of 576 bytes)
        // reached the end of the file, which then grew by 4 frames of zeros.
        #expect(log.count == 64 + 2 * 576 + 4 * 576)
        #expect(log[position...].allSatisfy { $0 == 0 })
    }
}
