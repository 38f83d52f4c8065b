// A row a save deletes, read as its deletion needs it (PageFileWriter+Save.swift): the
// version that optimistic locking checks, and the values of only the slots the deletion
// reads — index fields, blob slots, the to-ones whose removed links it records. The other
// slots stay null: a deleted person's names are never made into strings. A save that
// keeps history reads deleted rows whole instead (their tombstones need them), and a
// version conflict reports the row read again whole. A to-one read only for its
// reference index entry reads as its destination's key (`.integer`, the form the entry's
// key takes), so no object ID is made for it.
import Foundation
import StorageEngine

/// Reads deleted rows of one transaction; the entity's row tree and slots are looked up
/// once for a run of rows of one entity.
struct PageFileDeletedRowReader {
    let reader: PageFileRowReader
    private var entity: NSEntityDescription?
    /// A cursor on the entity's row tree: rows deleted in key order (those of a fetch) are
    /// each found from the last one's leaf, not by a descent from the root.
    private var cursor: Cursor?
    private var slots: [Int] = []
    /// The slots of `slots` read only for a reference index entry (by slot, for `slots`).
    private var keyOnlySlots: [Bool] = []
    /// The destination entity of each relationship slot of `slots` (by slot), looked up
    /// once per entity rather than through the relationship for every row.
    private var declaredEntities: [NSEntityDescription?] = []
    private var offsets: [Int] = []

    init(reader: PageFileRowReader) {
        self.reader = reader
    }

    /// The slots of `info`'s rows that a deletion reads (PageFileWriter.delete(_:)).
    static func slotsReadByDeletion(_ info: PageFileCatalog.EntityInfo) -> [Int] {
        var slots = Set(info.indexes.flatMap(\.slots))
        slots.formUnion(info.blobSlots.map(\.slot))
        slots.formUnion(info.deletedToOneLinkSlots)
        return slots.sorted()
    }

    /// The slots of `info`'s rows that a deletion reads only for a reference index entry:
    /// their destination's key is all it needs.
    static func slotsReadOnlyAsKeys(_ info: PageFileCatalog.EntityInfo) -> Set<Int> {
        var other = Set(info.indexes.lazy.filter { !$0.isReference }.flatMap(\.slots))
        other.formUnion(info.blobSlots.map(\.slot))
        other.formUnion(info.deletedToOneLinkSlots)
        return Set(info.indexes.lazy.filter(\.isReference).flatMap(\.slots)).subtracting(other)
    }

    /// The stored row of `objectID` with only the slots a deletion reads decoded, or nil
    /// when there is none.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged row.
    mutating func row(_ objectID: NSManagedObjectID) throws -> StoreRow? {
        if entity !== objectID.entity {
            let info = try reader.catalog.info(for: objectID.entity)
            entity = objectID.entity
            cursor = try reader.transaction.tree(named: info.treeName)?.makeCursor()
            slots = Self.slotsReadByDeletion(info)
            let keyOnly = Self.slotsReadOnlyAsKeys(info)
            keyOnlySlots = (0..<objectID.entity.layout.properties.count).map { keyOnly.contains($0) }
            declaredEntities = objectID.entity.layout.relationshipBySlot.map { $0?.destinationEntity }
        }
        guard let cursor else { return nil }
        let layout = objectID.entity.layout
        let codec = reader.codec
        let slots = self.slots
        let keyOnlySlots = self.keyOnlySlots
        let declaredEntities = self.declaredEntities
        // Moved out and back: one buffer of offsets for every row.
        var offsets = self.offsets
        self.offsets = []
        defer { self.offsets = offsets }
        return try PageFileKey.withPrimary(objectID.key) { key -> StoreRow? in
            guard try cursor.seek(nearby: key) else { return nil }
            return try cursor.withEntry { found, bytes -> StoreRow? in
                guard found.count == key.count, let foundBytes = found.baseAddress, let keyBytes = key.baseAddress,
                    memcmp(foundBytes, keyBytes, key.count) == 0
                else { return nil }
                var header = StoreByteReader(row: bytes)
                let version = try header.varint()
                try PageFileRowCodec.slotOffsets(bytes, into: &offsets)
                guard version <= UInt64(StoreCounterLimit.maximum), offsets.count <= layout.properties.count else {
                    // The full decode names the damage.
                    let decoded = try codec.decode(bytes, entity: objectID.entity)
                    return StoreRow(objectID: objectID, version: decoded.version, values: decoded.values)
                }
                // Appended, not `Array(repeating:count:)`: that allocates through the
                // unspecialized runtime, which looked up the array's type metadata for
                // every row (~650 instructions, more than the slots' decoding).
                var values: [StoreValue] = []
                values.reserveCapacity(layout.properties.count)
                for _ in 0..<layout.properties.count { values.append(.null) }
                for slot in slots where slot < offsets.count {
                    let declared = slot < declaredEntities.count ? declaredEntities[slot] : nil
                    if slot < keyOnlySlots.count, keyOnlySlots[slot] {
                        values[slot] = try codec.decodeReferenceKey(bytes, at: offsets[slot], declaredEntity: declared)
                    } else {
                        values[slot] = try codec.decodeValue(bytes, at: offsets[slot], declaredEntity: declared)
                    }
                }
                return StoreRow(objectID: objectID, version: Int64(version), values: values)
            }
        }
    }
}
