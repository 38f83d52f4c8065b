// A save refused for conflicts: the store's details become NSMergeConflict and
// NSConstraintConflict objects for the context's merge policy, and once the policy
// has resolved them the save is retried: against the new row versions after an
// optimistic locking failure, from the context's current state after a uniqueness clash.
import Foundation

extension NSManagedObjectContext {
    /// The most times a save is retried after resolving conflicts; another save racing
    /// each retry, or a policy that resolves nothing, is the only way to reach it.
    private static let conflictRetryLimit = 16

    /// Adds the updated objects' changed slots and the deleted objects to `request`.
    func addChanges(
        updated: [NSManagedObject], deleted: [NSManagedObject], to request: inout StoreSaveRequest,
        mapping: [NSManagedObjectID: NSManagedObjectID]
    ) throws {
        for object in updated where !object.objectID.isTemporaryID {
            var changes: [(slot: Int, value: StoreValue)] = []
            for slot in object.dirtySlots.indices where object.dirtySlots[slot] {
                if object.layout.properties[slot].isTransient { continue }
                changes.append((slot, try object.storeValue(slot: slot, mapping: mapping)))
            }
            if changes.isEmpty { continue }
            request.updatedRows.append(
                StoreRowUpdate(objectID: object.objectID, expectedVersion: object.version, changes: changes))
        }
        for object in deleted where !object.objectID.isTemporaryID {
            request.deletedObjects.append((object.objectID, object.version))
        }
    }

    /// Writes the save's changes to the stores; when the merge policy resolves uniqueness
    /// conflicts, writes again what the context holds after the resolution, and leaves
    /// the lists holding the objects finally saved.
    func writeChangesResolvingConstraintConflicts(
        inserted: inout [NSManagedObject], updated: inout [NSManagedObject], deleted: inout [NSManagedObject]
    ) throws -> [NSManagedObjectID: Int64] {
        var accepted: Set<ObjectIdentifier> = []
        var attempt = 0
        while true {
            do {
                return try writeChangesToStores(
                    inserted: inserted, updated: updated, deleted: deleted, acceptedUpserts: accepted)
            } catch let resolved as ConstraintConflictsResolved {
                attempt += 1
                guard attempt < Self.conflictRetryLimit else {
                    throw CoreDataError.make(
                        NSManagedObjectConstraintMergeError,
                        "the save still violated uniqueness constraints after \(attempt) resolutions by the merge policy",
                        userInfo: [NSPersistentStoreSaveConflictsErrorKey: resolved.conflicts])
                }
                accepted.formUnion(resolved.acceptedObjects)
                // The policy may have changed, deleted or inserted objects: save what is there now.
                processPendingChanges()
                try validatePendingChanges()
                inserted = self.inserted.sorted { first, second in
                    let a = first.objectID
                    let b = second.objectID
                    return a.isTemporaryID != b.isTemporaryID ? a.isTemporaryID : a.key < b.key
                }
                updated = self.updated.filter { $0.hasDirtySlots }
                deleted = Array(self.deleted)
            }
        }
    }

    /// Saves `request`; on a conflict, lets the merge policy resolve it and saves again.
    ///
    /// - Throws: ``ConstraintConflictsResolved`` when the policy resolved uniqueness
    ///   conflicts, for the caller to build the save again from the context's objects.
    func saveResolvingConflicts(
        _ request: StoreSaveRequest, updated: [NSManagedObject], deleted: [NSManagedObject],
        mapping: [NSManagedObjectID: NSManagedObjectID], inserted: [NSManagedObjectID: NSManagedObject],
        acceptedUpserts: Set<ObjectIdentifier> = []
    ) throws -> StoreSaveResult {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        let policy = (mergePolicy as? NSMergePolicy) ?? .error
        var request = request
        // A subclass may override resolve(constraintConflicts:), so the store reports every
        // clash it has not accepted; the built-in policies' upserts happen in the store directly.
        if type(of: policy) != NSMergePolicy.self {
            request.upsertObjectIDs = Set(
                inserted.compactMap { id, object in acceptedUpserts.contains(ObjectIdentifier(object)) ? id : nil })
        }
        let insertedRows = request.insertedRows
        // Updated objects whose rows were deleted in the store: kept by the policy (inserted
        // again) or given up (they leave the context once the save succeeds).
        var reinserted: [NSManagedObject] = []
        var vanished: [NSManagedObject] = []
        // Stored objects whose inverse relationships the re-insertions point back at them.
        var repaired: [NSManagedObjectID: [Int]] = [:]
        var attempt = 0
        while true {
            do {
                var result = try coordinator.save(request)
                for object in reinserted { result.versions[object.objectID] = 1 }
                for object in vanished { forgetObjectDeletedInStore(object) }
                if !repaired.isEmpty { adoptRepairedInverses(repaired, saved: updated) }
                return result
            } catch let error as NSError where error.domain == NSCocoaErrorDomain {
                attempt += 1
                if error.code == NSManagedObjectMergeError,
                    let details = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [StoreVersionConflict]
                {
                    // A row only a re-insertion changes, changed since it was read: the retry reads it again.
                    var ownDetails = details
                    if !repaired.isEmpty {
                        let saved = Set(updated.map(\.objectID))
                        ownDetails.removeAll { repaired[$0.objectID] != nil && !saved.contains($0.objectID) }
                    }
                    let conflicts = mergeConflicts(ownDetails, updated: updated, deleted: deleted)
                    guard conflicts.count == ownDetails.count else { throw error }
                    if !conflicts.isEmpty { try policy.resolve(optimisticLockingConflicts: conflicts) }
                    guard attempt < Self.conflictRetryLimit else {
                        throw CoreDataError.make(
                            NSManagedObjectMergeError,
                            "the save still conflicted after \(attempt) merges: other saves keep changing its objects",
                            userInfo: [
                                NSPersistentStoreSaveConflictsErrorKey: conflicts,
                                NSAffectedObjectsErrorKey: conflicts.map(\.sourceObject.objectID),
                            ])
                    }
                    for conflict in conflicts where conflict.persistedValues == nil {
                        let object = conflict.sourceObject
                        guard !object.deletedFlag, !reinserted.contains(where: { $0 === object }),
                            !vanished.contains(where: { $0 === object })
                        else { continue }
                        // What the policy left of the object's changes decides: some, the object wins.
                        if object.hasDirtySlots { reinserted.append(object) } else { vanished.append(object) }
                    }
                    request.insertedRows = insertedRows
                    request.updatedRows = []
                    request.deletedObjects = []
                    let reinsertedIDs = Set(reinserted.map(ObjectIdentifier.init))
                    // A delete the policy rolled back (the object is no longer deleted) is not sent.
                    try addChanges(
                        updated: updated.filter { !reinsertedIDs.contains(ObjectIdentifier($0)) },
                        deleted: deleted.filter(\.deletedFlag), to: &request, mapping: mapping)
                    repaired = [:]
                    for object in reinserted {
                        request.insertedRows.append(
                            try reinsertionRow(for: object, mapping: mapping, repairing: &request, repaired: &repaired))
                    }
                    continue
                }
                if error.code == NSManagedObjectConstraintMergeError,
                    let details = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [StoreConstraintConflict]
                {
                    let conflicts = constraintConflicts(details, inserted: inserted)
                    try policy.resolve(constraintConflicts: conflicts)
                    throw ConstraintConflictsResolved(conflicts: conflicts)
                }
                throw error
            }
        }
    }

