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
            inserted: savedInserted.map(\.objectID), updated: savedUpdated.map(\.objectID),
            deleted: savedDeleted.map(\.objectID))
        // An empty kind (a save mostly inserts or updates, rarely all three) builds no set.
        func objects(_ saved: [NSManagedObject]) -> Set<NSManagedObject> { saved.isEmpty ? [] : Set(saved) }
        let info = NotificationUserInfo.didSave.filled([
            objects(savedInserted), objects(savedUpdated), objects(savedDeleted), changes,
        ])
        for object in savedInserted { object.didSave() }
        for object in savedUpdated { object.didSave() }
        resultsObserver?.contextDidSave()
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: context, userInfo: info)
        return changes
    }
}
