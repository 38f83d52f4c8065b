// A save refused for conflicts: the store's details become NSMergeConflict and
// NSConstraintConflict objects for the context's merge policy, and once the policy
// has resolved them (merging, deleting, restoring or inserting objects) the save is
// built again from what the context then holds.
import Foundation

extension NSManagedObjectContext {
    /// The most times a save is retried after resolving conflicts; another save racing
    /// each retry, or a policy that resolves nothing, is the only way to reach it.
    private static let conflictRetryLimit = 16

    /// Adds the updated objects' changed slots and the deleted objects to `request`.
    func addChanges(
        updated: [NSManagedObject], deleted: [NSManagedObject], to request: inout StoreSaveRequest,
        mapping: TemporaryIDMapping
    ) throws {
        let coordinator = persistentStoreCoordinator
        // Two objects of one row (one an upsert superseded, NSManagedObjectContext+Save.swift)
        // may both be in a save: a row it deletes is not also updated, nor deleted twice.
        var deletedIDs = ObjectIDSet(minimumCapacity: deleted.count)
        for object in deleted where !object.objectID.isTemporaryID {
            if deletedIDs.insert(object.objectID) {
                request.deletedObjects.append((object.objectID, object.version))
            }
        }
        for object in updated where !object.objectID.isTemporaryID {
            if !deletedIDs.isEmpty, deletedIDs.contains(object.objectID) { continue }
            var changes: [(slot: Int, value: StoreValue)] = []
            let listsFollowToOnes = object.objectID.persistentStore?.listsFollowInverseToOnes == true
            for slot in object.dirtySlots.indices where object.dirtySlots[slot] {
                if object.layout.properties[slot].isTransient { continue }
                // The store takes such a list from the to-ones naming the object (saved with
                // their own rows): listing ~1,000 IDs here made a one-object save cost as
                // much as the relationship is long.
                if listsFollowToOnes, let relationship = object.layout.relationshipBySlot[slot],
                    relationship.isDecidedByInverseToOne, coordinator?.derivesValues(through: relationship) != true
                {
                    changes.append((slot, .unresolved))
                    continue
                }
                changes.append((slot, try object.storeValue(slot: slot, mapping: mapping)))
            }
            if changes.isEmpty { continue }
            request.updatedRows.append(
                StoreRowUpdate(objectID: object.objectID, expectedVersion: object.version, changes: changes))
        }
    }

    /// Writes the save's changes to the stores; once the merge policy has resolved the
    /// conflicts a store reported, writes again what the context then holds, and leaves
    /// the lists holding the objects finally saved; returns what `writeChangesToStores` does
    /// and the objects a policy relinked.
    func writeChangesResolvingConflicts(
        inserted: inout [NSManagedObject], updated: inout [NSManagedObject], deleted: inout [NSManagedObject]
    ) throws -> (versions: [NSManagedObjectID: Int64], stale: [NSManagedObject], relinked: [NSManagedObject]) {
        var accepted: Set<ObjectIdentifier> = []
        var relinked: [NSManagedObject] = []
        var attempt = 0
        while true {
            do {
                let written = try writeChangesToStores(
                    inserted: inserted, updated: updated, deleted: deleted, acceptedUpserts: accepted)
                return (written.versions, written.stale, relinked)
            } catch let resolved as ConflictsResolved {
                attempt += 1
                guard attempt < Self.conflictRetryLimit else { throw resolved.retryLimitError(attempts: attempt) }
                accepted.formUnion(resolved.acceptedObjects)
                relinked += resolved.relinked
                // The policy merged, deleted, restored or inserted objects: save what is there now.
                processPendingChanges()
                try validatePendingChanges()
                inserted = self.inserted.inCreationOrder()
                updated = self.updated.filter { $0.hasDirtySlots }
                deleted = Array(self.deleted)
            }
        }
    }

