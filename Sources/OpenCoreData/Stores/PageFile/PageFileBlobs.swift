// External binary storage of the default store (SPEC.md §3.8). A large value of a binary
// attribute that allows external storage lives in the `blobs` tree of the same engine
// database, so a save stays one transaction; its row holds tag 14 and nothing else. The
// blob's key is derived from the row's primary key and the attribute's name, so a row
// re-encoded without reading the blob (an update of another attribute, a migration)
// still points at it, and no blob id needs allocating.
import Foundation
import StorageEngine

/// A binary attribute slot whose value may live in the blob tree.
struct PageFileBlobSlot {
    /// The slot in the entity layout.
    let slot: Int
    /// The attribute's name: part of the blob key.
    let name: String
    /// Whether the attribute allows external storage: only then are new large values moved out.
    let externalizes: Bool

    /// The non-transient, non-indexed binary and transformable attributes of `entity`.
    /// Indexed ones stay inline so index keys are always computed from the value itself.
    static func slots(of entity: NSEntityDescription, indexes: [PageFileIndex]) -> [PageFileBlobSlot] {
        let layout = entity.layout
        let indexed = Set(indexes.flatMap { $0.fields.map(\.slot) })
        var result: [PageFileBlobSlot] = []
        for (slot, property) in layout.properties.enumerated() {
            guard let attribute = property as? NSAttributeDescription, !attribute.isTransient,
                attribute.attributeType == .binaryDataAttributeType
                    || attribute.attributeType == .transformableAttributeType,
                !indexed.contains(slot)
            else { continue }
            result.append(
                PageFileBlobSlot(
                    slot: slot, name: attribute.name, externalizes: attribute.allowsExternalBinaryDataStorage))
        }
        return result
    }
}

extension PageFileStore {
    static let blobTreeName = "blobs"
    /// Values longer than this many bytes leave the row (Core Data's SQLite store uses
    /// "about 100 KB"; 64 KiB keeps rows, and so scans, small with 4 KiB pages).
    static let externalBinaryThreshold = 64 * 1024
    /// Bytes per chunk value: an overflow chain of 64 pages at 4 KiB.
    static let blobChunkSize = 256 * 1024
    static let blobFormatVersion: UInt8 = 1
    /// The header value: format, length, checksum.
    static let blobHeaderSize = 17

    /// The key prefix of one blob: primary key (K1), attribute name, 0x00.
    static func blobPrefix(_ primaryKey: Int64, _ name: String) -> [UInt8] {
        PageFileKey.primary(primaryKey) + Array(name.utf8) + [0]
    }

    static func blobKey(_ prefix: [UInt8], chunk: UInt32) -> [UInt8] {
        prefix + [
            UInt8(truncatingIfNeeded: chunk >> 24), UInt8(truncatingIfNeeded: chunk >> 16),
            UInt8(truncatingIfNeeded: chunk >> 8), UInt8(truncatingIfNeeded: chunk),
        ]
    }

    static func blobHeader(length: Int, checksum: UInt64) -> [UInt8] {
        var header = StoreByteWriter()
        header.byte(blobFormatVersion)
        header.fixed64(UInt64(length))
        header.fixed64(checksum)
        return header.bytes
    }

    /// Length and checksum of a header value; nil when it is not one.
    static func parseBlobHeader(_ bytes: [UInt8]) -> (length: Int, checksum: UInt64)? {
        guard bytes.count == blobHeaderSize, bytes[0] == blobFormatVersion else { return nil }
        return bytes.withUnsafeBytes { raw in
            var reader = StoreByteReader(raw, from: 1, what: "a blob header")
            guard let length = try? reader.fixed64(), let checksum = try? reader.fixed64(),
                length <= UInt64(Int.max / 2)
            else { return nil }
            return (Int(length), checksum)
        }
    }
}

extension PageFileWriter {

    /// Replaces the blob of (`primaryKey`, `name`) with `data`.
    func writeBlob(_ data: Data, primaryKey: Int64, name: String) throws {
        let tree = try transaction.openTree(named: PageFileStore.blobTreeName)
        let prefix = PageFileStore.blobPrefix(primaryKey, name)
        try removeBlob(prefix: prefix, in: tree)
        let bytes = [UInt8](data)
        try tree.setValue(
            PageFileStore.blobHeader(length: bytes.count, checksum: StorageChecksum.xxh64(bytes)),
            forKey: PageFileStore.blobKey(prefix, chunk: 0))
        var chunk: UInt32 = 1
        var start = 0
        while start < bytes.count {
            let end = min(start + PageFileStore.blobChunkSize, bytes.count)
            try bytes[start..<end].withUnsafeBytes { value in
                try PageFileStore.blobKey(prefix, chunk: chunk).withUnsafeBytes { key in
                    try tree.setValue(value, forKey: key)
                }
            }
            chunk += 1
            start = end
        }
    }

    /// Removes the header and every chunk under a blob prefix.
    private func removeBlob(prefix: [UInt8], in tree: Tree) throws {
        var keys: [[UInt8]] = []
        try tree.scan(from: prefix, to: PageFileKey.successor(ofPrefix: prefix)) { key, _ in
            keys.append(Array(key))
            return true
        }
        for key in keys { _ = try tree.removeValue(forKey: key) }
    }

    /// Removes the blob of (`primaryKey`, `name`), if any.
    func removeBlob(primaryKey: Int64, name: String) throws {
        guard let tree = try transaction.tree(named: PageFileStore.blobTreeName) else { return }
        try removeBlob(prefix: PageFileStore.blobPrefix(primaryKey, name), in: tree)
    }

