// Edits of a to-many relationship that is not loaded.
//
// Setting `employee.company = company` adds the employee to `company.employees`, the
// inverse. Loading that to-many to add one object would register every stored employee of
// the company as a fault: an import that sets the to-one of each new object, saving and
// resetting in batches, registered every object saved so far again in each batch. So
// while an unordered to-many whose inverse is a to-one is unresolved, the context records
// the objects it adds and removes in the relationship value itself (UnresolvedRelationship's
// `added` and `removed`) and applies them when the relationship is read: reading it shows
// the stored destinations, less the removed, plus the added, as Core Data's does.
//
// Only that shape is recorded: its inverse to-one (always loaded on the other object,
// since the edit came from setting it) decides the link in every store (SPEC.md §3.2 R1,
// StoreRelationshipIntegrity.swift), so the list need not be written. Ordered and
// many-to-many relationships are loaded as before, and so is any to-many while the
// context is observed (undo and results controllers are told each change with its old
// value, which an edit in place would lose) or a derived attribute reads through it (its
// value is computed from the list the save request carries).
//
// A save writes the edits through the to-ones; once it settles, the value becomes a plain
// unresolved relationship again (ids recomputed where the store keeps lists), so a saved
// company no longer holds the employees added to it.
import Foundation

extension NSRelationshipDescription {
    /// Whether this is an unordered to-many whose inverse is a to-one: the to-one decides
    /// which objects the list holds, in every store.
    var isDecidedByInverseToOne: Bool {
        isToMany && !isOrdered && inverseRelationship?.isToMany == false
    }
}

extension UnresolvedRelationship {
    /// Whether the context added or removed destinations since the value was read.
    var hasEdits: Bool { !added.isEmpty || !removed.isEmpty }

    /// The same edits of `fresh`, a list read again (itself when it is not unresolved).
    func rebased(on fresh: Any?) -> Any? {
        guard let stored = UnresolvedRelationship.from(fresh) else {
            guard let set = fresh as? Set<NSManagedObject> else { return fresh }
            return Set(applyingEdits(to: Array(set)))
        }
        let rebased = UnresolvedRelationship(objectIDs: stored.objectIDs)
        rebased.added = added
        rebased.removed = removed
        return rebased
    }

    /// `objects` (the stored destinations) with the edits applied.
    func applyingEdits(to objects: [NSManagedObject]) -> [NSManagedObject] {
        guard hasEdits else { return objects }
        var result = removed.isEmpty ? objects : objects.filter { !removed.contains($0) }
        if !added.isEmpty {
            let present = Set(result.lazy.map(ObjectIdentifier.init))
            for object in added where !present.contains(ObjectIdentifier(object)) { result.append(object) }
        }
        return result
    }

    /// `ids` (the stored destinations) with the edits applied, IDs replaced by `map`.
    func applyingEdits(to ids: [NSManagedObjectID], mapping map: TemporaryIDMapping)
        -> [NSManagedObjectID]
    {
        var result = ids.map { map[$0] ?? $0 }
        guard hasEdits else { return result }
        if !removed.isEmpty {
            let gone = Set(removed.map { map[$0.objectID] ?? $0.objectID })
            result.removeAll { gone.contains($0) }
        }
        var present = Set(result)
        for object in added {
            let id = map[object.objectID] ?? object.objectID
            if present.insert(id).inserted { result.append(id) }
        }
        return result
    }
}

extension NSManagedObject {
    /// Adds (`adding`) or removes `object` in the to-many `slot` without loading it, when
    /// the slot is an unresolved to-many this file records edits for (see the file
    /// comment); false, changing nothing, otherwise.
    func editUnresolvedToMany(_ slot: Int, _ object: NSManagedObject, adding: Bool) -> Bool {
        fireFaultIfNeeded()
        // Read in its case: no `Any` made per edit (an import edits one list per new object).
        guard slot < values.count, case .unresolved(let current) = values.storage[slot],
            let context = managedObjectContext, !context.lifecycle.isObserved,
            slot < layout.decidedByInverseToOneBySlot.count, layout.decidedByInverseToOneBySlot[slot],
            let relationship = layout.relationshipBySlot[slot],
            context.persistentStoreCoordinator?.derivesValues(through: relationship) != true,
            // A list another store computes on demand is written as the context holds it.
            current.objectIDs != nil || objectID.persistentStore?.listsFollowInverseToOnes == true
        else { return false }
        // The value read from the store (shared with `committed`) stays as it was: the
        // edits go into a value of their own, edited in place from then on.
        var isCommittedValue = false
        if let committed, slot < committed.count, case .unresolved(let stored) = committed.storage[slot] {
            isCommittedValue = stored === current
        }
        let edited: UnresolvedRelationship
        if current.hasEdits, !isCommittedValue {
            edited = current
            // A value of this object's own, already stored and recorded (the slot dirty, the
            // object listed): the edit in place is the whole change. A delete of thousands
            // of employees removes each from its company's list this way.
            if isRecordedChange(of: slot) {
                edit(edited, object, adding: adding)
                return true
            }
        } else {
            edited = UnresolvedRelationship(objectIDs: current.objectIDs)
            edited.added = current.added
            edited.removed = current.removed
        }
        edit(edited, object, adding: adding)
        ObjectLifecycle.change(self, slot: slot, toTyped: .unresolved(edited))
        return true
    }

    private func edit(_ edited: UnresolvedRelationship, _ object: NSManagedObject, adding: Bool) {
        if adding {
            edited.removed.remove(object)
            edited.added.insert(object)
        } else {
            edited.added.remove(object)
            edited.removed.insert(object)
        }
    }

    /// Whether storing `slot` again would change nothing ObjectLifecycle.change records
    /// (for an unobserved context): the slot is dirty and the object listed as changed.
    private func isRecordedChange(of slot: Int) -> Bool {
        guard slot < dirtySlots.count, dirtySlots[slot] else { return false }
        return state.isInserted || state.isDeleted || (state.isListedUpdated && state.isNoticedUpdated)
    }

    /// After a save, before its values become the committed ones: the to-manys holding
    /// edits become plain unresolved values, the stored lists now holding the edits
    /// (recomputed here where the row keeps a list).
    func settlePendingToManyEdits() {
        for slot in layout.relationshipSlots where slot < values.count {
            guard case .unresolved(let unresolved) = values.storage[slot], unresolved.hasEdits else { continue }
            let settled = UnresolvedRelationship(
                objectIDs: unresolved.objectIDs.map { unresolved.applyingEdits(to: $0, mapping: [:]) })
            values.storage[slot] = .unresolved(settled)
        }
    }

    /// Loads every to-many of this object holding edits (before its values are copied
    /// into another context, which would not know the objects named).
    func resolvePendingToManyEdits() {
        for slot in layout.relationshipSlots where slot < values.count {
            if case .unresolved(let unresolved) = values.storage[slot], unresolved.hasEdits { _ = slotValue(slot) }
        }
    }
}
