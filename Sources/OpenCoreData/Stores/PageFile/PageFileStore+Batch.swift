// Batch requests on the default store: one engine write transaction each, as writer
// steps (PageFileWriter.swift), so the rows, their index entries, blobs and join entries,
// the key counter and the history record commit together or not at all.
//
//   insert   rows pulled from the request a chunk at a time, each chunk given keys and
//            written at once: nothing but the chunk (and the IDs, when asked for) is
//            held in memory. A unique-key clash is an upsert under a trump policy
//            (writer.upsert, the given attributes only), else 133021 for all of them.
//            Rows with nothing to check (PageFileWriter+BatchInsert.swift) go straight
//            to their bytes and index entries, without an object ID unless asked for.
//   update   the matching rows patched on their encoded bytes, or decoded and updated
//            by writer.update; a clash is 133021 (PageFileStore+BatchUpdate.swift)
//   delete   rows without relationships removed from their bytes; others with
//            BatchDeletePlan's cascades and nullified inverses, applied by the save
//            path (PageFileStore+BatchDelete.swift)
//
// History (SPEC.md §3.7): one record per request, as a context's save: inserts; updates
// naming the attributes written; deletes with their tombstones.
import Foundation
import StorageEngine

extension PageFileStore {
    /// Rows a batch insert gives keys to and writes at a time.
    static let batchInsertChunk = 4_096

