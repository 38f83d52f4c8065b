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

    /// The IDs of `objects`, in order. `map` reserved its array through the standard
    /// library's unspecialized `reserveCapacity` (about 250 instructions per list, two
    /// lists per save); an array literal (a save of one or two objects) is allocated
    /// inline, and a larger list is written into an array of its exact size.
    static func objectIDs(of objects: [NSManagedObject]) -> [NSManagedObjectID] {
        switch objects.count {
        case 0: return []
        case 1: return [objects[0].objectID]
        case 2: return [objects[0].objectID, objects[1].objectID]
        default:
            return [NSManagedObjectID](unsafeUninitializedCapacity: objects.count) { buffer, count in
                guard let base = buffer.baseAddress else { return }
                for (index, object) in objects.enumerated() { (base + index).initialize(to: object.objectID) }
                count = objects.count
            }
        }
    }
}
