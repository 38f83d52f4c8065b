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
    ///
    /// `posted`: the sets of the save's ObjectsDidChange still holding every inserted or
    /// deleted object (``takePostedChangeSets()``), posted again rather than built anew.
    func finishSave(
        inserted savedInserted: [NSManagedObject], updated savedUpdated: [NSManagedObject],
        deleted savedDeleted: [NSManagedObject],
        posted: (inserted: Set<NSManagedObject>?, deleted: Set<NSManagedObject>?) = (nil, nil)
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
            inserted: savedInserted, updated: savedUpdated, deleted: savedDeleted, changes: changes,
            insertedSet: posted.inserted.flatMap { $0.count == savedInserted.count ? $0 : nil },
            deletedSet: posted.deleted.flatMap { $0.count == savedDeleted.count ? $0 : nil })
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

    /// Starts keeping the large sets the ObjectsDidChange notifications of a save post
    /// (``keepPostedChangeSets(inserted:deleted:)``) until ``takePostedChangeSets()``.
    func beginKeepingPostedChangeSets() {
        postedChangeSets = PostedChangeSets(isKeeping: true, membershipChanges: membershipChanges)
    }

    /// Called by ObjectsDidChange while a save keeps its sets, before the notices are
    /// cleared, with a set above ``NotificationBuffers/retainedSetCapacity`` (smaller ones
    /// are built again: the buffers reuse their storage): keeps `insertedSet`
    /// (`deletedSet`), built from the notice of inserted (deleted) objects, when that notice
    /// holds exactly the inserted (deleted) objects: as many, each of them on the list (an
    /// invalidated object is noticed as deleted without being on the list).
    func keepPostedChangeSets(inserted insertedSet: Set<NSManagedObject>?, deleted deletedSet: Set<NSManagedObject>?) {
        guard postedChangeSets.isKeeping else { return }
        // A list changed since the sets were kept: they may no longer hold it.
        if postedChangeSets.membershipChanges != membershipChanges {
            postedChangeSets = PostedChangeSets(isKeeping: true, membershipChanges: membershipChanges)
        }
        if let insertedSet, Self.holdsAll(insertedSet, notice: noticeInserted, list: inserted) {
            postedChangeSets.inserted = insertedSet
        }
        if let deletedSet, Self.holdsAll(deletedSet, notice: noticeDeleted, list: deleted) {
            postedChangeSets.deleted = deletedSet
        }
    }

    /// Whether `set` (built from `notice`) is large and `notice` holds exactly the objects of `list`.
    private static func holdsAll(_ set: Set<NSManagedObject>, notice: ObjectSet, list: ObjectSet) -> Bool {
        set.capacity > NotificationBuffers.retainedSetCapacity && set.count == notice.count
            && notice.count == list.count && notice.allSatisfy { list.contains($0) }
    }

    /// The kept sets (nil for a kind none is kept of, or all when the inserted or deleted
    /// objects changed since); stops keeping them.
    func takePostedChangeSets() -> (inserted: Set<NSManagedObject>?, deleted: Set<NSManagedObject>?) {
        defer { postedChangeSets = PostedChangeSets() }
        guard postedChangeSets.isKeeping, postedChangeSets.membershipChanges == membershipChanges else {
            return (nil, nil)
        }
        return (postedChangeSets.inserted, postedChangeSets.deleted)
    }
}

/// The sets a save's ObjectsDidChange posted that hold every inserted (deleted) object of
/// the context, as its DidSave lists them: a bulk save hashed each of its objects into a
/// `Set` twice, ~550 instructions an object each time.
struct PostedChangeSets {
    /// Whether a save keeps the sets now.
    var isKeeping = false
    /// ``ObjectLifecycle/membershipChanges`` when the sets were kept.
    var membershipChanges = 0
    var inserted: Set<NSManagedObject>?
    var deleted: Set<NSManagedObject>?
}
