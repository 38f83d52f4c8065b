// A batch operation through a store's public row calls and one save: how the in-memory
// and binary stores (and any custom store) run batch requests. The coordinator's lock is
// held across the whole operation, so nothing of this coordinator changes the rows
// between the reads and the save; the save is atomic and checks the versions read, so a
// store shared with another coordinator refuses the batch (133020) rather than apply it
// to rows changed meanwhile.
import Foundation

extension NSPersistentStore {
    /// Applies `operation` with ``fetchRows(_:)``, ``row(for:)``,
    /// ``objectIDs(forRelationship:of:)``, ``obtainPermanentIDs(for:)`` and one ``save(_:)``
    /// of the request `prepare` makes of the operation's (the coordinator adds derived values).
    ///
    /// - Throws: the errors of those calls and of the operation's rows (see each request).
    func executeBatchThroughSave(
        _ operation: StoreBatchOperation, prepare: (StoreSaveRequest) throws -> StoreSaveRequest = { $0 }
    ) throws -> StoreBatchOutcome {
        let rows = StoreBatchRows(
            row: { [unowned self] id in id.persistentStore === self ? try self.row(for: id) : nil },
            destinations: { [unowned self] relationship, id in
                id.persistentStore === self ? try self.objectIDs(forRelationship: relationship, of: id) : []
            },
            matching: { [unowned self] entity, predicate in
                let request = NSFetchRequest<NSFetchRequestResult>()
                request.entity = entity
                request.predicate = predicate
                request.includesSubentities = false
                return try self.fetchRows(request)
            })
        var outcome = StoreBatchOutcome()
        switch operation {
        case .insert(let insert):
            var request = StoreSaveRequest()
            request.mergePolicyType = insert.mergePolicyType
            request.transactionAuthor = insert.transactionAuthor
            request.contextName = insert.contextName
            var pending: [BatchInsertRow] = []
            while let row = try insert.rows.next() { pending.append(row) }
            guard !pending.isEmpty else { return outcome }
            let ids = try obtainPermanentIDs(for: Array(repeating: insert.entity, count: pending.count))
            guard ids.count == pending.count else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "the store returned the wrong number of object IDs")
            }
            request.insertedRows.reserveCapacity(pending.count)
            for (row, id) in zip(pending, ids) {
                request.insertedRows.append(StoreRow(objectID: id, version: 0, values: row.values))
                request.upsertedSlots[id] = row.givenSlots
            }
            let result = try save(try prepare(request))
            outcome.count = ids.count
            if insert.returnsObjectIDs { outcome.objectIDs = ids.map { result.replacedObjectIDs[$0] ?? $0 } }
        case .update(let update):
            var request = StoreSaveRequest()
            request.checksVersions = true
            request.transactionAuthor = update.transactionAuthor
            request.contextName = update.contextName
            let matched = try rows.matching(
                update.entity, predicate: update.predicate, includingSubentities: update.includesSubentities)
            for row in matched {
                let changes = try update.changes.changes(for: row) { rows.view(of: row) }
                request.updatedRows.append(
                    StoreRowUpdate(objectID: row.objectID, expectedVersion: row.version, changes: changes))
            }
            if !request.isEmpty { _ = try save(try prepare(request)) }
            outcome.count = matched.count
            if update.returnsObjectIDs { outcome.objectIDs = matched.map(\.objectID) }
        case .delete(let delete):
            let plan = try BatchDeletePlan(
                selected: try rows.selected(by: delete.selection, in: self), rows: rows, store: self)
            let request = plan.saveRequest(author: delete.transactionAuthor, contextName: delete.contextName)
            if !request.isEmpty { _ = try save(try prepare(request)) }
            outcome.count = plan.deleted.count
            if delete.returnsObjectIDs { outcome.objectIDs = plan.deleted.map(\.objectID) }
        }
        return outcome
    }
}
