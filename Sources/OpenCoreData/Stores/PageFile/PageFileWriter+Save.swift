// A context's save on the default store, as writer steps in one transaction:
//
//   1. optimistic locking: every updated or deleted row is still at the version the
//      context read (133020 naming every stale row at once)
//   2. the history record, built before rows change (a delete's tombstone needs its row)
//   3. deletes, first: their unique keys are free for this save's inserts
//   4. updates, then 5. inserts: a unique-key clash is 133021 (every clash of the save at
//      once) or, when the request allows it under a trump policy, an upsert: the insert
//      becomes an update of the row holding the key, which keeps its object ID; a
//      force insertion replaces whole a row another save inserted again meanwhile
//   6. references to upserted objects rewritten, ordinary index entries written, the
//      history record appended
import Foundation
import StorageEngine

extension PageFileWriter {
    /// Applies a context's save; the store writes its metadata after it in the same transaction.
    ///
    /// - Parameter tracksHistory: Whether the save appends a history record.
    /// - Returns: The new versions of updated rows and the inserted objects that became upserts.
    /// - Throws: 133020 for stale rows, 133021 for unique-key clashes, 133000 for an update of
    ///   a row that is gone when versions are not checked; the engine's errors.
    mutating func save(_ request: StoreSaveRequest, tracksHistory: Bool) throws -> StoreSaveResult {
        let (stored, deletedRows) = try storedRows(of: request, resolvingDeletedBlobs: tracksHistory)
        linkChanges = []
        var history =
            tracksHistory && !request.isEmpty
            ? PersistentHistoryRecord(request: request, storedRow: { stored[$0] }) : nil
        var result = StoreSaveResult()
        // Reserving runs the unspecialized generic (~2k); one or two versions just grow.
        if request.updatedRows.count > 2 { result.versions.reserveCapacity(request.updatedRows.count) }
        try delete(deletedRows)
        var clashes: [StoreConstraintConflict] = []
        updatesInPlace = true
        for update in Self.inKeyOrder(request.updatedRows) {
            let info = try info(for: update.objectID.entity)
            if raisesVersionOnly(update, info: info) {
                if let version = try raiseVersion(of: update.objectID, info: info) {
                    result.versions[update.objectID] = version
                }
                continue
            }
            // A second update of one row (a context may hold two objects of one ID after an
            // upsert) applies to the row as the first one left it.
            let again = result.versions[update.objectID] != nil
            let current =
                again
                ? try reader.row(update.objectID.entity, key: update.objectID.key, resolvingBlobs: false)
                : stored[update.objectID]
            guard var row = current else { continue }
            if let clash = try self.update(&row, changes: update.changes) {
                clashes.append(try conflict(clash))
                continue
            }
            result.versions[row.objectID] = row.version
        }
        let replaced = try insertRows(of: request, into: &result, clashes: &clashes, history: &history)
        if !clashes.isEmpty { throw StoreUniqueness.constraintError(clashes) }
        if !replaced.isEmpty { try rewriteReferences(replaced) }
        result.replacedObjectIDs = replaced
        try repairRelationships(of: request, replaced: replaced, result: &result, history: &history)
        try finish()
        if let history, !history.changes.isEmpty { try recordHistory(history) }
        return result
    }

    /// `updates` by entity and ascending primary key, two updates of one row in their
    /// order: in-place updates then walk each row tree once (the request's order is the
    /// context's set order, which means nothing).
    static func inKeyOrder(_ updates: [StoreRowUpdate]) -> [StoreRowUpdate] {
        guard updates.count > 1 else { return updates }
        return updates.indices.sorted { left, right in
            let (first, second) = (updates[left].objectID, updates[right].objectID)
            if first.entity !== second.entity {
                return ObjectIdentifier(first.entity) < ObjectIdentifier(second.entity)
            }
            return first.key != second.key ? first.key < second.key : left < right
        }.map { updates[$0] }
    }

