// Batch requests as a store applies them. A context resolves the request (entity, rows
// to insert, changes to write, rows to delete) into a StoreBatchOperation and hands it
// to each store; the store applies it all or nothing and reports what it did:
//
//   operation   store reads                       store writes
//   insert      unique keys of existing rows      new rows, or upserts into the rows
//                                                 holding their keys
//   update      rows matching the predicate       the changed attributes of each
//   delete      the selected rows, their          the rows; the inverses that pointed at
//               relationships' destinations       them; the rows cascades reach
//
// and appends one history record, as a context's save does. The default store runs the
// whole operation in one engine write transaction (PageFileStore+Batch.swift); every
// other store runs it through its public row calls and one save (StoreBatch+Save.swift),
// under the coordinator's lock.
import Foundation

/// What every batch operation reports and how its history record is attributed.
struct StoreBatchReporting {
    /// Whether the outcome lists the rows' object IDs (else only their number).
    let returnsObjectIDs: Bool
    let transactionAuthor: String?
    let contextName: String?
}

/// A batch operation's reporting, read as its own properties.
protocol StoreBatchReported {
    var reporting: StoreBatchReporting { get }
}

extension StoreBatchReported {
    var returnsObjectIDs: Bool { reporting.returnsObjectIDs }
    var transactionAuthor: String? { reporting.transactionAuthor }
    var contextName: String? { reporting.contextName }
}

/// A batch insert as a store applies it.
struct StoreBatchInsert: StoreBatchReported {
    /// The entity of the new rows (the store's model's instance).
    let entity: NSEntityDescription
    /// The rows, pulled one at a time so a store may write them as they come.
    let rows: BatchInsertRowSource
    /// The executing context's merge policy: with a trump or overwrite policy, a row whose
    /// unique key another row holds updates that row (its given attributes only).
    let mergePolicyType: NSMergePolicyType
    let reporting: StoreBatchReporting
}

/// A batch update as a store applies it.
struct StoreBatchUpdate: StoreBatchReported {
    let entity: NSEntityDescription
    let predicate: NSPredicate?
    let includesSubentities: Bool
    /// What each matching row gets.
    let changes: BatchUpdateChanges
    let reporting: StoreBatchReporting
}

/// A batch delete as a store applies it.
struct StoreBatchDelete: StoreBatchReported {
    /// Which rows go.
    enum Selection {
        /// The rows a fetch request selects (predicate, sort, offset, limit), its entity resolved.
        case fetch(NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription)
        /// The rows of these object IDs (those of other stores are left to them).
        case objectIDs([NSManagedObjectID])
    }

    let selection: Selection
    let reporting: StoreBatchReporting
}

/// One batch operation for a store.
enum StoreBatchOperation {
    case insert(StoreBatchInsert)
    case update(StoreBatchUpdate)
    case delete(StoreBatchDelete)

    var returnsObjectIDs: Bool {
        switch self {
        case .insert(let insert): insert.returnsObjectIDs
        case .update(let update): update.returnsObjectIDs
        case .delete(let delete): delete.returnsObjectIDs
        }
    }
}

/// What a store did for a batch operation.
struct StoreBatchOutcome {
    /// How many rows were inserted (upserts included), updated or deleted (cascades included).
    var count = 0
    /// Their object IDs, when the operation asked for them.
    var objectIDs: [NSManagedObjectID] = []
}

/// A store's rows as a batch reads them while planning: inside the store's own
/// transaction (the default store) or through its public calls (every other store).
struct StoreBatchRows {
    /// The stored row of an object of the store, or nil.
    let row: (NSManagedObjectID) throws -> StoreRow?
    /// The destinations of a relationship of an object of the store.
    let destinations: (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID]
    /// The rows of one entity (not its sub-entities) matching a predicate, in key order.
    let matching: (NSEntityDescription, NSPredicate?) throws -> [StoreRow]

    /// A view of `row` whose relationships read through this access.
    func view(of row: StoreRow) -> StoreRowView {
        StoreRowView(row: row, resolve: self.row, resolveToMany: destinations)
    }

    /// The destinations of the relationship in `slot` of `row`.
    func destinations(ofSlot slot: Int, in row: StoreRow) throws -> [NSManagedObjectID] {
        guard slot < row.values.count, let relationship = row.objectID.entity.layout.relationshipBySlot[slot] else {
            return []
        }
        switch row.values[slot] {
        case .objectID(let id): return [id]
        case .objectIDs(let ids): return ids
        case .unresolved: return try destinations(relationship, row.objectID)
        default: return []
        }
    }

    /// The rows of `entity` (and its sub-entities when asked) matching `predicate`.
    func matching(_ entity: NSEntityDescription, predicate: NSPredicate?, includingSubentities: Bool) throws
        -> [StoreRow]
    {
        var rows: [StoreRow] = []
        for candidate in entity.hierarchy(includingSubentities: includingSubentities) {
            rows.append(contentsOf: try matching(candidate, predicate))
        }
        return rows
    }

    /// The rows a batch delete selects in this store, each once.
    ///
    /// - Throws: the fetch request's errors (a predicate or sort key the entity lacks).
    func selected(by selection: StoreBatchDelete.Selection, in store: NSPersistentStore) throws -> [StoreRow] {
        switch selection {
        case .objectIDs(let ids):
            var seen: Set<NSManagedObjectID> = []
            var rows: [StoreRow] = []
            for id in ids where id.persistentStore === store && seen.insert(id).inserted {
                if let row = try row(id) { rows.append(row) }
            }
            return rows
        case .fetch(let request, let entity):
            var rows = try matching(
                entity, predicate: request.predicate, includingSubentities: request.includesSubentities)
            if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
                let compiled = try CompiledSortDescriptors(descriptors, schema: entity.layout)
                let positions = Dictionary(
                    rows.enumerated().map { ($0.element.objectID, $0.offset) }, uniquingKeysWith: { first, _ in first })
                let sorted = try compiled.sort(records: rows.map { view(of: $0) })
                rows = sorted.compactMap { positions[$0.objectID].map { rows[$0] } }
            }
            let start = min(max(request.fetchOffset, 0), rows.count)
            let end = request.fetchLimit > 0 ? min(start + request.fetchLimit, rows.count) : rows.count
            if start == 0 && end == rows.count { return rows }
            return Array(rows[start..<end])
        }
    }
}