    /// Applies `operation` in one engine write transaction.
    ///
    /// - Throws: 134030 for a read-only store; the operation's errors (133021, 1550, 1570,
    ///   1580); the engine's errors, translated. Nothing is written when it throws.
    func executeBatchInOneTransaction(_ operation: StoreBatchOperation) throws -> StoreBatchOutcome {
        if isReadOnly {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "the store at \(url?.path ?? "(no file)") was added read-only")
        }
        let tracksHistory = isHistoryTrackingEnabled
        return try writeInOneTransaction { writer in
            switch operation {
            case .insert(let insert): try batchInsert(insert, writer: &writer, tracksHistory: tracksHistory)
            case .update(let update): try batchUpdate(update, writer: &writer, tracksHistory: tracksHistory)
            case .delete(let delete): try batchDelete(delete, writer: &writer, tracksHistory: tracksHistory)
            }
        }
    }

    /// This store's rows as read in the writer's transaction.
    func batchRows(_ writer: PageFileWriter) -> StoreBatchRows {
        let reader = writer.reader
        let codec = writer.codec
        return StoreBatchRows(
            row: { [unowned self] id in
                guard id.persistentStore === self else { return nil }
                return try reader.row(id.entity, key: id.key, resolvingBlobs: false)
            },
            destinations: { [unowned self] relationship, id in
                guard id.persistentStore === self else { return [] }
                return try reader.destinationIDs(of: relationship, for: id)
            },
            matching: { [unowned self] entity, predicate in
                var rows: [StoreRow] = []
                try self.collectRows(
                    of: entity, predicate: predicate, in: reader.transaction, codec: codec, into: &rows)
                return rows
            })
    }

    // MARK: Insert

    private func batchInsert(_ insert: StoreBatchInsert, writer: inout PageFileWriter, tracksHistory: Bool) throws
        -> StoreBatchOutcome
    {
        let entity = insert.entity
        let upserts = insert.mergePolicyType != .errorMergePolicyType
        let valuesWin = StoreUniqueness.insertedValuesWin(insert.mergePolicyType)
        var outcome = StoreBatchOutcome()
        var history = BatchInsertHistory(entityName: entity.name ?? "")
        var clashes: [StoreConstraintConflict] = []
        let info = try writer.info(for: entity)
        let plain = writer.takesPlainRows(info)
        if plain {
            try batchInsertPlainRows(
                insert, info: info, writer: &writer, tracksHistory: tracksHistory, outcome: &outcome,
                history: &history)
        }
        // Rows that may clash or store parts apart: a chunk of rows, each through insert(_:).
        var chunk: [BatchInsertRow] = []
        var exhausted = plain
        if !plain { chunk.reserveCapacity(Self.batchInsertChunk) }
        while !exhausted {
            chunk.removeAll(keepingCapacity: true)
            while chunk.count < Self.batchInsertChunk, let row = try insert.rows.next() { chunk.append(row) }
            exhausted = chunk.count < Self.batchInsertChunk
            guard !chunk.isEmpty else { break }
            var key = try allocateKeys(chunk.count, in: writer.transaction)
            for pending in chunk {
                let row = StoreRow(objectID: newObjectID(for: entity, key: key), version: 1, values: pending.values)
                key += 1
                guard let clash = try writer.insert(row) else {
                    outcome.count += 1
                    if insert.returnsObjectIDs { outcome.objectIDs.append(row.objectID) }
                    if tracksHistory { history.inserted.append(row.objectID.key) }
                    continue
                }
                guard upserts else {
                    clashes.append(try writer.conflict(clash))
                    continue
                }
                guard
                    let upserted = try writer.upsert(
                        row, into: clash.owner, valuesWin: valuesWin, slots: pending.givenSlots)
                else { continue }
                outcome.count += 1
                if insert.returnsObjectIDs { outcome.objectIDs.append(upserted.row.objectID) }
                if tracksHistory, !upserted.changedSlots.isEmpty {
                    history.updated.append(.update(upserted.row.objectID, slots: upserted.changedSlots))
                }
            }
        }
        if !clashes.isEmpty { throw StoreUniqueness.constraintError(clashes) }
        try writer.finish()
        if tracksHistory, !history.isEmpty {
            try writer.recordHistory(history.record(author: insert.transactionAuthor, contextName: insert.contextName))
        }
        return outcome
    }

    /// The rows of `insert` for an entity the writer takes plain rows of: each encoded as
    /// it comes into a chunk reused for the whole request (PageFileWriter+BatchInsert.swift),
    /// the chunk given keys and written when full, the index entries written sorted.
    private func batchInsertPlainRows(
        _ insert: StoreBatchInsert, info: PageFileCatalog.EntityInfo, writer: inout PageFileWriter,
        tracksHistory: Bool, outcome: inout StoreBatchOutcome, history: inout BatchInsertHistory
    ) throws {
        var row = BatchInsertRow(values: [], givenSlots: [])
        var chunk = PageFilePlainRows(info: info)
        var entries = Array(repeating: PageFileBatchIndexEntries(), count: info.indexes.count)
        var exhausted = false
        while !exhausted {
            chunk.removeAll()
            while chunk.count < Self.batchInsertChunk {
                guard try insert.rows.next(into: &row) else {
                    exhausted = true
                    break
                }
                chunk.append(&row.values)
            }
            guard chunk.count > 0 else { break }
            let first = try allocateKeys(chunk.count, in: writer.transaction)
            try writer.writePlainRows(chunk, firstKey: first, info: info, entries: &entries)
            outcome.count += chunk.count
            let keys = first..<(first + Int64(chunk.count))
            if insert.returnsObjectIDs {
                for key in keys { outcome.objectIDs.append(newObjectID(for: insert.entity, key: key)) }
            }
            if tracksHistory { history.inserted.append(contentsOf: keys) }
        }
        for (position, index) in info.indexes.enumerated() where entries[position].count > 0 {
            try entries[position].write(to: writer.transaction.openTree(named: index.treeName))
        }
    }
}

/// A batch insert's history, kept small while the rows stream: the keys of the inserted
/// rows (one entity) and the upserts, made into one record at the end.
private struct BatchInsertHistory {
    let entityName: String
    var inserted: [Int64] = []
    var updated: [PersistentHistoryRecord.Change] = []

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty }

    func record(author: String?, contextName: String?) -> PersistentHistoryRecord {
        var changes: [PersistentHistoryRecord.Change] = []
        changes.reserveCapacity(inserted.count + updated.count)
        for key in inserted { changes.append(.init(kind: .insert, entityName: entityName, key: key)) }
        changes.append(contentsOf: updated)
        return PersistentHistoryRecord(timestamp: Date(), author: author, contextName: contextName, changes: changes)
    }
}
