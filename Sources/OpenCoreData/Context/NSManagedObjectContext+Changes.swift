// Change tracking: insert, delete (with delete rules), rollback, reset, refresh.
import Foundation

extension NSManagedObjectContext {
    /// Inserts `object` into the context; it is saved at the next save.
    ///
    /// - Precondition: `object` is not registered in another context.
    public func insert(_ object: NSManagedObject) {
        if object.managedObjectContext === self {
            if object.deletedFlag { undelete(object) }
            return
        }
        precondition(
            object.managedObjectContext == nil,
            "OpenCoreData: insert(_:): the object is registered in another context")
        if object.faultFlag && object.values.isEmpty {
            object.values = object.layout.defaultValues
            object.faultFlag = false
        }
        object.managedObjectContext = self
        object.insertedFlag = true
        registry[object.objectID] = object
        inserted.insert(object)
        noticeInserted.insert(object)
        object.awakeFromInsert()
    }

    private func undelete(_ object: NSManagedObject) {
        object.deletedFlag = false
        deleted.remove(object)
        pendingDeletes.removeAll { $0 === object }
        if object.insertedFlag { inserted.insert(object) }
    }

    /// Marks `object` for deletion. Its delete rules run when pending changes are
    /// processed (at the latest at save); the deletion is stored at save.
    ///
    /// - Precondition: `object` is registered in this context (or in none, then it is ignored).
    public func delete(_ object: NSManagedObject) {
        guard let owner = object.managedObjectContext else { return }
        precondition(owner === self, "OpenCoreData: delete(_:): the object is registered in another context")
        if object.deletedFlag { return }
        object.fireFaultIfNeeded()
        object.deletedFlag = true
        if object.insertedFlag {
            inserted.remove(object)
        } else {
            deleted.insert(object)
            noticeDeleted.insert(object)
        }
        if object.updatedFlag {
            updated.remove(object)
            object.updatedFlag = false
        }
        pendingDeletes.append(object)
    }

    /// Records that `object` changed (called by the object).
    func objectDidChange(_ object: NSManagedObject) {
        if object.insertedFlag || object.deletedFlag { return }
        if !object.updatedFlag {
            object.updatedFlag = true
            updated.insert(object)
        }
        if !object.pendingUpdateNotice {
            object.pendingUpdateNotice = true
            noticeUpdated.insert(object)
        }
    }

    /// Applies delete rules of deleted objects and posts
    /// `NSManagedObjectContextObjectsDidChange` for the changes since the last call.
    public func processPendingChanges() {
        var index = 0
        var vanished: [NSManagedObject] = []
        while index < pendingDeletes.count {
            let object = pendingDeletes[index]
            index += 1
            object.prepareForDeletion()
            applyDeleteRules(of: object)
            if object.insertedFlag { vanished.append(object) }
        }
        pendingDeletes.removeAll()
        for object in vanished {
            // Inserted, then deleted: it never reaches a store and leaves the context.
            registry[object.objectID] = nil
            noticeInserted.remove(object)
            noticeUpdated.remove(object)
            object.insertedFlag = false
            object.managedObjectContext = nil
        }
        postObjectsDidChange()
    }

    private func applyDeleteRules(of object: NSManagedObject) {
        let layout = object.layout
        for slot in layout.relationshipSlots {
            guard let relationship = layout.relationshipBySlot[slot] else { continue }
            switch relationship.deleteRule {
            case .nullifyDeleteRule:
                guard let inverseSlot = layout.inverseSlotBySlot[slot], let inverse = relationship.inverseRelationship
                else { continue }
                for destination in object.destinations(slot) {
                    destination.detach(object, inverseSlot: inverseSlot, inverseIsToMany: inverse.isToMany)
                }
            case .cascadeDeleteRule:
                for destination in object.destinations(slot) where !destination.deletedFlag {
                    delete(destination)
                }
            case .denyDeleteRule, .noActionDeleteRule:
                // Deny is checked by validateForDelete at save; no action leaves destinations alone.
                break
            }
        }
    }

    func postObjectsDidChange(refreshed: Set<NSManagedObject> = []) {
        if noticeInserted.isEmpty && noticeUpdated.isEmpty && noticeDeleted.isEmpty && refreshed.isEmpty { return }
        for object in noticeUpdated { object.pendingUpdateNotice = false }
        var info: [AnyHashable: Any] = [:]
        if !noticeInserted.isEmpty { info[NSInsertedObjectsKey] = noticeInserted.asSet }
        if !noticeUpdated.isEmpty { info[NSUpdatedObjectsKey] = noticeUpdated.asSet }
        if !noticeDeleted.isEmpty { info[NSDeletedObjectsKey] = noticeDeleted.asSet }
        if !refreshed.isEmpty { info[NSRefreshedObjectsKey] = refreshed }
        noticeInserted = []
        noticeUpdated = []
        noticeDeleted = []
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info)
    }

    /// Discards every unsaved change: inserted objects leave the context, updated and
    /// deleted ones return to their last saved values.
    public func rollback() {
        pendingDeletes.removeAll()
        for object in inserted {
            registry[object.objectID] = nil
            object.insertedFlag = false
            object.managedObjectContext = nil
        }
        for object in Array(updated) + Array(deleted) {
            if let committed = object.committed { object.values = committed }
            object.dirtySlots = []
            object.deletedFlag = false
            object.updatedFlag = false
            object.pendingUpdateNotice = false
            object.awake(fromSnapshotEvents: .rollback)
        }
        inserted = []
        updated = []
        deleted = []
        noticeInserted = []
        noticeUpdated = []
        noticeDeleted = []
    }

    /// Forgets every registered object and unsaved change; objects you still hold become
    /// detached from the context.
    public func reset() {
        for object in registry.values {
            object.managedObjectContext = nil
        }
        registry = ObjectRegistry()
        inserted = []
        updated = []
        deleted = []
        pendingDeletes = []
        noticeInserted = []
        noticeUpdated = []
        noticeDeleted = []
    }

    /// Reloads `object`: with `flag`, stored values replace those you have not changed;
    /// without, unsaved changes are discarded and the object becomes a fault.
    public func refresh(_ object: NSManagedObject, mergeChanges flag: Bool) {
        guard object.managedObjectContext === self, !object.insertedFlag else { return }
        if !flag || !object.hasDirtySlots {
            object.willTurnIntoFault()
            object.pendingFault = nil
            object.values = []
            object.committed = nil
            object.dirtySlots = []
            object.faultFlag = true
            if object.updatedFlag {
                updated.remove(object)
                object.updatedFlag = false
            }
            object.didTurnIntoFault()
            return
        }
        guard let snapshot = try? snapshot(for: object.objectID) else { return }
        let fresh = object.objectValues(from: snapshot.values)
        for slot in fresh.indices where slot < object.values.count {
            let changed = slot < object.dirtySlots.count && object.dirtySlots[slot]
            if !changed { object.values[slot] = fresh[slot] }
        }
        object.committed = fresh
        object.version = snapshot.version
        object.awake(fromSnapshotEvents: .refresh)
    }

    /// Refreshes every registered object, keeping unsaved changes.
    public func refreshAllObjects() {
        for object in Array(registry.values) { refresh(object, mergeChanges: true) }
    }
}
