// A batch delete on the default store. Rows of entities without relationships need no
// plan (nothing cascades from them, no inverse names them, they have no join entries):
// each matching row is found on its bytes (PageFileBatchMatcher), its index entries are
// computed from the slots those indexes read, in the same visit, and row and entries are
// removed; a row is decoded whole only for what needs its values (blobs, a history
// tombstone). The rows go in one walk of the row tree (a TreeEditor), the ordinary index
// entries after them in one walk per index. Entities with relationships, and deletes by
// object IDs or sorted fetches, take the planned path: BatchDeletePlan's cascades and
// nullified inverses applied by the save path (writer.save), which writes the history.
import Foundation
import StorageEngine

extension PageFileStore {
    func batchDelete(_ delete: StoreBatchDelete, writer: inout PageFileWriter, tracksHistory: Bool) throws
        -> StoreBatchOutcome
    {
        if case .fetch(let request, let entity) = delete.selection, request.sortDescriptors?.isEmpty ?? true {
            let entities = entity.hierarchy(includingSubentities: request.includesSubentities)
            // A predicate reading a blob attribute tests rows with their blobs read: planned path.
            let unrelated = try entities.allSatisfy {
                try $0.layout.relationshipSlots.isEmpty && !writer.info(for: $0).predicateReadsBlobs(request.predicate)
            }
            if unrelated {
                return try deleteUnrelatedRows(
                    of: entities, request: request, delete, writer: &writer, tracksHistory: tracksHistory)
            }
        }
        let rows = batchRows(writer)
        let plan = try BatchDeletePlan(
            selected: try rows.selected(by: delete.selection, in: self), rows: rows, store: self)
        let request = plan.saveRequest(author: delete.transactionAuthor, contextName: delete.contextName)
        if !request.isEmpty { _ = try writer.save(request, tracksHistory: tracksHistory) }
        var outcome = StoreBatchOutcome(count: plan.deleted.count)
        if delete.returnsObjectIDs { outcome.objectIDs = plan.deleted.map(\.objectID) }
        return outcome
    }

    /// Deletes the rows of `entities` (none with relationships) that `request` selects,
    /// its offset and limit counted over them in order, as the planned path selects them.
    private func deleteUnrelatedRows(
        of entities: [NSEntityDescription], request: NSFetchRequest<NSFetchRequestResult>,
        _ delete: StoreBatchDelete, writer: inout PageFileWriter, tracksHistory: Bool
    ) throws -> StoreBatchOutcome {
        var outcome = StoreBatchOutcome()
        var changes: [PersistentHistoryRecord.Change] = []
        var skip = max(request.fetchOffset, 0)
        var remaining = request.fetchLimit > 0 ? request.fetchLimit : Int.max
        let codec = writer.codec
        let rows = batchRows(writer)
        for entity in entities where remaining > 0 {
            let info = try writer.info(for: entity)
            let decodeRow = { [unowned self] (bytes: UnsafeRawBufferPointer, key: Int64) throws -> StoreRow in
                let decoded = try codec.decode(bytes, entity: entity)
                return StoreRow(
                    objectID: self.newObjectID(for: entity, key: key), version: decoded.version,
                    values: decoded.values)
            }
            let matcher = try PageFileBatchMatcher(
                entity: entity, predicate: request.predicate, info: info, transaction: writer.transaction,
                codec: codec, decodeRow: decodeRow, view: rows.view)
            guard let tree = matcher.rows else { continue }
            let (keys, matched) = try matcher.candidates()
            let layout = entity.layout
            let tombstones =
                tracksHistory
                && layout.attributeBySlot.contains { $0?.preservesValueInHistoryOnDeletion == true }
            // Whole rows for what needs their values: the blob tree's entries, or a tombstone.
            let decodes = !info.blobSlots.isEmpty || tombstones
            let keySlots = Array(Set(info.indexes.flatMap(\.slots))).sorted()
            var offsets: [Int] = []
            var keyValues = Array(repeating: StoreValue.null, count: layout.properties.count)
            // By position in `info.indexes`: an index copied per row costs its references.
            var entries: [(index: Int, key: [UInt8])] = []
            // Ordinary indexes' entries of removed rows, removed after the rows in one walk per index.
            var removedEntries = Array(repeating: PendingIndexKeys(), count: info.indexes.count)
            // One walk of the row tree in key order: a row is read and removed where it stands.
            let editor = try tree.makeEditor()
            for key in keys where remaining > 0 {
                entries.removeAll(keepingCapacity: true)
                var whole: StoreRow?
                let found = try PageFileKey.withPrimary(key) { keyBytes -> Bool? in
                    guard try editor.seek(keyBytes) else { return nil }
                    return try editor.withValue { bytes -> Bool in
                        if !matched {
                            guard try matcher.matches(bytes, primaryKey: key, offsets: &offsets) else { return false }
                        }
                        if skip > 0 {
                            skip -= 1
                            return false
                        }
                        if decodes {
                            whole = try decodeRow(bytes, key)
                            return true
                        }
                        try PageFileRowCodec.slotOffsets(bytes, into: &offsets)
                        for slot in keySlots {
                            keyValues[slot] =
                                slot < offsets.count
                                ? try codec.decodeValue(bytes, at: offsets[slot], declaredEntity: nil) : .null
                        }
                        for (position, index) in info.indexes.enumerated() {
                            if let entry = index.key(for: keyValues, primaryKey: key) {
                                entries.append((position, entry))
                            }
                        }
                        return true
                    }
                }
                guard let deletes = found else { throw matcher.missingRow(key) }
                guard deletes else { continue }
                remaining -= 1
                if var row = whole {
                    if tombstones {
                        try writer.reader.resolveBlobs(&row, info: info)
                        changes.append(.delete(row.objectID, row: row))
                    } else if tracksHistory {
                        changes.append(.delete(row.objectID, row: nil))
                    }
                    try writer.delete(row)
                } else {
                    for entry in entries {
                        let index = info.indexes[entry.index]
                        if index.isUnique {
                            try writer.removeIndexEntry(entry.key, of: index, primaryKey: key, mayBePending: false)
                        } else {
                            removedEntries[entry.index].insert(entry.key)
                        }
                    }
                    try editor.removeEntry()
                    if tracksHistory {
                        changes.append(.init(kind: .delete, entityName: entity.name ?? "", key: key))
                    }
                }
                outcome.count += 1
                if delete.returnsObjectIDs { outcome.objectIDs.append(newObjectID(for: entity, key: key)) }
            }
            try editor.finish()
            for (position, index) in info.indexes.enumerated() where !index.isUnique {
                try writer.removeStoredIndexEntries(removedEntries[position], of: index)
            }
        }
        try writer.finish()
        if !changes.isEmpty {
            try writer.recordHistory(
                PersistentHistoryRecord(
                    timestamp: Date(), author: delete.transactionAuthor, contextName: delete.contextName,
                    changes: changes))
        }
        return outcome
    }
}
