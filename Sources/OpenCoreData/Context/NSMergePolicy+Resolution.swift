// The built-in policies' merge of one stale object: which slots take the stored value,
// which keep the object's, and which the retried save writes.
import Foundation

extension NSMergePolicy {
    func merge(_ conflict: NSMergeConflict) {
        let object = conflict.sourceObject
        guard let persisted = conflict.persistedValues else {
            // Deleted in the store: the store's state wins by deleting the object here
            // too, the object's by inserting it again (as Core Data's force insertion).
            // (A conflict made with the public initializer carries no stored row to merge.)
            guard conflict.persistedSnapshot == nil, conflict.newVersionNumber == 0, !object.isDeleted,
                let context = object.managedObjectContext
            else { return }
            switch mergeType {
            case .mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType: context.insertAgain(object)
            default:
                // The store's state wins: deleted here too, but its delete rules already ran
                // in the deleting save, on the stored relationships. Run again over what this
                // context last read, they would cascade to or unlink objects a stale list
                // still names that the store has given to others since (the soak lost items
                // so): the object lets go of its destinations first.
                object.dropRelationshipsWithoutChanges()
                context.delete(object)
            }
            return
        }
        if object.isDeleted {
            // A delete is the object's change as a whole: only rollback discards it.
            if mergeType == .rollbackMergePolicyType {
                object.managedObjectContext?.restoreDeletedObject(
                    object, values: object.isFault ? nil : object.objectValues(from: persisted),
                    version: Int64(conflict.newVersionNumber))
            } else {
                applyDeleteRules(of: object, toDestinationsAddedIn: persisted)
                object.version = Int64(conflict.newVersionNumber)
            }
            return
        }
        // A fault (deleted without being read) has no values to merge, only a version.
        guard !object.isFault else {
            object.version = Int64(conflict.newVersionNumber)
            return
        }
        let layout = object.layout
        let stored = object.objectValues(from: persisted)
        let cachedStore = object.cachedStoreValues()
        var values = object.values
        var dirty = object.dirtySlots
        if dirty.count < layout.properties.count {
            dirty = Array(repeating: false, count: layout.properties.count)
        }
        for slot in layout.properties.indices where slot < stored.count && !layout.transientBySlot[slot] {
            if mergeType != .rollbackMergePolicyType, mergeType != .errorMergePolicyType,
                layout.relationshipBySlot[slot]?.isToMany == true
            {
                // A to-many merges as a difference under every policy that keeps changes.
                let snapshot: Any? = object.committed.flatMap { slot < $0.count ? $0[slot] : nil }
                if dirty[slot],
                    let merged = mergedToMany(
                        object, slot: slot, committed: snapshot, stored: stored[slot], policy: mergeType)
                {
                    values[slot] = merged.differs ? merged.value : stored[slot]
                    dirty[slot] = merged.differs
                } else {
                    values[slot] = stored[slot]
                    dirty[slot] = false
                }
                continue
            }
            let changedInStore =
                slot < persisted.count && slot < cachedStore.count
                && !isUnknown(persisted[slot]) && !isUnknown(cachedStore[slot]) && persisted[slot] != cachedStore[slot]
            switch mergeType {
            case .errorMergePolicyType:
                return
            case .mergeByPropertyStoreTrumpMergePolicyType:
                if !dirty[slot] || changedInStore {
                    values[slot] = stored[slot]
                    dirty[slot] = false
                }
            case .mergeByPropertyObjectTrumpMergePolicyType:
                if !dirty[slot] { values[slot] = stored[slot] }
            case .overwriteMergePolicyType:
                // The whole object is written, except to-many relationships never resolved here.
                if UnresolvedRelationship.from(values[slot]) == nil { dirty[slot] = true }
            case .rollbackMergePolicyType:
                values[slot] = stored[slot]
                dirty[slot] = false
            }
        }
        ObjectLifecycle.resolveConflict(
            of: object, values: values, committed: stored, dirtySlots: dirty.contains(true) ? dirty : [],
            version: Int64(conflict.newVersionNumber))
    }

    /// Runs `object`'s delete rules on the destinations another save gave it since the
    /// context read it (the rules ran on the others when it was deleted here, and those the
    /// context took from it before are not its own any more).
    private func applyDeleteRules(of object: NSManagedObject, toDestinationsAddedIn persisted: [StoreValue]) {
        guard let context = object.managedObjectContext else { return }
        let layout = object.layout
        // A deleted object a merge turned back into a fault holds no values: the rules ran on
        // what it held when deleted, which is not known now, so every destination the store
        // lists gets them (a second run over one is a no-op: it is deleted or detached).
        let holdsValues = !object.isFault && object.values.storage.count == layout.properties.count
        for slot in layout.relationshipSlots where slot < persisted.count {
            guard let relationship = layout.relationshipBySlot[slot], let inverse = relationship.inverseRelationship,
                let inverseSlot = layout.inverseSlotBySlot[slot],
                relationship.deleteRule == .nullifyDeleteRule || relationship.deleteRule == .cascadeDeleteRule
            else { continue }
            var seen: Set<NSManagedObjectID> = []
            if holdsValues {
                guard let known = try? object.storeValue(slot: slot, mapping: [:]), !isUnknown(known) else { continue }
                seen = Set(Self.objectIDs(known))
                // What the context last read counts as known too: a destination it moved to
                // another object before the delete is still listed in the store, and is not
                // one another save added (cascading to it lost an item the soak had moved).
                if let committed = object.committed, slot < committed.count,
                    let read = try? object.storeValue(slot: slot, of: committed, mapping: [:])
                {
                    seen.formUnion(Self.objectIDs(read))
                }
            }
            for id in Self.objectIDs(persisted[slot]) where !seen.contains(id) {
                let destination = context.object(with: id)
                if relationship.deleteRule == .cascadeDeleteRule {
                    context.delete(destination)
                } else {
                    destination.detach(object, inverseSlot: inverseSlot, inverseIsToMany: inverse.isToMany)
                }
            }
        }
    }

    private static func objectIDs(_ value: StoreValue) -> [NSManagedObjectID] {
        switch value {
        case .objectID(let id): [id]
        case .objectIDs(let ids): ids
        default: []
        }
    }

    private func isUnknown(_ value: StoreValue) -> Bool {
        if case .unresolved = value { return true }
        return false
    }
}

extension NSManagedObject {
    /// Empties the loaded object's relationships as they were never read, recording no
    /// change: its row is gone, and nothing it named may be touched on its behalf.
    fileprivate func dropRelationshipsWithoutChanges() {
        guard !isFault else { return }
        let defaults = layout.defaultValues
        var values = self.values
        for slot in layout.relationshipSlots where slot < values.count && slot < defaults.count {
            values[slot] = defaults[slot]
        }
        self.values = values
    }

    /// The committed values in stored form, to tell which properties the store changed.
    fileprivate func cachedStoreValues() -> [StoreValue] {
        guard let committed else { return [] }
        return (try? committed.indices.map { try storeValue(slot: $0, of: committed, mapping: [:]) }) ?? []
    }
}
