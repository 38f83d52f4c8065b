// The built-in policies' merge of one stale object: which slots take the stored value,
// which keep the object's, and which the retried save writes.
import Foundation

extension NSMergePolicy {
    func merge(_ conflict: NSMergeConflict) {
        let object = conflict.sourceObject
        guard let persisted = conflict.persistedValues else {
            // Deleted in the store: the store's state wins by discarding the object's
            // changes (the context then forgets it), the object's by keeping them (the
            // retried save inserts it again).
            if mergeType == .mergeByPropertyStoreTrumpMergePolicyType || mergeType == .rollbackMergePolicyType {
                if let committed = object.committed { object.values = committed }
                object.dirtySlots = []
            }
            return
        }
        if object.deletedFlag {
            // A delete is the object's change as a whole: only rollback discards it.
            let restored = object.faultFlag ? nil : object.objectValues(from: persisted)
            if mergeType == .rollbackMergePolicyType {
                object.managedObjectContext?.restoreDeletedObject(
                    object, values: restored, version: Int64(conflict.newVersionNumber))
            } else {
                object.version = Int64(conflict.newVersionNumber)
            }
            return
        }
        // A fault (deleted without being read) has no values to merge, only a version.
        guard !object.faultFlag else {
            object.version = Int64(conflict.newVersionNumber)
            return
        }
        let layout = object.layout
        let stored = object.objectValues(from: persisted)
        let cachedStore = object.cachedStoreValues()
        var dirty = object.dirtySlots
        if dirty.count < layout.properties.count {
            dirty = Array(repeating: false, count: layout.properties.count)
        }
        for slot in layout.properties.indices where slot < stored.count && !layout.transientBySlot[slot] {
            let changedInStore =
                slot < persisted.count && slot < cachedStore.count
                && !isUnknown(persisted[slot]) && !isUnknown(cachedStore[slot]) && persisted[slot] != cachedStore[slot]
            switch mergeType {
            case .errorMergePolicyType:
                return
            case .mergeByPropertyStoreTrumpMergePolicyType:
                if !dirty[slot] || changedInStore {
                    object.values[slot] = stored[slot]
                    dirty[slot] = false
                }
            case .mergeByPropertyObjectTrumpMergePolicyType:
                if !dirty[slot] { object.values[slot] = stored[slot] }
            case .overwriteMergePolicyType:
                // The whole object is written, except to-many relationships never resolved here.
                if !(object.values[slot] is UnresolvedRelationship) { dirty[slot] = true }
            case .rollbackMergePolicyType:
                object.values[slot] = stored[slot]
                dirty[slot] = false
            }
        }
        object.committed = stored
        object.dirtySlots = dirty.contains(true) ? dirty : []
        object.version = Int64(conflict.newVersionNumber)
    }

    private func isUnknown(_ value: StoreValue) -> Bool {
        if case .unresolved = value { return true }
        return false
    }
}

extension NSManagedObject {
    /// The committed values in stored form, to tell which properties the store changed.
    fileprivate func cachedStoreValues() -> [StoreValue] {
        guard let committed else { return [] }
        let current = values
        values = committed
        defer { values = current }
        return (try? storeValues()) ?? []
    }
}
