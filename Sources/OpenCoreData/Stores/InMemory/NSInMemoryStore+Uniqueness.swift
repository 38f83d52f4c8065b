// Uniqueness constraints in the in-memory store (and so the binary store): the same
// rules as the page-file store (StoreUniqueness.swift), checked before the save changes
// anything. The keys are gathered per save, for the constrained entities it touches only.
import Foundation

extension NSInMemoryStore {
    /// Checks the unique keys `request` leaves behind as the page-file store would, in its
    /// order (deletes free keys, then updates, then inserts), and returns the inserts that
    /// become upserts: the inserted ID to the ID of the row holding its key.
    ///
    /// - Throws: 133021 (`NSManagedObjectConstraintMergeError`) with a
    ///   ``StoreConstraintConflict`` for every update taking another row's key and every
    ///   insert clash the request does not allow to become an upsert.
    func uniquenessUpserts(for request: StoreSaveRequest) throws -> [NSManagedObjectID: NSManagedObjectID] {
        var constraintsByEntity: [ObjectIdentifier: [StoreUniqueKey]] = [:]
        for entity in request.insertedRows.map(\.objectID.entity) + request.updatedRows.map(\.objectID.entity) {
            let identifier = ObjectIdentifier(entity)
            if constraintsByEntity[identifier] == nil {
                constraintsByEntity[identifier] = StoreUniqueKey.constraints(of: entity)
            }
        }
        guard constraintsByEntity.values.contains(where: { !$0.isEmpty }) else { return [:] }
        var keys = UniqueKeyTable(stored: rowsByEntity, deleted: Set(request.deletedObjects.map(\.objectID)))
        // Rows as this save leaves them so far, where they differ from the stored ones.
        var working: [NSManagedObjectID: StoreRow] = [:]
        func current(_ objectID: NSManagedObjectID) -> StoreRow? {
            working[objectID] ?? rowsByEntity[ObjectIdentifier(objectID.entity)]?[objectID.key]
        }
        func clash(_ row: StoreRow, _ constraints: [StoreUniqueKey]) -> (NSManagedObjectID, StoreUniqueKey)? {
            guard let (key, constraint) = keys.owner(of: row, constraints: constraints) else { return nil }
            return (newObjectID(for: row.objectID.entity, key: key), constraint)
        }
        var clashes: [StoreConstraintConflict] = []
        for update in request.updatedRows {
            let constraints = constraintsByEntity[ObjectIdentifier(update.objectID.entity)] ?? []
            guard !constraints.isEmpty, var row = current(update.objectID) else { continue }
            keys.remove(row, constraints: constraints)
            for change in update.changes where change.slot < row.values.count {
                row.values[change.slot] = change.value
            }
            if let (owner, index) = clash(row, constraints) {
                clashes.append(StoreUniqueness.conflict(row: row, constraint: index, databaseRow: current(owner)))
                continue
            }
            keys.add(row, constraints: constraints)
            working[row.objectID] = row
        }
        var replaced: [NSManagedObjectID: NSManagedObjectID] = [:]
        for row in request.insertedRows {
            let constraints = constraintsByEntity[ObjectIdentifier(row.objectID.entity)] ?? []
            guard !constraints.isEmpty else { continue }
            guard let (owner, index) = clash(row, constraints) else {
                keys.add(row, constraints: constraints)
                working[row.objectID] = row
                continue
            }
            guard StoreUniqueness.upserts(row.objectID, in: request) else {
                clashes.append(StoreUniqueness.conflict(row: row, constraint: index, databaseRow: current(owner)))
                continue
            }
            guard var existing = current(owner) else { continue }
            replaced[row.objectID] = owner
            if StoreUniqueness.insertedValuesWin(request.mergePolicyType) {
                keys.remove(existing, constraints: constraints)
                _ = StoreUniqueness.absorb(row, into: &existing, slots: request.upsertedSlots[row.objectID])
                keys.add(existing, constraints: constraints)
                working[owner] = existing
            }
        }
        if !clashes.isEmpty { throw StoreUniqueness.constraintError(clashes) }
        return replaced
    }