    /// The stored rows the request updates or deletes, checked against the versions the
    /// context read: by object ID the updated rows (and the deleted ones when `resolvingDeletedBlobs`),
    /// and the deleted rows in the request's order. A deleted row is read whole, blobs
    /// included, when its history tombstone needs it, else with only the slots its
    /// deletion reads (PageFileDeletedRowReader), and then goes into no table (the
    /// deletion takes the list as it is); a conflict reports the row read again whole. An
    /// update that raises only its row's version (PageFileWriter+VersionOnly.swift) has its
    /// version read and no row.
    private mutating func storedRows(of request: StoreSaveRequest, resolvingDeletedBlobs: Bool) throws
        -> (rows: [NSManagedObjectID: StoreRow], deleted: [StoreRow])
    {
        var stored: [NSManagedObjectID: StoreRow] = [:]
        let storedCount = request.updatedRows.count + (resolvingDeletedBlobs ? request.deletedObjects.count : 0)
        if storedCount > 2 { stored.reserveCapacity(storedCount) }
        var deleted: [StoreRow] = []
        if request.deletedObjects.count > 2 { deleted.reserveCapacity(request.deletedObjects.count) }
        var deletedRows = PageFileDeletedRowReader(reader: reader)
        try request.checkVersions(
            storedRow: { objectID, update in
                if let update {
                    let info = try info(for: objectID.entity)
                    if raisesVersionOnly(update, info: info) {
                        return try storedVersion(of: objectID, info: info).map {
                            StoreRow(objectID: objectID, version: $0, values: [])
                        }
                    }
                    let row = try reader.row(objectID.entity, key: objectID.key, resolvingBlobs: false)
                    if let row { stored[objectID] = row }
                    return row
                }
                let row =
                    resolvingDeletedBlobs
                    ? try reader.row(objectID.entity, key: objectID.key, resolvingBlobs: true)
                    : try deletedRows.row(objectID)
                guard let row else { return nil }
                deleted.append(row)
                if resolvingDeletedBlobs { stored[objectID] = row }
                return row
            },
            persistedRow: { row in
                let whole = try reader.row(row.objectID.entity, key: row.objectID.key, resolvingBlobs: false)
                return try reader.resolvedCopy(whole ?? row)
            })
        return (stored, deleted)
    }

    /// Inserts the request's new rows; returns the inserted objects that became upserts,
    /// with the objects that absorbed them.
    private mutating func insertRows(
        of request: StoreSaveRequest, into result: inout StoreSaveResult, clashes: inout [StoreConstraintConflict],
        history: inout PersistentHistoryRecord?
    ) throws -> [NSManagedObjectID: NSManagedObjectID] {
        var replaced: [NSManagedObjectID: NSManagedObjectID] = [:]
        let valuesWin = StoreUniqueness.insertedValuesWin(request.mergePolicyType)
        for inserted in request.insertedRows {
            var row = inserted
            row.version = 1
            // A to-many the context never set is empty in a new row.
            if row.values.contains(where: { if case .unresolved = $0 { true } else { false } }) {
                row.values = row.values.map { value in
                    if case .unresolved = value { return .objectIDs([]) }
                    return value
                }
            }
            if !request.reinsertedObjectIDs.isEmpty, request.reinsertedObjectIDs.contains(row.objectID) {
                try removeRowInsertedAgain(row.objectID)
            }
            guard let clash = try insert(row) else { continue }
            guard StoreUniqueness.upserts(row.objectID, in: request) else {
                clashes.append(try conflict(clash))
                continue
            }
            guard
                let upserted = try upsert(
                    row, into: clash.owner, valuesWin: valuesWin, slots: request.upsertedSlots[row.objectID])
            else { continue }
            let existingID = upserted.row.objectID
            replaced[row.objectID] = existingID
            if valuesWin { result.versions[existingID] = upserted.row.version }
            StoreUniqueness.recordUpsert(
                of: row.objectID, into: existingID, changedSlots: upserted.changedSlots, in: &history)
        }
        return replaced
    }

