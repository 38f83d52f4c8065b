// NSInMemoryStoreType: a real store behind the row protocol. It keeps rows — typed
// values by slot, with versions — in dictionaries, never live objects, so the object
// layer above it works exactly as it will on the on-disk store.
import Foundation

/// The in-memory store (`NSInMemoryStoreType`): rows live in memory until the store
/// is removed from its coordinator.
public class NSInMemoryStore: NSPersistentStore, @unchecked Sendable {
    /// Rows by entity (identity: the coordinator's frozen model), then by primary key.
    /// Internal, not private: the binary store (a subclass) saves and loads them.
    var rowsByEntity: [ObjectIdentifier: [Int64: StoreRow]] = [:]
    var nextKey: Int64 = 1
    /// The history journal (NSInMemoryStore+History.swift): encoded records by sequence.
    var historyJournal = InMemoryHistoryJournal()

    /// Called after a history purge changed the journal; a subclass that persists the
    /// journal writes it here (throwing undoes the purge).
    func historyJournalDidChange() throws {}

    public override var type: String { NSInMemoryStoreType }

    public override func loadMetadata() throws {
        try super.loadMetadata()
        if let model = persistentStoreCoordinator?.managedObjectModel {
            metadata[NSStoreModelVersionHashesKey] = model.entityVersionHashesByName
            metadata[NSStoreModelVersionIdentifiersKey] = ModelRecord.versionIdentifiers(of: model)
        }
    }

    public override func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> [StoreRow] {
        guard let entity = request.entity else {
            throw CoreDataError.make(NSCoreDataError, "a fetch request reached the store without an entity")
        }
        var result: [StoreRow] = []
        let table = visibleRowsByEntity
        let resolve: (NSManagedObjectID) throws -> StoreRow? = { [unowned self] in
            guard $0.persistentStore === self else { return nil }
            return table[ObjectIdentifier($0.entity)]?[$0.key]
        }
        let resolveToMany: (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID] = {
            [unowned self] in try self.objectIDs(forRelationship: $0, of: $1)
        }
        for candidate in entity.hierarchy(includingSubentities: request.includesSubentities) {
            guard let rows = table[ObjectIdentifier(candidate)] else { continue }
            // Compiled once per entity: keys resolve to slots here, not per row.
            let compiled = try request.predicate.map { try $0.compiled(for: candidate.frozenLayoutIfAny) }
            for key in rows.keys.sorted() {
                guard let row = rows[key] else { continue }
                if let compiled {
                    let view = StoreRowView(row: row, resolve: resolve, resolveToMany: resolveToMany)
                    guard try compiled.evaluate(record: view) else { continue }
                }
                result.append(row)
            }
        }
        return result
    }

    public override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        visibleRow(for: objectID)
    }

    /// The rows a read sees: the running query generation's snapshot, else the current ones.
    private var visibleRowsByEntity: [ObjectIdentifier: [Int64: StoreRow]] {
        if let generation = QueryGeneration.current,
            let snapshot = generation.snapshot(for: self) as? InMemoryGenerationSnapshot
        {
            return snapshot.rowsByEntity
        }
        return rowsByEntity
    }

    private func visibleRow(for objectID: NSManagedObjectID) -> StoreRow? {
        guard objectID.persistentStore === self else { return nil }
        return visibleRowsByEntity[ObjectIdentifier(objectID.entity)]?[objectID.key]
    }

    /// The rows as they are now, copy-on-write: a query generation's snapshot.
    override func queryGenerationSnapshot() throws -> AnyObject? {
        InMemoryGenerationSnapshot(rowsByEntity: rowsByEntity)
    }

    private func storedRow(for objectID: NSManagedObjectID) -> StoreRow? {
        guard objectID.persistentStore === self else { return nil }
        return rowsByEntity[ObjectIdentifier(objectID.entity)]?[objectID.key]
    }

    public override func objectIDs(
        forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws -> [NSManagedObjectID] {
        guard let row = visibleRow(for: objectID), let slot = objectID.entity.layout.slotsByName[relationship.name],
            slot < row.values.count
        else { return [] }
        switch row.values[slot] {
        case .objectIDs(let destinations): return destinations
        case .objectID(let destination): return [destination]
        default: return []
        }
    }

    public override func obtainPermanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        entities.map { entity in
            defer { nextKey += 1 }
            return newObjectID(for: entity, key: nextKey)
        }
    }

    public override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        // Check everything first so a failing save changes nothing.
        try request.checkApplicable(to: self)
        try request.checkVersions(storedRow: { objectID, _ in storedRow(for: objectID) })
        let replaced = try uniquenessUpserts(for: request)
        // Built before the rows change: a delete's tombstone needs the row it removes.
        var historyRecord =
            isHistoryTrackingEnabled && !request.isEmpty
            ? PersistentHistoryRecord(request: request, storedRow: { self.storedRow(for: $0) }) : nil
        var result = StoreSaveResult()
        // The page-file store's order: deletes free unique keys, then updates, then inserts.
        for deleted in request.deletedObjects {
            rowsByEntity[ObjectIdentifier(deleted.objectID.entity)]?[deleted.objectID.key] = nil
        }
        for update in request.updatedRows {
            let entity = ObjectIdentifier(update.objectID.entity)
            guard var row = rowsByEntity[entity]?[update.objectID.key] else { continue }
            for change in update.changes where change.slot < row.values.count {
                row.values[change.slot] = change.value
            }
            row.version += 1
            rowsByEntity[entity]?[update.objectID.key] = row
            result.versions[row.objectID] = row.version
        }
        for inserted in request.insertedRows {
            let entity = ObjectIdentifier(inserted.objectID.entity)
            guard let existingID = replaced[inserted.objectID] else {
                var row = inserted
                row.version = 1
                rowsByEntity[entity, default: [:]][row.objectID.key] = row
                continue
            }
            var changedSlots: [Int] = []
            if StoreUniqueness.insertedValuesWin(request.mergePolicyType),
                var existing = rowsByEntity[entity]?[existingID.key]
            {
                changedSlots = StoreUniqueness.absorb(
                    inserted, into: &existing, slots: request.upsertedSlots[inserted.objectID])
                existing.version += 1
                rowsByEntity[entity]?[existingID.key] = existing
                result.versions[existingID] = existing.version
            }
            StoreUniqueness.recordUpsert(
                of: inserted.objectID, into: existingID, changedSlots: changedSlots, in: &historyRecord)
        }
        if !replaced.isEmpty { rewriteReferences(replaced) }
        result.replacedObjectIDs = replaced
        if let historyRecord, !historyRecord.changes.isEmpty { historyJournal.append(historyRecord.encoded()) }
        return result
    }
}

/// An in-memory store's rows as a query generation bound them.
final class InMemoryGenerationSnapshot {
    let rowsByEntity: [ObjectIdentifier: [Int64: StoreRow]]

    init(rowsByEntity: [ObjectIdentifier: [Int64: StoreRow]]) {
        self.rowsByEntity = rowsByEntity
    }
}
