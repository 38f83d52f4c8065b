// Lightweight migration of the binary store (SPEC.md §4 B5): the same row transform as
// the default store's (MigrationRowTransform), on rows that are all in memory anyway.
// The file's rows are decoded with the model its record describes, transformed, checked
// against the new model's uniqueness constraints, and the new image replaces the file
// atomically (B2), so a failure or a crash leaves the old file or the new one.
import Foundation
import StorageEngine

extension NSBinaryStore {
    /// The migrated image of the file `bytes` (metadata `metadata`), written over the file.
    ///
    /// - Throws: 134100 when the file has no model record to migrate from; the plan's 134140
    ///   for a change lightweight migration cannot infer; the transform's 134110; 134111
    ///   for rows breaking a uniqueness constraint; `NSPersistentStoreSaveError` when the
    ///   file cannot be written. The file is unchanged after any of them.
    func migrateImage(
        _ bytes: [UInt8], metadata: [String: Any], to model: NSManagedObjectModel, path: String,
        write: ([UInt8]) throws -> Void
    ) throws -> BinaryStoreFile.Image {
        guard let sourceModel = try ModelRecord.model(in: metadata) else {
            throw CoreDataError.make(
                NSPersistentStoreIncompatibleVersionHashError,
                "the model is not compatible with the binary store at \(path), which was written before stores "
                    + "recorded their model: open it once with the model that wrote it, then migrate")
        }
        let plan = try LightweightMigrationPlan(inferringFrom: sourceModel, to: model)
        OpenCoreDataDebugLog.log(
            1,
            "migrate the binary store at \(path) (lightweight, \(plan.changes.count) changes: "
                + plan.changes.map(\.description).joined(separator: "; ") + ")")
        sourceModel.freeze()
        let image = try BinaryStoreFile.decode(bytes, path: path, store: self, model: sourceModel) { _ in }
        let transform = MigrationRowTransform(plan: plan) { [unowned self] in newObjectID(for: $0, key: $1) }
        for relationship in transform.reversedRelationships {
            guard let owner = relationship.entity,
                let slot = owner.layout.properties.firstIndex(where: { $0 === relationship })
            else { continue }
            for row in image.rows where row.objectID.entity.isKindOf(entity: owner) && slot < row.values.count {
                switch row.values[slot] {
                case .objectID(let id): transform.noteReversed(relationship, owner: row.objectID, destinations: [id])
                case .objectIDs(let ids): transform.noteReversed(relationship, owner: row.objectID, destinations: ids)
                default: break
                }
            }
        }
        var rows: [StoreRow] = []
        rows.reserveCapacity(image.rows.count)
        for row in image.rows {
            guard let migrated = try transform.destinationRow(of: row, toMany: { _, _ in [] }) else { continue }
            rows.append(migrated)
        }
        try checkUniqueness(rows, path: path)
        let history = MigrationHistoryRewrite(plan)
        let journal = InMemoryHistoryJournal(
            records: try image.journal.records.map {
                ($0.sequence, try history.rewritten($0.bytes, what: "history record \($0.sequence) of \(path)"))
            }, currentSequence: image.journal.currentSequence, purgedSequence: image.journal.purgedSequence)
        var migratedMetadata = metadata
        migratedMetadata.merge(try model.storeIdentityMetadata()) { _, identity in identity }
        var table: [ObjectIdentifier: [Int64: StoreRow]] = [:]
        for row in rows { table[ObjectIdentifier(row.objectID.entity), default: [:]][row.objectID.key] = row }
        try write(
            try BinaryStoreFile.encode(
                metadata: migratedMetadata, nextKey: image.nextKey, rowsByEntity: table, journal: journal,
                model: model))
        return BinaryStoreFile.Image(metadata: migratedMetadata, nextKey: image.nextKey, rows: rows, journal: journal)
    }

    /// Refuses rows two of which hold one key of a uniqueness constraint of their entity.
    private func checkUniqueness(_ rows: [StoreRow], path: String) throws {
        var constraints: [ObjectIdentifier: [StoreUniqueKey]] = [:]
        var seen: [String: Set<[UInt8]>] = [:]
        for row in rows {
            let entity = row.objectID.entity
            let own =
                constraints[ObjectIdentifier(entity)]
                ?? {
                    let found = StoreUniqueKey.constraints(of: entity)
                    constraints[ObjectIdentifier(entity)] = found
                    return found
                }()
            for constraint in own {
                guard let key = constraint.key(for: row.values, primaryKey: row.objectID.key) else { continue }
                let name = "\(entity.name ?? "").\(constraint.name)"
                guard seen[name, default: []].insert(key).inserted else {
                    throw MigrationError.constraintViolation(entity.name ?? "", constraint: constraint.name, path: path)
                }
            }
        }
    }
}
