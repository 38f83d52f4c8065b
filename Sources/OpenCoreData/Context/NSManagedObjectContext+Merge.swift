// Merging changes saved by other contexts: explicitly from a DidSave notification,
// or automatically for contexts with automaticallyMergesChangesFromParent.
import Foundation

extension NSManagedObjectContext {
    /// Brings the changes of another context's save (the notification of
    /// `NSManagedObjectContextDidSave`) into this context: registered objects the save
    /// updated are refreshed (keeping this context's own unsaved changes), those it
    /// deleted leave the context.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        let info = notification.userInfo ?? [:]
        if let changes = info[SavedChanges.userInfoKey] as? SavedChanges {
            merge(changes)
            return
        }
        func ids(_ key: String) -> [NSManagedObjectID] {
            (info[key] as? Set<NSManagedObject>)?.map(\.objectID) ?? []
        }
        merge(
            SavedChanges(
                inserted: ids(NSInsertedObjectsKey), updated: ids(NSUpdatedObjectsKey),
                deleted: ids(NSDeletedObjectsKey)))
    }

    /// Merges changes saved elsewhere — by another process, a batch request, or a context
    /// whose save notification was serialized — into `contexts`, as Core Data's class method.
    ///
    /// `changeNotificationData` holds `NSInsertedObjectsKey`, `NSUpdatedObjectsKey` and
    /// `NSDeletedObjectsKey`, each an array (or set) of `NSManagedObjectID`s or of their URIs
    /// (`uriRepresentation()`, as `URL` or `String`). In each context, registered objects that
    /// were updated are refreshed (a context's unsaved changes are kept, except that under
    /// the store-trump policy the stored values of the properties the store changed win, and
    /// under the rollback policy all stored values win); inserted objects are registered
    /// (as faults) and reported; deleted objects leave the context. Each context posts
    /// `NSManagedObjectContextObjectsDidChange` with what changed. Contexts are merged
    /// parents before children, so a nested context sees its parent's merged state.
    ///
    /// ```swift
    /// let result = try context.execute(batchDelete) as? NSBatchDeleteResult
    /// let ids = result?.result as? [NSManagedObjectID] ?? []
    /// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [viewContext])
    /// ```
    public class func mergeChanges(
        fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [NSManagedObjectContext]
    ) {
        func depth(_ context: NSManagedObjectContext) -> Int {
            var depth = 0
            var current = context.parent
            while let ancestor = current {
                depth += 1
                current = ancestor.parent
            }
            return depth
        }
        let ordered = contexts.enumerated().sorted { (depth($0.element), $0.offset) < (depth($1.element), $1.offset) }
        for context in ordered.map(\.element) {
            context.performAndWait {
                let coordinator = context.persistentStoreCoordinator
                func ids(_ key: String) -> [NSManagedObjectID] {
                    remoteObjectIDs(changeNotificationData[key], coordinator: coordinator)
                }
                context.merge(
                    SavedChanges(
                        inserted: ids(NSInsertedObjectsKey), updated: ids(NSUpdatedObjectsKey),
                        deleted: ids(NSDeletedObjectsKey)),
                    faultsInInserted: true)
            }
        }
    }

    /// The object IDs a remote-save dictionary's value names: IDs, objects, or URIs of them.
    private static func remoteObjectIDs(_ value: Any?, coordinator: NSPersistentStoreCoordinator?)
        -> [NSManagedObjectID]
    {
        let elements: [Any]
        switch value {
        case let array as [Any]: elements = array
        case let set as Set<AnyHashable>: elements = set.map(\.base)
        case let array as NSArray: elements = array.map { $0 }
        case let set as NSSet: elements = set.allObjects
        default: return []
        }
        return elements.compactMap { element -> NSManagedObjectID? in
            switch element {
            case let id as NSManagedObjectID: return id
            case let object as NSManagedObject: return object.objectID
            case let url as URL: return coordinator?.managedObjectID(forURIRepresentation: url)
            case let url as NSURL: return coordinator?.managedObjectID(forURIRepresentation: url as URL)
            case let text as String:
                return URL(string: text).flatMap { coordinator?.managedObjectID(forURIRepresentation: $0) }
            default: return nil
            }
        }
    }

    /// Merges `changes` (saved elsewhere) into this context; with `faultsInInserted`, the
    /// inserted objects are registered as faults and reported as inserted.
    func merge(_ changes: SavedChanges, faultsInInserted: Bool = false) {
        // The changes name rows by the permanent IDs the parent's save gave them.
        adoptDeliveredPermanentIDs()
        // Core Data moves a pinned context to the newest data on every merge, before the
        // merged objects are refreshed from it.
        advanceQueryGeneration()
        OpenCoreDataDebugLog.log(
            1,
            "merge into \(name ?? "a context"): \(changes.inserted.count) inserted, \(changes.updated.count) updated, "
                + "\(changes.deleted.count) deleted")
        var refreshed: Set<NSManagedObject> = []
        var inserted: Set<NSManagedObject> = []
        for id in changes.updated {
            guard let object = registry[id] else { continue }
            mergeStoredValues(into: object)
            refreshed.insert(object)
        }
        if faultsInInserted {
            for id in changes.inserted {
                if let object = registry[id] {
                    // An upsert of a batch insert updated a row this context holds.
                    mergeStoredValues(into: object)
                    refreshed.insert(object)
                } else {
                    inserted.insert(object(with: id))
                }
            }
        }
        var invalidated: [NSManagedObject] = []
        for id in changes.deleted {
            guard let object = registry[id] else { continue }
            lifecycle.invalidate(object)
            invalidated.append(object)
        }
        lifecycle.postObjectsDidChange(
            refreshed: refreshed, merged: inserted, mergedObjectIDs: changes.inserted + changes.updated)
        // Once observers saw them, they drop their values as a saved delete does: related
        // both ways, they would keep each other (and what they name) alive for good.
        lifecycle.releaseSavedDeletes(invalidated)
    }

    /// Brings the stored values of `object` in: its unsaved changes stay, unless the
    /// context's merge policy lets the store's values win (store trump: the properties the
    /// store changed; rollback: all), resolved as a save conflict would be.
    private func mergeStoredValues(into object: NSManagedObject) {
        if object.hasDirtySlots, !object.isDeleted, !object.isFault, parent == nil,
            let policy = mergePolicy as? NSMergePolicy,
            policy.mergeType == .mergeByPropertyStoreTrumpMergePolicyType
                || policy.mergeType == .rollbackMergePolicyType,
            let row = try? persistentStoreCoordinator?.row(for: object.objectID)
        {
            policy.merge(
                NSMergeConflict(
                    source: object,
                    conflict: StoreVersionConflict(
                        objectID: object.objectID, persistedRow: row, expectedVersion: object.version)))
            return
        }
        refresh(object, mergeChanges: true)
    }

    /// After a save: contexts that merge automatically get the changes on their queue.
    func notifyAutomaticMerging(_ changes: SavedChanges) {
        var targets = childContexts.filter { $0.automaticallyMergesChangesFromParent }
        if parent == nil, let coordinator = persistentStoreCoordinator {
            targets += coordinator.automaticallyMergingContexts.filter { $0 !== self }
        }
        for target in targets {
            target.perform { target.merge(changes) }
        }
    }
}

extension Notification.Name {
    /// Posted by a context when it processes pending changes that changed objects.
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name(
        "NSObjectsChangedInManagingContextNotification")
    /// Posted by a context before it saves.
    public static let NSManagedObjectContextWillSave = Notification.Name("NSManagingContextWillSaveChangesNotification")
    /// Posted by a context after it saved; pass it to `mergeChanges(fromContextDidSave:)`.
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagingContextDidSaveChangesNotification")
}

/// userInfo key: the inserted objects of a change or save notification.
public let NSInsertedObjectsKey = "inserted"
/// userInfo key: the updated objects of a change or save notification.
public let NSUpdatedObjectsKey = "updated"
/// userInfo key: the deleted objects of a change or save notification.
public let NSDeletedObjectsKey = "deleted"
/// userInfo key: the objects refreshed by a merge or refresh.
public let NSRefreshedObjectsKey = "refreshed"
/// userInfo key: the objects invalidated (their rows are gone).
public let NSInvalidatedObjectsKey = "invalidated"
/// userInfo key: present when every object of the context was invalidated.
public let NSInvalidatedAllObjectsKey = "invalidatedAll"
