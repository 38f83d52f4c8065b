// A batch update on the default store, row by row on the encoded bytes where it can:
//
//   per entity     PageFileBatchMatcher walks the predicate's index range (or scans) and
//                  tests each row on its bytes
//   per row        the changes come from BatchUpdateChanges' quick forms reading only the
//                  slots they need (else from the evaluator on the decoded row); the row
//                  is rewritten from its bytes with only the changed slots re-encoded and
//                  its version raised, where it stands in one walk of the row tree (a
//                  TreeEditor); only the entries of indexes over changed slots move, the
//                  old ones removed after the rows in one walk per index
//
// An entity takes the general path (each row decoded, writer.update) when a patch could
// not keep everything right: a unique index over a changed slot (a clash must be found
// before anything is written, as writer.update does), binary attributes that may live
// in the blob tree, or derived attributes (recomputed from the new values on the general
// path: `patchesEncodedRows` is the hook that keeps such entities there).
import Foundation
import StorageEngine

extension PageFileStore {
    func batchUpdate(_ update: StoreBatchUpdate, writer: inout PageFileWriter, tracksHistory: Bool) throws
        -> StoreBatchOutcome
    {
        var outcome = StoreBatchOutcome()
        var history =
            tracksHistory
            ? PersistentHistoryRecord(
                timestamp: Date(), author: update.transactionAuthor, contextName: update.contextName, changes: [])
            : nil
        var clashes: [StoreConstraintConflict] = []
        for entity in update.entity.hierarchy(includingSubentities: update.includesSubentities) {
            let info = try writer.info(for: entity)
            if Self.patchesEncodedRows(of: info, slots: update.changes.slots) {
                try patchRows(of: info, update, writer: &writer, outcome: &outcome, history: &history)
            } else {
                try updateDecodedRows(
                    of: info, update, writer: &writer, outcome: &outcome, history: &history, clashes: &clashes)
            }
        }
        if !clashes.isEmpty { throw StoreUniqueness.constraintError(clashes) }
        try writer.finish()
        if let history, !history.changes.isEmpty { try writer.recordHistory(history) }
        return outcome
    }

    /// Whether rows of the entity of `info` are updated on their bytes when `slots` change.
    static func patchesEncodedRows(of info: PageFileCatalog.EntityInfo, slots: [Int]) -> Bool {
        let layout = info.entity.layout
        if !info.blobSlots.isEmpty { return false }
        if layout.attributeBySlot.contains(where: { $0 is NSDerivedAttributeDescription }) { return false }
        return !info.indexes.contains { index in index.isUnique && index.slots.contains(where: slots.contains) }
    }

    /// The rows of `info`'s entity matching the update, each patched on its bytes.
    private func patchRows(
        of info: PageFileCatalog.EntityInfo, _ update: StoreBatchUpdate, writer: inout PageFileWriter,
        outcome: inout StoreBatchOutcome, history: inout PersistentHistoryRecord?
    ) throws {
        let entity = info.entity
        let layout = entity.layout
        let codec = writer.codec
        let rows = batchRows(writer)
        let decodeRow = { [unowned self] (bytes: UnsafeRawBufferPointer, key: Int64) throws -> StoreRow in
            let decoded = try codec.decode(bytes, entity: entity)
            return StoreRow(
                objectID: self.newObjectID(for: entity, key: key), version: decoded.version, values: decoded.values)
        }
        let matcher = try PageFileBatchMatcher(
            entity: entity, predicate: update.predicate, info: info, transaction: writer.transaction, codec: codec,
            decodeRow: decodeRow, view: rows.view)
        guard let tree = matcher.rows else { return }
        let (keys, matched) = try matcher.candidates()
        let slots = update.changes.slots
        // Indexes whose entries move, and every slot their keys read.
        let moved = info.indexes.filter { !$0.isReference && $0.slots.contains(where: slots.contains) }
        let keySlots = Array(Set(moved.flatMap(\.slots))).sorted()
        var isKeySlot = Array(repeating: false, count: layout.properties.count)
        for slot in keySlots where slot < isKeySlot.count { isKeySlot[slot] = true }
        // The quick forms as edits of the row bytes, made once; nil: every row is evaluated.
        let rowPatch = PageFileRowPatch(update.changes, codec: codec)
        let change = PersistentHistoryRecord.Change.update(entity: entity, key: 0, slots: slots)
        var offsets: [Int] = []
        var changes: [(slot: Int, value: StoreValue)] = []
        var keyValues = Array(repeating: StoreValue.null, count: layout.properties.count)
        // By position in `moved`: an index copied per row costs its strings' and arrays' references.
        var entryChanges: [(index: Int, old: [UInt8]?, new: [UInt8]?)] = []
        // The entries that move out, removed after the rows in one walk per index.
        var removedEntries = Array(repeating: PendingIndexKeys(), count: moved.count)
        // Reused between rows: the patched row and the moved indexes' keys before the change.
        var patchedRow = StoreByteWriter()
        var before: [[UInt8]?] = Array(repeating: nil, count: moved.count)
        // One walk of the row tree in key order: a row is read and rewritten where it stands.
        let editor = try tree.makeEditor()
        // Borrowed, not copied per row (an index copy retains its names and fields).
        try moved.withUnsafeBufferPointer { moved in
            for key in keys {
                entryChanges.removeAll(keepingCapacity: true)
                let patched = try PageFileKey.withPrimary(key) { keyBytes -> Bool? in
                    guard try editor.seek(keyBytes) else { return nil }
                    return try editor.withValue { bytes -> Bool in
                        if !matched {
                            guard try matcher.matches(bytes, primaryKey: key, offsets: &offsets) else { return false }
                        }
                        // The encoded predicate leaves the row's offsets behind; else they are found here.
                        if matched || !matcher.readsOffsets { try PageFileRowCodec.slotOffsets(bytes, into: &offsets) }
                        let read = { (slot: Int) throws -> StoreValue in
                            slot < offsets.count
                                ? try codec.decodeValue(bytes, at: offsets[slot], declaredEntity: nil) : .null
                        }
                        if !moved.isEmpty {
                            for slot in keySlots { keyValues[slot] = try read(slot) }
                            for position in moved.indices {
                                before[position] = moved[position].key(for: keyValues, primaryKey: key)
                            }
                        }
                        let quick =
                            try rowPatch?.write(
                                bytes, offsets: offsets, into: &patchedRow, keySlots: isKeySlot, keyValues: &keyValues)
                            ?? false
                        if !quick {
                            // A quick form declined this row (or there is none): the evaluator decides.
                            let row = try decodeRow(bytes, key)
                            changes = try update.changes.changes(for: row) { rows.view(of: row) }
                            for change in changes where change.slot < keyValues.count {
                                keyValues[change.slot] = change.value
                            }
                            try Self.patch(bytes, offsets: offsets, changes: changes, into: &patchedRow)
                        }
                        for position in moved.indices {
                            let after = moved[position].key(for: keyValues, primaryKey: key)
                            if after != before[position] { entryChanges.append((position, before[position], after)) }
                        }
                        return true
                    }
                }
                guard let patched else { throw matcher.missingRow(key) }
                guard patched else { continue }
                try patchedRow.bytes.withUnsafeBytes { try editor.replaceValue($0) }
                for entry in entryChanges {
                    // Each row is patched once: its stored entry is in the tree, never pending,
                    // and no entry added here is one that moves out (the primary key ends both).
                    if let old = entry.old { removedEntries[entry.index].insert(old) }
                    if let new = entry.new { try writer.addIndexEntry(new, of: moved[entry.index], primaryKey: key) }
                }
                outcome.count += 1
                if update.returnsObjectIDs { outcome.objectIDs.append(newObjectID(for: entity, key: key)) }
                if history != nil {
                    var recorded = change
                    recorded.key = key
                    history?.changes.append(recorded)
                }
            }
        }
        try editor.finish()
        for (position, index) in moved.enumerated() {
            try writer.removeStoredIndexEntries(removedEntries[position], of: index)
        }
    }

