// A save refused for conflicts: the store's details become NSMergeConflict and
// NSConstraintConflict objects for the context's merge policy, and once the policy
// has merged the stale objects the save is retried against the new versions.
import Foundation

extension NSManagedObjectContext {
    /// The most times a save is retried after resolving conflicts; another save racing
    /// each retry is the only way to reach it.
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

    /// Saves `request`; on a conflict, lets the merge policy resolve it and saves again.
    func saveResolvingConflicts(
        _ request: StoreSaveRequest, updated: [NSManagedObject], deleted: [NSManagedObject],
        mapping: [NSManagedObjectID: NSManagedObjectID], inserted: [NSManagedObjectID: NSManagedObject]
    ) throws -> StoreSaveResult {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        let policy = (mergePolicy as? NSMergePolicy) ?? .error
        var request = request
        var attempt = 0
        while true {
            do {
                return try coordinator.save(request)
            } catch let error as NSError where error.domain == NSCocoaErrorDomain {
                attempt += 1
                if error.code == NSManagedObjectMergeError,
                    let details = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [StoreVersionConflict]
                {
                    let conflicts = mergeConflicts(details, updated: updated, deleted: deleted)
                    guard conflicts.count == details.count else { throw error }
                    try policy.resolve(optimisticLockingConflicts: conflicts)
                    guard attempt < Self.conflictRetryLimit else {
                        throw CoreDataError.make(
                            NSManagedObjectMergeError,
                            "the save still conflicted after \(attempt) merges: other saves keep changing its objects",
                            userInfo: [
                                NSPersistentStoreSaveConflictsErrorKey: conflicts,
                                NSAffectedObjectsErrorKey: conflicts.map(\.sourceObject.objectID),
                            ])
                    }
                    request.updatedRows = []
                    request.deletedObjects = []
                    try addChanges(updated: updated, deleted: deleted, to: &request, mapping: mapping)
                    continue
                }
                if error.code == NSManagedObjectConstraintMergeError,
                    let details = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [StoreConstraintConflict]
                {
                    let conflicts = details.map { detail in
                        NSConstraintConflict(
                            detail,
                            databaseObject: detail.databaseRow.map { object(with: $0.objectID) },
                            conflictingObjects: detail.conflictingObjectIDs.compactMap {
                                inserted[$0] ?? registry[$0]
                            })
                    }
                    try policy.resolve(constraintConflicts: conflicts)
                    // A policy that accepts a clash the store refused has nothing the store can write.
                    throw CoreDataError.make(
                        NSManagedObjectConstraintMergeError, error.localizedDescription,
                        userInfo: [NSPersistentStoreSaveConflictsErrorKey: conflicts])
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
}
