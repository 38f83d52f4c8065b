// The context's NSManagedObjectContextObjectsDidChange notification: the changes recorded
// since the last one (ObjectLifecycle.swift records them), told to the observers and posted.
import Foundation

extension ObjectLifecycle {
    /// Posts `NSManagedObjectContextObjectsDidChange` for the changes since the last one
    /// (with `refreshed`, the objects a merge refreshed, and `merged`, the objects a merge
    /// brought in as inserted elsewhere), when there are any. `mergedObjectIDs` names what
    /// a merge inserted or updated elsewhere, registered here or not: results controllers
    /// look at those, though the notification does not list them.
    func postObjectsDidChange(
        refreshed: Set<NSManagedObject> = [], merged: Set<NSManagedObject> = [],
        mergedObjectIDs: [NSManagedObjectID] = []
    ) {
        if noticeInserted.isEmpty && noticeUpdated.isEmpty && noticeDeleted.isEmpty && refreshed.isEmpty
            && merged.isEmpty
        {
            // Nothing to notify; results controllers may still have changes this notification
            // never lists (an inserted object changed again, a rollback) or a merge to look at.
            if !mergedObjectIDs.isEmpty || resultsObserver?.awaitsChanges == true {
                resultsObserver?.objectsDidChange(ObjectChanges(mergedObjectIDs: mergedObjectIDs))
            }
            return
        }
        let insertedSet =
            !merged.isEmpty
            ? noticeInserted.asSet.union(merged)
            : noticeInserted.isEmpty ? [] : notificationBuffers.set(.inserted, noticeInserted)
        let deletedSet = noticeDeleted.isEmpty ? [] : notificationBuffers.set(.deleted, noticeDeleted)
        // A save's DidSave lists the same objects again (ObjectLifecycle+SaveNotifications.swift).
        if postedChangeSets.isKeeping,
            Swift.max(insertedSet.capacity, deletedSet.capacity) > NotificationBuffers.retainedSetCapacity
        {
            keepPostedChangeSets(inserted: merged.isEmpty ? insertedSet : nil, deleted: deletedSet)
        }
        post(
            ObjectChanges(
                inserted: insertedSet,
                updated: noticeUpdated.isEmpty ? [] : notificationBuffers.set(.updated, noticeUpdated),
                deleted: deletedSet, refreshed: refreshed),
            mergedObjectIDs: mergedObjectIDs)
        // The changes are gone with the call: the buffers' sets are held by nothing else.
        notificationBuffers.emptyObjectsDidChange()
    }

    private func post(_ changes: consuming ObjectChanges, mergedObjectIDs: [NSManagedObjectID]) {
        var changes = changes
        clearNotices()
        observer?.objectsDidChange(changes)
        changes.mergedObjectIDs = mergedObjectIDs
        resultsObserver?.objectsDidChange(changes)
        notificationBuffers.fillObjectsDidChange(changes)
        NotificationCenter.default.post(
            name: .NSManagedObjectContextObjectsDidChange, object: context,
            userInfo: notificationBuffers.objectsDidChangeInfo)
    }
}