    /// Writes into `writer` (emptied first, its capacity kept for the next row) the row
    /// `bytes` with its version raised and `changes` (ascending slots) in place of their
    /// slots' values; every other slot's bytes are copied as they are.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged row version.
    static func patch(
        _ bytes: UnsafeRawBufferPointer, offsets: [Int], changes: [(slot: Int, value: StoreValue)],
        into writer: inout StoreByteWriter
    ) throws {
        try beginPatch(bytes, into: &writer)
        var slot = 0
        for change in changes {
            copyStored(bytes, offsets: offsets, from: slot, to: change.slot, into: &writer)
            PageFileRowCodec.appendValue(change.value, declaredEntity: nil, to: &writer)
            slot = change.slot + 1
        }
        copyStored(bytes, offsets: offsets, from: slot, to: offsets.count, into: &writer)
    }

    /// The rows of `info`'s entity matching the update, each decoded and updated by
    /// `writer.update` (unique keys checked, blobs released, derived values kept).
    private func updateDecodedRows(
        of info: PageFileCatalog.EntityInfo, _ update: StoreBatchUpdate, writer: inout PageFileWriter,
        outcome: inout StoreBatchOutcome, history: inout PersistentHistoryRecord?,
        clashes: inout [StoreConstraintConflict]
    ) throws {
        let rows = batchRows(writer)
        let matched = try rows.matching(info.entity, update.predicate)
        outcome.count += matched.count
        if update.returnsObjectIDs { outcome.objectIDs.append(contentsOf: matched.map(\.objectID)) }
        let slots = update.changes.slots
        for var row in matched {
            if !info.blobSlots.isEmpty { Self.unresolveBlobs(&row, info: info) }
            let changes = try update.changes.changes(for: row) {
                // Expressions read blob values whole; the row written keeps them in the blob tree.
                var whole = row
                if !info.blobSlots.isEmpty { try writer.reader.resolveBlobs(&whole, info: info) }
                return rows.view(of: whole)
            }
            if let clash = try writer.update(&row, changes: changes) {
                clashes.append(try writer.conflict(clash))
                continue
            }
            history?.changes.append(.update(row.objectID, slots: slots))
        }
    }

    /// Puts back the marker of values kept in the blob tree where a fetch read them (a
    /// predicate on such an attribute does), so the writer treats them as stored there.
    private static func unresolveBlobs(_ row: inout StoreRow, info: PageFileCatalog.EntityInfo) {
        for blob in info.blobSlots where blob.externalizes && blob.slot < row.values.count {
            if case .binary(let data) = row.values[blob.slot], data.count > PageFileStore.externalBinaryThreshold {
                row.values[blob.slot] = .unresolved
            }
        }
    }
}
