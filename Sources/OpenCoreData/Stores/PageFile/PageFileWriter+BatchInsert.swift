// A batch insert's new rows on the writer's shortest path. A row of an entity without
// unique indexes or blob attributes, written while no links are recorded, has nothing to
// check and nothing stored apart: it is its bytes (encoded into one buffer reused for
// every row), its ordinary index entries, and no object ID (the caller makes one only
// when the request returns them). Everything else takes insert(_:) (PageFileWriter.swift).
import Foundation

extension PageFileWriter {
    /// Whether new rows of `info`'s entity may be written by ``insertPlainRow(_:key:entity:info:buffer:)``.
    func takesPlainRows(_ info: PageFileCatalog.EntityInfo) -> Bool {
        linkChanges == nil && info.blobSlots.isEmpty && !info.indexes.contains(where: \.isUnique)
    }

    /// Writes the new row `key` of `entity` holding `values` (version 1) with its index
    /// entries, encoding it into `buffer`; its to-manys are empty (a batch insert sets none).
    /// Only for an entity ``takesPlainRows(_:)`` accepts.
    mutating func insertPlainRow(
        _ values: [StoreValue], key: Int64, entity: NSEntityDescription, info: PageFileCatalog.EntityInfo,
        buffer: inout StoreByteWriter
    ) throws {
        for index in info.indexes {
            guard let indexKey = index.key(for: values, primaryKey: key) else { continue }
            try addIndexEntry(indexKey, of: index, primaryKey: key)
        }
        var values = values
        // To-manys live in join trees or come from their inverse (SPEC.md §3.2 R1).
        for slot in info.externalSlots where slot < values.count { values[slot] = .unresolved }
        buffer.bytes.removeAll(keepingCapacity: true)
        PageFileRowCodec.encode(
            values: values, version: 1, layout: entity.layout, externalToMany: !info.externalSlots.isEmpty,
            into: &buffer)
        try storeEncodedRow(buffer.bytes, primaryKey: key, info: info)
    }
}
