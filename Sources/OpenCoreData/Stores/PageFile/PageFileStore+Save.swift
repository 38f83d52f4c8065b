// Saving to the page-file store: one engine write transaction per save, holding rows,
// index entries and metadata. Optimistic locking compares row versions; unique
// indexes refuse a duplicate (133021) or, under a trump policy, turn the insert into
// an update of the existing row (an upsert that keeps the existing object ID).
import Foundation
import StorageEngine

extension PageFileStore {
    func saveRows(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        if isReadOnly {
            throw CoreDataError.make(NSPersistentStoreSaveError, "the store at \(url?.path ?? "?") was added read-only")
        }
        for inserted in request.insertedRows where inserted.objectID.persistentStore !== self {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "inserted row \(inserted.objectID) does not have an ID of this store")
        }
        let codec = self.codec
        let database = try openDatabase()
        do {
            let result = try database.write { transaction in
                try apply(request, in: transaction, codec: codec)
            }
            didWriteMetadata()
            return result
        } catch {
            throw translate(error, NSPersistentStoreSaveError)
        }
    }

    private func apply(_ request: StoreSaveRequest, in transaction: WriteTransaction, codec: PageFileRowCodec) throws
        -> StoreSaveResult
    {
        // 1. Optimistic locking: every updated or deleted row must be at the version the context saw.
        var stored: [NSManagedObjectID: StoreRow] = [:]
        var conflicts: [NSManagedObjectID] = []
        var conflictDetails: [[String: Any]] = []
        for update in request.updatedRows {
            guard let row = try loadRow(update.objectID.entity, key: update.objectID.key, in: transaction, codec: codec)
            else {
                throw CoreDataError.make(
                    NSManagedObjectReferentialIntegrityError,
                    "cannot update \(update.objectID): the store has no such object (deleted elsewhere?)")
            }
            stored[update.objectID] = row
            if request.checksVersions, row.version != update.expectedVersion {
                conflicts.append(update.objectID)
                conflictDetails.append(conflictDetail(update.objectID, row: row, expected: update.expectedVersion))
            }
        }
        for deleted in request.deletedObjects {
            guard
                let row = try loadRow(deleted.objectID.entity, key: deleted.objectID.key, in: transaction, codec: codec)
            else { continue }
            stored[deleted.objectID] = row
            if request.checksVersions, row.version != deleted.expectedVersion {
                conflicts.append(deleted.objectID)
                conflictDetails.append(conflictDetail(deleted.objectID, row: row, expected: deleted.expectedVersion))
            }
        }
        if !conflicts.isEmpty {
            throw CoreDataError.make(
                NSManagedObjectMergeError,
                "optimistic locking failure: \(conflicts.count) object(s) changed in the store since they were read",
                userInfo: [
                    NSAffectedObjectsErrorKey: conflicts, NSPersistentStoreSaveConflictsErrorKey: conflictDetails,
                ])
        }

        // Built before the rows change: a delete's tombstone needs the row it removes.
        var history =
            isHistoryTrackingEnabled && !request.isEmpty
            ? PersistentHistoryRecord(request: request, storedRow: { stored[$0] }) : nil
        var result = StoreSaveResult()
        // Ordinary index entries added by this save, written sorted at the end: a bulk insert
        // then appends to each index tree instead of splitting pages at random places.
        var pending: [String: Set<[UInt8]>] = [:]
        // 2. Deletions first, so their unique keys are free for this save's inserts.
        for deleted in request.deletedObjects {
            guard let row = stored[deleted.objectID] else { continue }
            let info = try info(for: deleted.objectID.entity)
            try removeEntries(of: row, info: info, in: transaction, pending: &pending)
            _ = try transaction.openTree(named: info.treeName).removeValue(
                forKey: PageFileKey.primary(row.objectID.key))
        }
        // 3. Updates.
        for update in request.updatedRows {
            guard var row = stored[update.objectID] else { continue }
            let info = try info(for: update.objectID.entity)
            try removeEntries(of: row, info: info, in: transaction, pending: &pending)
            for change in update.changes where change.slot < row.values.count {
                if case .unresolved = change.value { continue }
                row.values[change.slot] = change.value
            }
            row.version += 1
            if let owner = try uniqueOwner(of: row, info: info, in: transaction) {
                throw constraintError(row: row, existing: owner.key, index: owner.index)
            }
            try write(row, info: info, in: transaction, pending: &pending)
            result.versions[row.objectID] = row.version
        }
        // 4. Inserts; a unique-key clash is an error or an upsert by the merge policy.
        var replaced: [NSManagedObjectID: NSManagedObjectID] = [:]
        for inserted in request.insertedRows {
            var row = inserted
            row.version = 1
            row.values = row.values.map { value in
                if case .unresolved = value { return .objectIDs([]) }
                return value
            }
            let info = try info(for: row.objectID.entity)
            if let owner = try uniqueOwner(of: row, info: info, in: transaction) {
                guard request.mergePolicyType != .errorMergePolicyType else {
                    throw constraintError(row: row, existing: owner.key, index: owner.index)
                }
                let existingID = newObjectID(for: row.objectID.entity, key: owner.key)
                guard var existing = try loadRow(row.objectID.entity, key: owner.key, in: transaction, codec: codec)
                else { continue }
                replaced[row.objectID] = existingID
                var changedSlots: [Int] = []
                if request.mergePolicyType == .mergeByPropertyObjectTrumpMergePolicyType
                    || request.mergePolicyType == .overwriteMergePolicyType
                {
                    try removeEntries(of: existing, info: info, in: transaction, pending: &pending)
                    let layout = row.objectID.entity.layout
                    for slot in row.values.indices where slot < existing.values.count {
                        if layout.relationshipBySlot[slot] != nil {
                            switch row.values[slot] {
                            case .null, .unresolved: continue
                            case .objectIDs(let ids) where ids.isEmpty: continue
                            default: break
                            }
                        }
                        if existing.values[slot] != row.values[slot] { changedSlots.append(slot) }
                        existing.values[slot] = row.values[slot]
                    }
                    existing.version += 1
                    try write(existing, info: info, in: transaction, pending: &pending)
                    result.versions[existingID] = existing.version
                }
                if let position = history?.changes.firstIndex(where: {
                    $0.kind == .insert && $0.key == row.objectID.key && $0.entityName == row.objectID.entity.name
                }) {
                    if changedSlots.isEmpty {
                        history?.changes.remove(at: position)
                    } else {
                        history?.changes[position] = .update(existingID, slots: changedSlots)
                    }
                }
                continue
            }
            try write(row, info: info, in: transaction, pending: &pending)
        }
        if !replaced.isEmpty { try rewriteReferences(replaced, in: transaction, codec: codec) }
        result.replacedObjectIDs = replaced
        for (treeName, keys) in pending where !keys.isEmpty {
            let tree = try transaction.openTree(named: treeName)
            for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) { try tree.setValue([], forKey: key) }
        }
        if let history, !history.changes.isEmpty { try appendHistory(history, in: transaction) }
        if needsMetadataWrite { try writeMetadata(in: transaction) }
        return result
    }

    private func conflictDetail(_ id: NSManagedObjectID, row: StoreRow, expected: Int64) -> [String: Any] {
        ["objectID": id, "newVersionNumber": row.version, "oldVersionNumber": expected]
    }

    private func constraintError(row: StoreRow, existing: Int64, index: PageFileIndex) -> NSError {
        let layout = row.objectID.entity.layout
        let names = index.slots.map { layout.properties[$0].name }
        var values: [String: Any] = [:]
        for slot in index.slots where slot < row.values.count {
            values[layout.properties[slot].name] = layout.attributeBySlot[slot]?.attributeValue(row.values[slot])
        }
        let existingID = newObjectID(for: row.objectID.entity, key: existing)
        let detail: [String: Any] = [
            "constraint": names, "constraintValues": values, "databaseObject": existingID,
            "conflictingObjects": [row.objectID],
        ]
        return CoreDataError.make(
            NSManagedObjectConstraintMergeError,
            "uniqueness constraint \(names) of \(row.objectID.entity.name ?? "?") violated: \(values) "
                + "is already held by \(existingID)",
            userInfo: [NSPersistentStoreSaveConflictsErrorKey: [detail], NSAffectedObjectsErrorKey: [row.objectID]])
    }

    /// The primary key holding one of `row`'s unique keys, when it is another row.
    private func uniqueOwner(of row: StoreRow, info: EntityInfo, in transaction: WriteTransaction) throws
        -> (key: Int64, index: PageFileIndex)?
    {
        for index in info.indexes where index.isUnique {
            guard let key = index.key(for: row.values, primaryKey: row.objectID.key),
                let tree = try transaction.tree(named: index.treeName), let value = try tree.value(forKey: key)
            else { continue }
            guard let owner = value.withUnsafeBytes({ PageFileKey.primaryKey($0) }) else {
                throw CoreDataError.make(
                    NSFileReadCorruptFileError, "a unique index entry of \(index.treeName) is damaged")
            }
            if owner != row.objectID.key { return (owner, index) }
        }
        return nil
    }

    private func write(
        _ row: StoreRow, info: EntityInfo, in transaction: WriteTransaction, pending: inout [String: Set<[UInt8]>]
    ) throws {
        let bytes = PageFileRowCodec.encode(
            values: row.values, version: row.version, layout: row.objectID.entity.layout)
        try transaction.openTree(named: info.treeName).setValue(bytes, forKey: PageFileKey.primary(row.objectID.key))
        for index in info.indexes {
            guard let key = index.key(for: row.values, primaryKey: row.objectID.key) else { continue }
            if index.isUnique {
                // Immediately: later rows of this save check their unique keys against it.
                try transaction.openTree(named: index.treeName).setValue(
                    PageFileKey.primary(row.objectID.key), forKey: key)
            } else {
                pending[index.treeName, default: []].insert(key)
            }
        }
    }

    private func removeEntries(
        of row: StoreRow, info: EntityInfo, in transaction: WriteTransaction, pending: inout [String: Set<[UInt8]>]
    ) throws {
        for index in info.indexes {
            guard let key = index.key(for: row.values, primaryKey: row.objectID.key) else { continue }
            if !index.isUnique, pending[index.treeName]?.remove(key) != nil { continue }
            guard let tree = try transaction.tree(named: index.treeName)
            else { continue }
            if index.isUnique {
                // Only this row's own entry: never another row's.
                guard let owner = try tree.value(forKey: key), owner == PageFileKey.primary(row.objectID.key) else {
                    continue
                }
            }
            _ = try tree.removeValue(forKey: key)
        }
    }

    /// Points references to upserted objects at the rows that absorbed them.
    private func rewriteReferences(
        _ replaced: [NSManagedObjectID: NSManagedObjectID], in transaction: WriteTransaction, codec: PageFileRowCodec
    ) throws {
        let targets = Set(replaced.keys.map(\.entity).map(ObjectIdentifier.init))
        for entity in persistentStoreCoordinator?.managedObjectModel.entities ?? [] {
            let layout = entity.layout
            let pointing = layout.relationshipSlots.filter { slot in
                guard let destination = layout.relationshipBySlot[slot]?.destinationEntity else { return false }
                return FetchEvaluation.entities(destination, includingSubentities: true).contains {
                    targets.contains(ObjectIdentifier($0))
                }
            }
            guard !pointing.isEmpty, let info = infoByEntityIfAny(entity),
                let tree = try transaction.tree(named: info.treeName)
            else { continue }
            var rewritten: [StoreRow] = []
            try tree.scan { key, value in
                guard let primary = PageFileKey.primaryKey(key) else { return true }
                let decoded = try codec.decode(value, entity: entity)
                var values = decoded.values
                var changed = false
                for slot in pointing where slot < values.count {
                    switch values[slot] {
                    case .objectID(let id):
                        if let new = replaced[id] {
                            values[slot] = .objectID(new)
                            changed = true
                        }
                    case .objectIDs(let ids):
                        if ids.contains(where: { replaced[$0] != nil }) {
                            var seen: Set<NSManagedObjectID> = []
                            values[slot] = .objectIDs(
                                ids.map { replaced[$0] ?? $0 }.filter { seen.insert($0).inserted })
                            changed = true
                        }
                    default: break
                    }
                }
                if changed {
                    rewritten.append(
                        StoreRow(
                            objectID: newObjectID(for: entity, key: primary), version: decoded.version, values: values))
                }
                return true
            }
            for row in rewritten {
                let bytes = PageFileRowCodec.encode(values: row.values, version: row.version, layout: layout)
                try tree.setValue(bytes, forKey: PageFileKey.primary(row.objectID.key))
            }
        }
    }
}
