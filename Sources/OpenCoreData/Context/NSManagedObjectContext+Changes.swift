// Change tracking: insert, delete (with delete rules), rollback, reset, refresh.
import Foundation

extension NSManagedObjectContext {
    /// Inserts `object` into the context; it is saved at the next save.
    ///
    /// - Precondition: `object` is not registered in another context.
    public func insert(_ object: NSManagedObject) {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.insert(_:)")
        if object.isRegistered(in: self) {
            if object.isDeleted { lifecycle.undelete(object) }
            return
        }
        precondition(
            object.managedObjectContext == nil,
            "OpenCoreData: insert(_:): the object is registered in another context")
        lifecycle.insert(object, awakes: true)
    }

    /// Marks `object` for deletion. Its delete rules run when pending changes are
    /// processed (at the latest at save); the deletion is stored at save.
    ///
    /// - Precondition: `object` is registered in this context (or in none, then it is ignored).
    public func delete(_ object: NSManagedObject) {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.delete(_:)")
        // The handles compared (no load of the weak context, no retain of it); the context
        // read only for an object not registered here.
        guard object.isRegistered(in: self) else {
            precondition(
                object.managedObjectContext == nil,
                "OpenCoreData: delete(_:): the object is registered in another context")
            return
        }
        if object.isDeleted { return }
        object.fireFaultIfNeeded()
        // A fault whose row another save deleted loads as deleted (inaccessible): nothing more to do.
        if object.isDeleted { return }
        lifecycle.delete(object)
        // An object an upsert superseded shares its row with the one registered for it
        // now: the row goes, and the registered object with it (left, it would write the
        // row back, say when a cascaded destination lets go of it).
        if let registered = registry[object.objectID], registered !== object { delete(registered) }
    }

    /// Applies delete rules of deleted objects, posts
    /// `NSManagedObjectContextObjectsDidChange` for the changes since the last call, and
    /// registers those changes with the ``undoManager`` as one undo action.
    public func processPendingChanges() {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.processPendingChanges()")
        lifecycle.processPendingDeletes { object in
            object.prepareForDeletion()
            applyDeleteRules(of: object)
        }
        lifecycle.postObjectsDidChange()
        undoRecorder?.registerPendingSteps()
    }

    private func applyDeleteRules(of object: NSManagedObject) {
        let layout = object.layout
        for slot in layout.relationshipSlots {
            guard let relationship = layout.relationshipBySlot[slot] else { continue }
            switch relationship.deleteRule {
            case .nullifyDeleteRule:
                guard let inverseSlot = layout.inverseSlotBySlot[slot], let inverse = relationship.inverseRelationship
                else { continue }
                let inverseIsToMany = inverse.isToMany
                forEachRuleDestination(of: object, slot: slot, relationship) { destination in
                    destination.detach(object, inverseSlot: inverseSlot, inverseIsToMany: inverseIsToMany)
                }
            case .cascadeDeleteRule:
                forEachRuleDestination(of: object, slot: slot, relationship) { destination in
                    if !destination.isDeleted { delete(destination) }
                }
            case .denyDeleteRule, .noActionDeleteRule:
                // Deny is checked by validateForDelete at save; no action leaves destinations alone.
                break
            }
        }
    }

    /// Calls `body` with each destination of `object`'s relationship `slot` for its delete
    /// rule; the destinations are listed before the first call. A to-one still holding the
    /// ID read from the store gives its object by one registry probe (registered as a fault
    /// where need be, as resolving it would), and no list: the slot is not resolved, which
    /// would copy the deleted object's values to store one reference it never reads again.
    private func forEachRuleDestination(
        of object: NSManagedObject, slot: Int, _ relationship: NSRelationshipDescription,
        _ body: (NSManagedObject) -> Void
    ) {
        if !relationship.isToMany {
            object.fireFaultIfNeeded(reading: slot)
            if slot < object.values.count, case .unresolved(let unresolved) = object.values.storage[slot],
                !unresolved.hasEdits, let ids = unresolved.objectIDs, ids.count <= 1
            {
                if let id = ids.first { body(self.object(with: id)) }
                return
            }
        }
        for destination in object.destinations(slot) { body(destination) }
    }

    /// Discards every unsaved change: inserted objects leave the context, updated and
    /// deleted ones return to their last saved values. Empties the ``undoManager``.
    public func rollback() {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.rollback()")
        lifecycle.rollback()
        clearUndo()
    }

    /// Forgets every registered object and unsaved change; objects you still hold become
    /// detached from the context. Empties the ``undoManager``.
    public func reset() {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.reset()")
        advanceQueryGeneration()
        lifecycle.forgetAll()
        clearUndo()
    }

    /// Reloads `object`: with `flag`, stored values replace those you have not changed;
    /// without, unsaved changes are discarded and the object becomes a fault.
    public func refresh(_ object: NSManagedObject, mergeChanges flag: Bool) {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.refresh(_:mergeChanges:)")
        guard object.isRegistered(in: self), !object.isInserted else { return }
        if !flag || !object.hasDirtySlots {
            lifecycle.turnIntoFault(object)
            return
        }
        guard let snapshot = try? snapshot(for: object.objectID) else { return }
        lifecycle.refresh(object, fresh: object.objectValues(from: snapshot.values), version: snapshot.version)
    }

    /// Refreshes every registered object, keeping unsaved changes.
    public func refreshAllObjects() {
        for object in Array(registry.values) { refresh(object, mergeChanges: true) }
    }
}
