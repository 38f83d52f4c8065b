// NSInMemoryStoreType: a real store behind the row protocol. It keeps rows — typed
// values by slot, with versions — in dictionaries, never live objects, so the object
// layer above it works exactly as it will on the on-disk store.
import Foundation

/// The in-memory store (`NSInMemoryStoreType`): rows live in memory until the store
/// is removed from its coordinator.
public class NSInMemoryStore: NSPersistentStore, @unchecked Sendable {
    /// Lists decided by inverse to-ones follow them (reference indexes here, the
    /// integrity pass in the in-memory stores).
    override var listsFollowInverseToOnes: Bool { true }

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

    /// Keeps the first of repeated destinations in a to-many value: a context may hold two
    /// objects of one ID (an upsert gave an object the ID of one it had registered).
    private static func removeDuplicates(in value: inout StoreValue) {
        guard case .objectIDs(let ids) = value, ids.count > 1 else { return }
        var seen: Set<Int64> = []
        seen.reserveCapacity(ids.count)
        guard ids.contains(where: { !seen.insert($0.key).inserted }) else { return }
        seen.removeAll(keepingCapacity: true)
        value = .objectIDs(ids.filter { seen.insert($0.key).inserted })
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
        // Every link the save adds or removes on either side, for the integrity pass.
        var links: [StoreLinkChange] = []
        // The page-file store's order: deletes free unique keys, then updates, then inserts.
        for deleted in request.deletedObjects {
            let entity = ObjectIdentifier(deleted.objectID.entity)
            guard let row = rowsByEntity[entity]?.removeValue(forKey: deleted.objectID.key) else { continue }
            StoreLinkChange.append(row.objectID, before: row.values, after: nil, to: &links)
        }
        for update in request.updatedRows {
            let entity = ObjectIdentifier(update.objectID.entity)
            guard var row = rowsByEntity[entity]?[update.objectID.key] else { continue }
            let before = row.values
            var relationshipSlots: [Int] = []
            for change in update.changes where change.slot < row.values.count {
                // An unresolved list keeps the stored one; the integrity pass applies the
                // to-ones of the save to it.
                if case .unresolved = change.value { continue }
                row.values[change.slot] = change.value
                if row.objectID.entity.layout.relationshipBySlot[change.slot] != nil {
                    relationshipSlots.append(change.slot)
                    Self.removeDuplicates(in: &row.values[change.slot])
                }
            }
            row.version += 1
            rowsByEntity[entity]?[update.objectID.key] = row
            result.versions[row.objectID] = row.version
            if !relationshipSlots.isEmpty {
                StoreLinkChange.append(
                    row.objectID, before: before, after: row.values, slots: relationshipSlots, to: &links)
            }
        }
        for inserted in request.insertedRows {
            let entity = ObjectIdentifier(inserted.objectID.entity)
            guard let existingID = replaced[inserted.objectID] else {
                var row = inserted
                row.version = 1
                for slot in row.objectID.entity.layout.relationshipSlots where slot < row.values.count {
                    Self.removeDuplicates(in: &row.values[slot])
                }
                // A force insertion finds the row of another context's force insertion of the
                // same object when both saves found it deleted: the links of the row it
                // replaces are removed, so their other sides let go of it.
                let replacedRow = rowsByEntity[entity, default: [:]].updateValue(row, forKey: row.objectID.key)
                StoreLinkChange.append(row.objectID, before: replacedRow?.values, after: row.values, to: &links)
                continue
            }
            var changedSlots: [Int] = []
            if StoreUniqueness.insertedValuesWin(request.mergePolicyType),
                var existing = rowsByEntity[entity]?[existingID.key]
            {
                let before = existing.values
                changedSlots = StoreUniqueness.absorb(
                    inserted, into: &existing, slots: request.upsertedSlots[inserted.objectID])
                existing.version += 1
                rowsByEntity[entity]?[existingID.key] = existing
                result.versions[existingID] = existing.version
                StoreLinkChange.append(existingID, before: before, after: existing.values, to: &links)
            }
            StoreUniqueness.recordUpsert(
                of: inserted.objectID, into: existingID, changedSlots: changedSlots, in: &historyRecord)
        }
        if !replaced.isEmpty { rewriteReferences(replaced) }
        if !links.isEmpty {
            // Upserts whose stored values won changed no row.
            var written = ObjectIDSet(request.updatedRows.map(\.objectID))
            for row in request.insertedRows {
                if let existingID = replaced[row.objectID] {
                    if StoreUniqueness.insertedValuesWin(request.mergePolicyType) { written.insert(existingID) }
                } else {
                    written.insert(row.objectID)
                }
            }
            try repairRelationships(
                links, written: written, deleted: Set(request.deletedObjects.map(\.objectID)), replaced: replaced,
                history: &historyRecord, result: &result)
        }
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
