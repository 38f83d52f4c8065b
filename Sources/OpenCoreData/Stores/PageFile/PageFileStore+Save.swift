// Saving to the page-file store: one engine write transaction per save, holding rows,
// index entries and metadata. Optimistic locking compares row versions; unique
// indexes refuse a duplicate (133021, every clash of the save reported at once) or,
// when the request allows it under a trump policy, turn the insert into an update of
// the existing row (an upsert that keeps the existing object ID).
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
        stored.reserveCapacity(request.updatedRows.count + request.deletedObjects.count)
        var conflicts: [NSManagedObjectID] = []
        var conflictDetails: [StoreVersionConflict] = []
        for update in request.updatedRows {
            guard
                let row = try loadRow(
                    update.objectID.entity, key: update.objectID.key, in: transaction, codec: codec,
                    resolvingBlobs: false)
            else {
                conflictDetails.append(try StoreVersionConflict.rowGone(for: update, in: request))
                conflicts.append(update.objectID)
                continue
            }
            stored[update.objectID] = row
            if request.checksVersions, row.version != update.expectedVersion {
                conflicts.append(update.objectID)
                conflictDetails.append(
                    StoreVersionConflict(
                        objectID: update.objectID, persistedRow: try resolvedCopy(row, in: transaction),
                        expectedVersion: update.expectedVersion))
            }
        }
        for deleted in request.deletedObjects {
            guard
                let row = try loadRow(
                    deleted.objectID.entity, key: deleted.objectID.key, in: transaction, codec: codec,
                    resolvingBlobs: isHistoryTrackingEnabled)
            else { continue }
            stored[deleted.objectID] = row
            if request.checksVersions, row.version != deleted.expectedVersion {
                conflicts.append(deleted.objectID)
                conflictDetails.append(
                    StoreVersionConflict(
                        objectID: deleted.objectID, persistedRow: try resolvedCopy(row, in: transaction),
                        expectedVersion: deleted.expectedVersion))
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
        result.versions.reserveCapacity(request.updatedRows.count)
        // Ordinary index entries added by this save, written sorted at the end: a bulk insert
        // then appends to each index tree instead of splitting pages at random places.
        var pending: [String: PendingIndexKeys] = [:]
        // Row trees by entity, opened once per save instead of by name for every row.
        var rowTrees: [ObjectIdentifier: Tree] = [:]
        // 2. Deletions first, so their unique keys are free for this save's inserts.
        for deleted in request.deletedObjects {
            guard let row = stored[deleted.objectID] else { continue }
            let info = try info(for: deleted.objectID.entity)
            try removeEntries(of: row, info: info, in: transaction, pending: &pending)
            if !info.blobSlots.isEmpty { try removeBlobs(of: row, info: info, in: transaction) }
            if !info.joinSlots.isEmpty { try removeJoins(of: row.objectID, in: transaction) }
            _ = try transaction.openTree(named: info.treeName).removeValue(
                forKey: PageFileKey.primary(row.objectID.key))
        }
        // Every clash of the save is reported together, for the merge policy to resolve in one pass.
        var clashes: [StoreConstraintConflict] = []
        // 3. Updates.
        for update in request.updatedRows {
            guard var row = stored[update.objectID] else { continue }
            let info = try info(for: update.objectID.entity)
            try removeEntries(of: row, info: info, in: transaction, pending: &pending)
            try releaseReplacedBlobs(
                of: row, slots: update.changes.lazy.filter { $0.value != .unresolved }.map(\.slot), info: info,
                in: transaction)
            for change in update.changes where change.slot < row.values.count {
                if case .unresolved = change.value { continue }
                row.values[change.slot] = change.value
            }
            row.version += 1
            if let owner = try uniqueOwner(of: row, info: info, in: transaction) {
                clashes.append(
                    try constraintConflict(
                        row: row, existing: owner.key, index: owner.index, in: transaction, codec: codec))
                continue
            }
            try write(row, info: info, in: transaction, pending: &pending)
            for change in update.changes {
                guard case .objectIDs(let destinations) = change.value,
                    let relationship = info.joinSlots.first(where: { $0.slot == change.slot })?.relationship
                else { continue }
                try writeJoin(
                    relationship, source: row.objectID.key, destinations: destinations, isNew: false, in: transaction)
            }
            result.versions[row.objectID] = row.version
        }
        // 4. Inserts; a unique-key clash is an error or an upsert by the merge policy.
        var replaced: [NSManagedObjectID: NSManagedObjectID] = [:]
        var lastInfo: EntityInfo?
        for inserted in request.insertedRows {
            var row = inserted
            row.version = 1
            if row.values.contains(where: { if case .unresolved = $0 { true } else { false } }) {
                row.values = row.values.map { value in
                    if case .unresolved = value { return .objectIDs([]) }
                    return value
                }
            }
            let info: EntityInfo
            if let lastInfo, lastInfo.entity === row.objectID.entity {
                info = lastInfo
            } else {
                info = try self.info(for: row.objectID.entity)
                lastInfo = info
            }
            if let owner = try uniqueOwner(of: row, info: info, in: transaction) {
                guard StoreUniqueness.upserts(row.objectID, in: request) else {
                    clashes.append(
                        try constraintConflict(
                            row: row, existing: owner.key, index: owner.index, in: transaction, codec: codec))
                    continue
                }
                let existingID = newObjectID(for: row.objectID.entity, key: owner.key)
                guard
                    var existing = try loadRow(
                        row.objectID.entity, key: owner.key, in: transaction, codec: codec, resolvingBlobs: false)
                else { continue }
                replaced[row.objectID] = existingID
                var changedSlots: [Int] = []
                if StoreUniqueness.insertedValuesWin(request.mergePolicyType) {
                    try removeEntries(of: existing, info: info, in: transaction, pending: &pending)
                    let before = existing
                    changedSlots = StoreUniqueness.absorb(row, into: &existing)
                    try releaseReplacedBlobs(of: before, slots: changedSlots, info: info, in: transaction)
                    existing.version += 1
                    try write(existing, info: info, in: transaction, pending: &pending)
                    for (slot, relationship) in info.joinSlots where changedSlots.contains(slot) {
                        guard case .objectIDs(let destinations) = existing.values[slot] else { continue }
                        try writeJoin(
                            relationship, source: existing.objectID.key, destinations: destinations, isNew: false,
                            in: transaction)
                    }
                    result.versions[existingID] = existing.version
                }
                StoreUniqueness.recordUpsert(
                    of: row.objectID, into: existingID, changedSlots: changedSlots, in: &history)
                continue
            }
            try write(row, info: info, in: transaction, pending: &pending, rowTrees: &rowTrees)
            for (slot, relationship) in info.joinSlots where slot < row.values.count {
                guard case .objectIDs(let destinations) = row.values[slot], !destinations.isEmpty else { continue }
                try writeJoin(
                    relationship, source: row.objectID.key, destinations: destinations, isNew: true, in: transaction)
            }
        }
        if !clashes.isEmpty { throw StoreUniqueness.constraintError(clashes) }
        if !replaced.isEmpty {
            try rewriteReferences(replaced, in: transaction, codec: codec, pending: &pending)
            try rewriteJoinDestinations(replaced, in: transaction)
        }
        result.replacedObjectIDs = replaced
        for (treeName, keys) in pending {
            let sorted = keys.sortedKeys()
            guard !sorted.isEmpty else { continue }
            let tree = try transaction.openTree(named: treeName)
            for key in sorted { try tree.setValue([], forKey: key) }
        }
        if let history, !history.changes.isEmpty { try appendHistory(history, in: transaction) }
        if needsMetadataWrite { try writeMetadata(in: transaction, includingRecord: metadataRecordChanged) }
        return result
    }

    private func constraintConflict(
        row: StoreRow, existing: Int64, index: PageFileIndex, in transaction: WriteTransaction, codec: PageFileRowCodec
    ) throws -> StoreConstraintConflict {
        let databaseRow = try loadRow(row.objectID.entity, key: existing, in: transaction, codec: codec)
        return StoreUniqueness.conflict(row: row, constraint: index, databaseRow: databaseRow)
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
        _ row: StoreRow, info: EntityInfo, in transaction: WriteTransaction, pending: inout [String: PendingIndexKeys]
    ) throws {
        var rowTrees: [ObjectIdentifier: Tree] = [:]
        try write(row, info: info, in: transaction, pending: &pending, rowTrees: &rowTrees)
    }

    private func write(
        _ row: StoreRow, info: EntityInfo, in transaction: WriteTransaction, pending: inout [String: PendingIndexKeys],
        rowTrees: inout [ObjectIdentifier: Tree]
    ) throws {
        var values = info.blobSlots.isEmpty ? row.values : try externalizedValues(of: row, info: info, in: transaction)
        // To-manys live in join trees or come from their inverse (SPEC.md §3.2 R1).
        for slot in info.externalSlots where slot < values.count { values[slot] = .unresolved }
        let bytes = PageFileRowCodec.encode(
            values: values, version: row.version, layout: row.objectID.entity.layout,
            externalToMany: !info.externalSlots.isEmpty)
        let entityKey = ObjectIdentifier(info.entity)
        let rowTree: Tree
        if let known = rowTrees[entityKey] {
            rowTree = known
        } else {
            rowTree = try transaction.openTree(named: info.treeName)
            rowTrees[entityKey] = rowTree
        }
        try PageFileKey.withPrimary(row.objectID.key) { key in
            try bytes.withUnsafeBytes { try rowTree.setValue($0, forKey: key) }
        }
        for index in info.indexes {
            guard let key = index.key(for: row.values, primaryKey: row.objectID.key) else { continue }
            if index.isUnique {
                // Immediately: later rows of this save check their unique keys against it.
                try transaction.openTree(named: index.treeName).setValue(
                    PageFileKey.primary(row.objectID.key), forKey: key)
            } else {
                pending[index.treeName, default: PendingIndexKeys()].insert(key)
            }
        }
    }

    private func removeEntries(
        of row: StoreRow, info: EntityInfo, in transaction: WriteTransaction, pending: inout [String: PendingIndexKeys]
    ) throws {
        for index in info.indexes {
            guard let key = index.key(for: row.values, primaryKey: row.objectID.key) else { continue }
            if !index.isUnique, pending[index.treeName]?.remove(key) == true { continue }
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
        _ replaced: [NSManagedObjectID: NSManagedObjectID], in transaction: WriteTransaction, codec: PageFileRowCodec,
        pending: inout [String: PendingIndexKeys]
    ) throws {
        let targets = Set(replaced.keys.map(\.entity).map(ObjectIdentifier.init))
        for entity in persistentStoreCoordinator?.managedObjectModel.entities ?? [] {
            let pointing = StoreUniqueness.slots(of: entity, pointingAt: targets)
            guard !pointing.isEmpty, let info = infoByEntityIfAny(entity),
                let tree = try transaction.tree(named: info.treeName)
            else { continue }
            var rewritten: [StoreRow] = []
            var previous: [StoreRow] = []
            try tree.scan { key, value in
                guard let primary = PageFileKey.primaryKey(key) else { return true }
                let decoded = try codec.decode(value, entity: entity)
                var values = decoded.values
                let changed = StoreUniqueness.rewriteReferences(in: &values, slots: pointing, replaced: replaced)
                if changed {
                    previous.append(
                        StoreRow(
                            objectID: newObjectID(for: entity, key: primary), version: decoded.version,
                            values: decoded.values))
                    rewritten.append(
                        StoreRow(
                            objectID: newObjectID(for: entity, key: primary), version: decoded.version, values: values))
                }
                return true
            }
            for (old, row) in zip(previous, rewritten) {
                // Through write(): reference index entries follow the rewritten to-ones.
                try removeEntries(of: old, info: info, in: transaction, pending: &pending)
                try write(row, info: info, in: transaction, pending: &pending)
            }
        }
    }
}

/// The ordinary index keys a save adds to one index tree, written sorted at the end.
/// Kept as a plain list while the save only adds (a bulk insert); a lookup set is built
/// the first time a key must be taken back (an update or delete of this save).
struct PendingIndexKeys {
    private var keys: [[UInt8]] = []
    private var lookup: Set<[UInt8]>?

    mutating func insert(_ key: [UInt8]) {
        if lookup == nil {
            keys.append(key)
        } else if lookup?.insert(key).inserted == true {
            keys.append(key)
        }
    }

    /// Takes `key` back; false when this save did not add it.
    mutating func remove(_ key: [UInt8]) -> Bool {
        if lookup == nil { lookup = Set(keys) }
        return lookup?.remove(key) != nil
    }

    /// The keys still added, in byte order, each once.
    func sortedKeys() -> [[UInt8]] {
        var result: [[UInt8]]
        if let lookup {
            result = keys.filter { lookup.contains($0) }
        } else {
            result = keys
        }
        // Sorted as (first 24 bytes as three big-endian words, length, position) records:
        // plain integer comparisons instead of comparing arrays. Equal words decide by
        // length only when both keys fit in them; longer keys compare their bytes.
        var order: [SortRecord] = []
        order.reserveCapacity(result.count)
        for (index, key) in result.enumerated() { order.append(SortRecord(key, index: index)) }
        order.sort { first, second in
            if first.words != second.words { return first.words < second.words }
            if first.length <= SortRecord.wordBytes && second.length <= SortRecord.wordBytes {
                return first.length < second.length
            }
            return PendingIndexKeys.precedes(result[first.index], result[second.index])
        }
        // A key added twice (or taken back and added again) is written once.
        var unique: [[UInt8]] = []
        unique.reserveCapacity(order.count)
        for record in order {
            let key = result[record.index]
            if let last = unique.last, last == key { continue }
            unique.append(key)
        }
        return unique
    }

    private struct SortRecord {
        static let wordBytes = 24
        let words: (UInt64, UInt64, UInt64)
        let length: Int
        let index: Int

        init(_ key: [UInt8], index: Int) {
            var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
            key.withUnsafeBytes { bytes in
                func word(_ start: Int) -> UInt64 {
                    var value: UInt64 = 0
                    for offset in start..<(start + 8) {
                        value <<= 8
                        if offset < bytes.count { value |= UInt64(bytes[offset]) }
                    }
                    return value
                }
                words = (word(0), word(8), word(16))
            }
            self.words = words
            self.length = key.count
            self.index = index
        }
    }

    /// Byte order (memcmp), the engine's key order.
    static func precedes(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                let common = min(a.count, b.count)
                if common > 0, let left = a.baseAddress, let right = b.baseAddress {
                    let order = memcmp(left, right, common)
                    if order != 0 { return order < 0 }
                }
                return a.count < b.count
            }
        }
    }
}