    /// Removes the blobs of a deleted row: those its stored values point to, whether `row`
    /// holds them unresolved or already read (a tracked delete reads them for its tombstone).
    func removeBlobs(of row: StoreRow, info: PageFileCatalog.EntityInfo) throws {
        for blob in info.blobSlots where blob.slot < row.values.count {
            switch row.values[blob.slot] {
            case .unresolved:
                try removeBlob(primaryKey: row.objectID.key, name: blob.name)
            case .binary(let data) where blob.externalizes && data.count > PageFileStore.externalBinaryThreshold:
                // Read from the blob tree or kept inline: removing an absent blob does nothing.
                try removeBlob(primaryKey: row.objectID.key, name: blob.name)
            default:
                continue
            }
        }
    }

    /// `row`'s values as they are encoded: large values of externalizing slots go to the
    /// blob tree and read `.unresolved` (tag 14); a slot that held a blob and now holds
    /// something else must have been cleared by the caller (``releaseReplacedBlobs``).
    func externalizedValues(of row: StoreRow, info: PageFileCatalog.EntityInfo) throws -> [StoreValue] {
        var values = row.values
        for blob in info.blobSlots where blob.externalizes && blob.slot < values.count {
            guard case .binary(let data) = values[blob.slot], data.count > PageFileStore.externalBinaryThreshold
            else { continue }
            try writeBlob(data, primaryKey: row.objectID.key, name: blob.name)
            values[blob.slot] = .unresolved
        }
        return values
    }

    /// Before `slots` of the stored `row` take new values: frees the blobs they held.
    func releaseReplacedBlobs(of row: StoreRow, slots: some Sequence<Int>, info: PageFileCatalog.EntityInfo) throws {
        guard !info.blobSlots.isEmpty else { return }
        for slot in slots where slot < row.values.count {
            guard case .unresolved = row.values[slot], let blob = info.blobSlots.first(where: { $0.slot == slot })
            else { continue }
            try removeBlob(primaryKey: row.objectID.key, name: blob.name)
        }
    }

    /// Removes every blob whose prefix is not in `live` (after a migration rewrote the rows).
    func removeBlobs(except live: Set<[UInt8]>) throws {
        guard let blobs = try transaction.tree(named: PageFileStore.blobTreeName) else { return }
        var doomed: [[UInt8]] = []
        try blobs.scan { key, _ in
            if key.count < 4 || !live.contains(Array(key[..<(key.count - 4)])) { doomed.append(Array(key)) }
            return true
        }
        for key in doomed { _ = try blobs.removeValue(forKey: key) }
    }
}

extension PageFileRowReader {
    /// The bytes of the blob of (`primaryKey`, `name`).
    ///
    /// - Throws: `NSFileReadCorruptFileError` when it is missing, incomplete or fails its checksum.
    func blob(primaryKey: Int64, name: String) throws -> Data {
        let problem = { (what: String) in
            CoreDataError.make(
                NSFileReadCorruptFileError,
                "the external value of '\(name)' of row \(primaryKey) in \(catalog.path) \(what)")
        }
        guard let tree = try transaction.tree(named: PageFileStore.blobTreeName) else { throw problem("is missing") }
        let prefix = PageFileStore.blobPrefix(primaryKey, name)
        guard let raw = try tree.value(forKey: PageFileStore.blobKey(prefix, chunk: 0)) else {
            throw problem("is missing")
        }
        guard let header = PageFileStore.parseBlobHeader(raw) else { throw problem("has a damaged header") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(header.length, 16 << 20))
        var expected: UInt32 = 1
        var failure: NSError?
        try tree.scan(from: PageFileStore.blobKey(prefix, chunk: 1), to: PageFileKey.successor(ofPrefix: prefix)) {
            key, value in
            let chunk =
                key.count == prefix.count + 4 ? key[prefix.count...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
            guard chunk == expected, bytes.count + value.count <= header.length else {
                failure = problem("has a missing or extra chunk")
                return false
            }
            bytes.append(contentsOf: value)
            expected += 1
            return true
        }
        if let failure { throw failure }
        guard bytes.count == header.length else { throw problem("is \(bytes.count) bytes, not \(header.length)") }
        guard StorageChecksum.xxh64(bytes) == header.checksum else { throw problem("fails its checksum") }
        return Data(bytes)
    }

    /// Replaces `.unresolved` binary values of `row` with their blobs.
    func resolveBlobs(_ row: inout StoreRow, info: PageFileCatalog.EntityInfo) throws {
        // A value kept in the blob tree keeps its row out of the slot form.
        guard row.slots == nil else { return }
        for blob in info.blobSlots where blob.slot < row.values.count {
            if case .unresolved = row.values[blob.slot] {
                row.values[blob.slot] = .binary(
                    try self.blob(primaryKey: row.objectID.key, name: blob.name))
            }
        }
    }

    /// Resolves the blobs of every row of an entity that has blob slots.
    func resolveBlobs(_ rows: inout [StoreRow]) throws {
        guard catalog.hasBlobSlots else { return }
        var last: (entity: ObjectIdentifier, info: PageFileCatalog.EntityInfo)?
        for index in rows.indices {
            let entity = ObjectIdentifier(rows[index].objectID.entity)
            if last?.entity != entity { last = (entity, try catalog.info(for: rows[index].objectID.entity)) }
            guard let info = last?.info, !info.blobSlots.isEmpty else { continue }
            try resolveBlobs(&rows[index], info: info)
        }
    }
}