    /// Points stored references to upserted objects at the rows that absorbed them.
    func rewriteReferences(_ replaced: [NSManagedObjectID: NSManagedObjectID]) {
        let targets = Set(replaced.keys.map(\.entity).map(ObjectIdentifier.init))
        for entity in persistentStoreCoordinator?.managedObjectModel.entities ?? [] {
            let identifier = ObjectIdentifier(entity)
            let pointing = StoreUniqueness.slots(of: entity, pointingAt: targets)
            guard !pointing.isEmpty, let rows = rowsByEntity[identifier] else { continue }
            for (key, row) in rows {
                var values = row.values
                if StoreUniqueness.rewriteReferences(in: &values, slots: pointing, replaced: replaced) {
                    rowsByEntity[identifier]?[key]?.values = values
                }
            }
        }
    }
}

/// The unique keys of the entities one save touches: per concrete entity and constraint,
/// key bytes to primary key. An entity's stored rows are read in on first use.
private struct UniqueKeyTable {
    /// The store's rows before the save.
    let stored: [ObjectIdentifier: [Int64: StoreRow]]
    /// Rows the save deletes: their keys are free.
    let deleted: Set<NSManagedObjectID>
    private var ownersByEntity: [ObjectIdentifier: [String: [[UInt8]: Int64]]] = [:]

    init(stored: [ObjectIdentifier: [Int64: StoreRow]], deleted: Set<NSManagedObjectID>) {
        self.stored = stored
        self.deleted = deleted
    }

    private mutating func load(
        _ entity: NSEntityDescription, constraints: [StoreUniqueKey]
    ) {
        let identifier = ObjectIdentifier(entity)
        guard ownersByEntity[identifier] == nil else { return }
        var owners: [String: [[UInt8]: Int64]] = [:]
        for constraint in constraints { owners[constraint.name] = [:] }
        for (key, row) in stored[identifier] ?? [:] where !deleted.contains(row.objectID) {
            for constraint in constraints {
                guard let bytes = constraint.key(for: row.values, primaryKey: key) else { continue }
                owners[constraint.name]?[bytes] = key
            }
        }
        ownersByEntity[identifier] = owners
    }

    /// The primary key holding one of `row`'s unique keys, when it is another row.
    mutating func owner(
        of row: StoreRow, constraints: [StoreUniqueKey]
    ) -> (Int64, StoreUniqueKey)? {
        load(row.objectID.entity, constraints: constraints)
        let owners = ownersByEntity[ObjectIdentifier(row.objectID.entity)] ?? [:]
        for constraint in constraints {
            guard let bytes = constraint.key(for: row.values, primaryKey: row.objectID.key),
                let owner = owners[constraint.name]?[bytes], owner != row.objectID.key
            else { continue }
            return (owner, constraint)
        }
        return nil
    }

    /// Gives `row`'s unique keys to it.
    mutating func add(
        _ row: StoreRow, constraints: [StoreUniqueKey]
    ) {
        load(row.objectID.entity, constraints: constraints)
        let identifier = ObjectIdentifier(row.objectID.entity)
        for constraint in constraints {
            guard let bytes = constraint.key(for: row.values, primaryKey: row.objectID.key) else { continue }
            ownersByEntity[identifier]?[constraint.name]?[bytes] = row.objectID.key
        }
    }

    /// Frees `row`'s own unique keys (never another row's).
    mutating func remove(
        _ row: StoreRow, constraints: [StoreUniqueKey]
    ) {
        load(row.objectID.entity, constraints: constraints)
        let identifier = ObjectIdentifier(row.objectID.entity)
        for constraint in constraints {
            guard let bytes = constraint.key(for: row.values, primaryKey: row.objectID.key),
                ownersByEntity[identifier]?[constraint.name]?[bytes] == row.objectID.key
            else { continue }
            ownersByEntity[identifier]?[constraint.name]?[bytes] = nil
        }
    }
}