    /// The store's conflict details with this context's objects.
    private func mergeConflicts(
        _ details: [StoreVersionConflict], updated: [NSManagedObject], deleted: [NSManagedObject]
    ) -> [NSMergeConflict] {
        var byID: [NSManagedObjectID: NSManagedObject] = [:]
        for object in updated { byID[object.objectID] = object }
        for object in deleted { byID[object.objectID] = object }
        return details.compactMap { detail in
            guard let object = byID[detail.objectID] ?? registry[detail.objectID] else { return nil }
            return NSMergeConflict(source: object, conflict: detail)
        }
    }

    /// The store's clash details as Core Data reports them: one conflict per constraint
    /// and holder of the values; a clash among this save's inserted objects has no
    /// database object and lists every inserted object sharing the values.
    private func constraintConflicts(
        _ details: [StoreConstraintConflict], inserted: [NSManagedObjectID: NSManagedObject]
    ) -> [NSConstraintConflict] {
        var order: [String] = []
        var groups: [String: (detail: StoreConstraintConflict, objects: [NSManagedObject])] = [:]
        for detail in details {
            var detail = detail
            var objects: [NSManagedObject] = []
            let holder = detail.databaseRow?.objectID
            if let holder, let object = inserted[holder] {
                objects.append(object)
                detail = StoreConstraintConflict(
                    constraint: detail.constraint, constraintValues: detail.constraintValues, databaseRow: nil,
                    conflictingObjectIDs: detail.conflictingObjectIDs)
            }
            objects += detail.conflictingObjectIDs.compactMap { inserted[$0] ?? registry[$0] }
            let entity = detail.conflictingObjectIDs.first?.entity.name ?? ""
            let key = "\(entity)\u{0}\(detail.constraint)\u{0}\(holder.map { "\($0)" } ?? "\(order.count)")"
            if var group = groups[key] {
                for object in objects where !group.objects.contains(where: { $0 === object }) {
                    group.objects.append(object)
                }
                groups[key] = group
            } else {
                order.append(key)
                groups[key] = (detail, objects)
            }
        }
        return order.compactMap { key in
            guard let group = groups[key] else { return nil }
            return NSConstraintConflict(
                group.detail, databaseObject: group.detail.databaseRow.map { object(with: $0.objectID) },
                conflictingObjects: group.objects)
        }
    }

    /// Restores `object`, deleted in this save, to the stored state: the merge policy
    /// discarded the delete (the row changed in the store since the object was read).
    func restoreDeletedObject(_ object: NSManagedObject, values: [Any?]?, version: Int64) {
        object.deletedFlag = false
        deleted.remove(object)
        noticeDeleted.remove(object)
        if let values {
            object.values = values
            object.committed = values
        }
        object.dirtySlots = []
        object.version = version
        object.awake(fromSnapshotEvents: .mergePolicy)
    }

    /// Removes `object`, whose row another save deleted, once the merge policy discarded
    /// its changes: it leaves the context as a merged deletion does.
    private func forgetObjectDeletedInStore(_ object: NSManagedObject) {
        registry[object.objectID] = nil
        updated.remove(object)
        object.updatedFlag = false
        object.managedObjectContext = nil
        noticeDeleted.insert(object)
    }
}

/// Thrown inside a save once the merge policy resolved uniqueness conflicts without
/// failing: the save is built again from the context's objects, with the upserts the
/// policy accepted.
struct ConstraintConflictsResolved: Error, @unchecked Sendable {
    /// The conflicts the policy resolved.
    let conflicts: [NSConstraintConflict]

    /// The inserted objects whose clash becomes an upsert.
    var acceptedObjects: [ObjectIdentifier] {
        conflicts.filter(\.resolvedByUpsert).flatMap { $0.conflictingObjects.map(ObjectIdentifier.init) }
    }
}