    /// Saves `request`; on a conflict, lets the merge policy resolve it.
    ///
    /// - Throws: ``ConflictsResolved`` when the policy resolved the conflicts, for the
    ///   caller to build the save again from the context's objects; the policy's error
    ///   when it does not resolve them.
    func saveResolvingConflicts(
        _ request: StoreSaveRequest, updated: [NSManagedObject], deleted: [NSManagedObject],
        mapping: TemporaryIDMapping, inserted newObjects: NewObjectsByID,
        acceptedUpserts: Set<ObjectIdentifier> = []
    ) throws -> StoreSaveResult {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        // Only conflicts, custom policies and re-insertions look objects up by ID: the map
        // is built for them, not for every save.
        var byID: [NSManagedObjectID: NSManagedObject]?
        func inserted() -> [NSManagedObjectID: NSManagedObject] {
            if let byID { return byID }
            let built = newObjects.dictionary()
            byID = built
            return built
        }
        let policy = (mergePolicy as? NSMergePolicy) ?? .error
        var request = request
        // A subclass may override resolve(constraintConflicts:), so the store reports every
        // clash it has not accepted; the built-in policies' upserts happen in the store directly.
        if type(of: policy) != NSMergePolicy.self {
            var accepted: Set<NSManagedObjectID> = []
            let insertedByID = inserted()
            for (id, object) in insertedByID where acceptedUpserts.contains(ObjectIdentifier(object)) {
                accepted.insert(id)
            }
            // Objects inserted under a permanent ID (inserted again, or given IDs before the save).
            for row in request.insertedRows where insertedByID[row.objectID] == nil {
                if let object = registry[row.objectID], acceptedUpserts.contains(ObjectIdentifier(object)) {
                    accepted.insert(row.objectID)
                }
            }
            request.upsertObjectIDs = accepted
        }
        // Stored objects whose inverse relationships a re-insertion points back at it, by slot.
        var repaired: [NSManagedObjectID: [Int]] = [:]
        if request.insertedRows.count > newObjects.count {
            try addReinsertionRepairs(to: &request, newObjects: inserted(), mapping: mapping, repaired: &repaired)
        }
        do {
            let result = try coordinator.save(request)
            if !repaired.isEmpty { adoptRepairedInverses(repaired, saved: updated) }
            return result
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            if error.code == NSManagedObjectMergeError,
                var details = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [StoreVersionConflict]
            {
                if !repaired.isEmpty {
                    // A row only a re-insertion changes, changed since it was read: the retry reads it again.
                    let saved = Set(updated.map(\.objectID))
                    details.removeAll { repaired[$0.objectID] != nil && !saved.contains($0.objectID) }
                }
                let conflicts = mergeConflicts(details, updated: updated, deleted: deleted)
                guard conflicts.count == details.count else { throw error }
                var links = RelationshipLinks(conflicts.map(\.sourceObject))
                if !conflicts.isEmpty { try policy.resolve(optimisticLockingConflicts: conflicts) }
                throw ConflictsResolved(mergeConflicts: conflicts, constraintConflicts: [], relinked: links.relinked())
            }
            if error.code == NSManagedObjectConstraintMergeError,
                let details = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [StoreConstraintConflict]
            {
                let conflicts = constraintConflicts(details, inserted: inserted())
                try policy.resolve(constraintConflicts: conflicts)
                throw ConflictsResolved(mergeConflicts: [], constraintConflicts: conflicts, relinked: [])
            }
            throw error
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
    func restoreDeletedObject(_ object: NSManagedObject, values: SlotValues?, version: Int64) {
        lifecycle.restoreDeleted(object, values: values, version: version)
    }

    /// Inserts `object` again: its row was deleted by another save and the merge policy
    /// keeps the object. It keeps its object ID and is saved as a new row.
    func insertAgain(_ object: NSManagedObject) {
        guard !object.isInserted, !object.isDeleted else { return }
        lifecycle.insertAgain(object)
    }
}

/// Thrown inside a save once the merge policy resolved the conflicts a store reported
/// without failing: the save is built again from the context's objects, with the
/// upserts the policy accepted.
struct ConflictsResolved: Error, @unchecked Sendable {
    /// The optimistic locking conflicts the policy resolved.
    let mergeConflicts: [NSMergeConflict]
    /// The uniqueness conflicts the policy resolved.
    let constraintConflicts: [NSConstraintConflict]
    /// Objects whose relationships the policy changed, to read their rows once the save
    /// is done (NSManagedObjectContext+Relinked.swift).
    let relinked: [NSManagedObject]

    /// The inserted objects whose clash becomes an upsert.
    var acceptedObjects: [ObjectIdentifier] {
        constraintConflicts.filter(\.resolvedByUpsert).flatMap { $0.conflictingObjects.map(ObjectIdentifier.init) }
    }

    /// The error once resolutions keep failing: other saves racing each retry, or a
    /// policy that resolves nothing.
    func retryLimitError(attempts: Int) -> NSError {
        guard mergeConflicts.isEmpty else {
            return CoreDataError.mergeConflicts(
                mergeConflicts,
                "the save still conflicted after \(attempts) merges: other saves keep changing its objects")
        }
        return CoreDataError.make(
            NSManagedObjectConstraintMergeError,
            "the save still violated uniqueness constraints after \(attempts) resolutions by the merge policy",
            userInfo: [NSPersistentStoreSaveConflictsErrorKey: constraintConflicts])
    }
}

/// The objects a save inserts with the permanent IDs it gave them, looked up by ID only
/// when a conflict or re-insertion asks (a dictionary of every new object cost each save
/// a hash and probe per object).
struct NewObjectsByID {
    let objects: [NSManagedObject]
    let permanentIDs: [NSManagedObjectID]

    /// How many objects the save inserts under new IDs.
    var count: Int { objects.count }

    /// The objects by permanent ID (the first for an ID given twice).
    func dictionary() -> [NSManagedObjectID: NSManagedObject] {
        Dictionary(zip(permanentIDs, objects)) { first, _ in first }
    }
}
