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

    /// Merges changes described by object IDs (`NSInsertedObjectsKey`... holding
    /// `NSManagedObjectID`s or URIs) into the contexts given, as Core Data's class method.
    public class func mergeChanges(
        fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [NSManagedObjectContext]
    ) {
        func ids(_ key: String) -> [NSManagedObjectID] {
            let values =
                (changeNotificationData[key] as? [Any]) ?? (changeNotificationData[key] as? Set<AnyHashable>)
                .map { Array($0) as [Any] } ?? []
            return values.compactMap { value in
                if let id = value as? NSManagedObjectID { return id }
                if let object = value as? NSManagedObject { return object.objectID }
                return nil
            }
        }
        let changes = SavedChanges(
            inserted: ids(NSInsertedObjectsKey), updated: ids(NSUpdatedObjectsKey), deleted: ids(NSDeletedObjectsKey))
        for context in contexts { context.performAndWait { context.merge(changes) } }
    }

    func merge(_ changes: SavedChanges) {
        OpenCoreDataDebugLog.log(
            1,
            "merge into \(name ?? "a context"): \(changes.inserted.count) inserted, \(changes.updated.count) updated, "
                + "\(changes.deleted.count) deleted")
        var refreshed: Set<NSManagedObject> = []
        for id in changes.updated {
            guard let object = registry[id] else { continue }
            refresh(object, mergeChanges: true)
            refreshed.insert(object)
        }
        for id in changes.deleted {
            guard let object = registry[id] else { continue }
            lifecycle.invalidate(object)
        }
        lifecycle.postObjectsDidChange(refreshed: refreshed)
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
