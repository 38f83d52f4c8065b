// The save's notifications: will-save before a save, and did-save with `didSave()` of
// the saved objects after it.
import Foundation

extension ObjectLifecycle {
    /// Posts `NSManagedObjectContextWillSave`.
    func postWillSave() {
        NotificationCenter.default.post(name: .NSManagedObjectContextWillSave, object: context, userInfo: nil)
    }

    /// Calls `didSave()` of the saved objects and posts `NSManagedObjectContextDidSave`
    /// with them; returns their object IDs, for the contexts that merge the save.
    func finishSave(
        inserted savedInserted: [NSManagedObject], updated savedUpdated: [NSManagedObject],
        deleted savedDeleted: [NSManagedObject]
    ) -> SavedChanges {
        let changes = SavedChanges(
            inserted: Self.objectIDs(of: savedInserted), updated: Self.objectIDs(of: savedUpdated),
            deleted: Self.objectIDs(of: savedDeleted))
        for object in savedInserted { object.didSave() }
        for object in savedUpdated { object.didSave() }
        resultsObserver?.contextDidSave()
        // Filled right before the post (NotificationUserInfo.swift keeps the storage): a
        // save that a hook above makes fills and empties the buffers first.
        notificationBuffers.fillDidSave(
            inserted: savedInserted, updated: savedUpdated, deleted: savedDeleted, changes: changes)
        NotificationCenter.default.post(
            name: .NSManagedObjectContextDidSave, object: context, userInfo: notificationBuffers.didSaveInfo)
        notificationBuffers.emptyDidSave()
        return changes
    }

    /// The IDs of `objects`, in order. A save of one object (the common single save) lists
    /// its ID in an array literal (~150 instructions); `map` reserves its array through the
    /// standard library's unspecialized `reserveCapacity` (~460).
    static func objectIDs(of objects: [NSManagedObject]) -> [NSManagedObjectID] {
        objects.count == 1 ? [objects[0].objectID] : objects.map(\.objectID)
    }
}