    /// Removes the stored row of `objectID`, which this save inserts again (a merge
    /// policy's force insertion), when another save inserted it again first: both saves
    /// found the row deleted before either wrote it back. Written over, the other row's
    /// index and join entries would stay behind (the release soak kept an entry of
    /// `rel.Owner.favorite` naming a tag the owner no longer had); removed with them, the
    /// row this save inserts is the only one, as after the other save's re-insertion then
    /// this one's in turn.
    private mutating func removeRowInsertedAgain(_ objectID: NSManagedObjectID) throws {
        guard let stored = try reader.row(objectID.entity, key: objectID.key, resolvingBlobs: false) else { return }
        try delete(stored)
    }

    /// An upsert: the stored row with primary key `owner`, which holds one of `inserted`'s
    /// unique keys, takes `inserted`'s values (with `slots`, only those) when `valuesWin`
    /// (its version raised) or stays as it is. Returns that row and the slots that changed;
    /// nil when it is gone.
    mutating func upsert(_ inserted: StoreRow, into owner: Int64, valuesWin: Bool, slots: [Int]? = nil) throws
        -> (row: StoreRow, changedSlots: [Int])?
    {
        let info = try info(for: inserted.objectID.entity)
        guard var existing = try reader.row(inserted.objectID.entity, key: owner, resolvingBlobs: false) else {
            return nil
        }
        guard valuesWin else { return (existing, []) }
        try removeIndexEntries(of: existing, info: info)
        let before = existing
        let changedSlots = StoreUniqueness.absorb(inserted, into: &existing, slots: slots)
        try releaseReplacedBlobs(of: before, slots: changedSlots, info: info)
        existing.version += 1
        try write(existing, info: info)
        for (slot, relationship) in info.joinSlots where changedSlots.contains(slot) {
            guard case .objectIDs(let destinations) = existing.values[slot] else { continue }
            let delta = try setToMany(relationship, of: existing.objectID.key, to: destinations, isNew: false)
            noteLinks(of: existing.objectID, relationship, delta)
        }
        if linkChanges != nil {
            let toOnes = changedSlots.filter {
                info.linkSlots.contains($0) && existing.objectID.entity.layout.relationshipBySlot[$0]?.isToMany == false
            }
            recordLinks {
                StoreLinkChange.append(
                    existing.objectID, before: before.values, after: existing.values, slots: toOnes, to: &$0)
            }
        }
        return (existing, changedSlots)
    }

    /// Points references to upserted objects at the rows that absorbed them: to-ones in the
    /// rows (their reference index entries follow) and join entries.
    mutating func rewriteReferences(_ replaced: [NSManagedObjectID: NSManagedObjectID]) throws {
        let targets = Set(replaced.keys.map(\.entity).map(ObjectIdentifier.init))
        for entity in catalog.entities {
            let pointing = StoreUniqueness.slots(of: entity, pointingAt: targets)
            guard !pointing.isEmpty, let info = catalog.infoIfAny(entity),
                let tree = try transaction.tree(named: info.treeName)
            else { continue }
            var rewritten: [(previous: StoreRow, row: StoreRow)] = []
            try tree.scan { key, value in
                guard let primary = PageFileKey.primaryKey(key) else { return true }
                let decoded = try codec.decode(value, entity: entity)
                var values = decoded.values
                if StoreUniqueness.rewriteReferences(in: &values, slots: pointing, replaced: replaced) {
                    let objectID = codec.makeObjectID(entity, primary)
                    rewritten.append(
                        (
                            StoreRow(objectID: objectID, version: decoded.version, values: decoded.values),
                            StoreRow(objectID: objectID, version: decoded.version, values: values)
                        ))
                }
                return true
            }
            for (previous, row) in rewritten {
                try removeIndexEntries(of: previous, info: info)
                try write(row, info: info)
            }
        }
        try rewriteJoinDestinations(replaced)
    }

    /// The 133021 details of `clash`, with the row holding the key as stored.
    func conflict(_ clash: PageFileUniqueClash) throws -> StoreConstraintConflict {
        let databaseRow = try reader.row(clash.row.objectID.entity, key: clash.owner)
        return StoreUniqueness.conflict(row: clash.row, constraint: clash.index, databaseRow: databaseRow)
    }
}
