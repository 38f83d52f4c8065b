// Saving: validate every changed object, then write the changes to the stores as
// one save request of rows — or, for a child context, into the parent's objects.
import Foundation

extension NSManagedObjectContext {
    /// Saves the context's changes: to its parent context when it has one, else to the
    /// coordinator's stores, atomically.
    ///
    /// Delete rules run first, then `willSave()` of each changed object, then
    /// validation of every inserted, updated and deleted object.
    ///
    /// - Throws: the validation error of one object; `NSValidationMultipleErrorsError`
    ///   (1560) with every error under `NSDetailedErrorsKey` when there are several;
    ///   a store error (for example `NSManagedObjectMergeError`, 133020) otherwise.
    ///   Nothing is saved when it throws.
    public func save() throws {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.save()")
        guard generationLock.withLock({ queryGeneration }) != nil else { return try saveChanges() }
        // A pinned context checks and writes against the newest data, and reads it after.
        try withoutQueryGeneration { try saveChanges() }
        advanceQueryGeneration()
    }

    private func saveChanges() throws {
        adoptDeliveredPermanentIDs()
        // Its ObjectsDidChange sets of all the inserted or deleted objects serve its DidSave too.
        lifecycle.beginKeepingPostedChangeSets()
        defer { lifecycle.postedChangeSets = PostedChangeSets() }
        processPendingChanges()
        guard hasChanges else { return }
        let started = OpenCoreDataDebugLog.start()
        lifecycle.postWillSave()
        for object in inserted { object.willSave() }
        for object in updated where object.hasDirtySlots { object.willSave() }
        for object in deleted { object.willSave() }
        processPendingChanges()
        try validatePendingChanges()

        // In creation order (temporary keys count up), so stores assign permanent keys
        // deterministically: reproducible files, and a fixed winner when two inserts of
        // one save clash on a uniqueness constraint. The set itself iterates by hash.
        var savedInserted = inserted.inCreationOrder()
        var savedUpdated = updated.filter { $0.hasDirtySlots }
        var savedDeleted = Array(deleted)
        // Objects whose row an upsert left other than they hold (see writeChangesToStores).
        var stale: [NSManagedObject] = []
        var relinked: [NSManagedObject] = []
        // Taken before the lists are emptied, while they still tell whether the sets hold them.
        var posted: (inserted: Set<NSManagedObject>?, deleted: Set<NSManagedObject>?) = (nil, nil)
        if let parent {
            try pushChanges(into: parent, inserted: savedInserted, updated: savedUpdated, deleted: savedDeleted)
            posted = lifecycle.takePostedChangeSets()
            lifecycle.settleSave(inserted: savedInserted, updated: savedUpdated, deleted: savedDeleted, versions: [:])
        } else {
            let written = try writeChangesResolvingConflicts(
                inserted: &savedInserted, updated: &savedUpdated, deleted: &savedDeleted)
            let versions = written.versions
            stale = written.stale
            relinked = written.relinked
            // A delete the merge policy rolled back leaves the object in the context.
            savedDeleted.removeAll { !$0.isDeleted }
            // A conflict resolved by discarding an object's changes leaves nothing to report for it.
            savedUpdated.removeAll { !$0.hasDirtySlots }
            posted = lifecycle.takePostedChangeSets()
            lifecycle.settleSave(
                inserted: savedInserted, updated: savedUpdated, deleted: savedDeleted, versions: versions)
            adoptDerivedVersions(versions, saved: savedUpdated)
        }
        let changes = lifecycle.finishSave(
            inserted: savedInserted, updated: savedUpdated, deleted: savedDeleted, posted: posted)
        if OpenCoreDataDebugLog.isOn(1) {
            logSave(inserted: savedInserted, updated: savedUpdated, deleted: savedDeleted, since: started)
        }
        // Before the merges: they name the rows by their permanent IDs.
        passPermanentIDsToChildren()
        notifyAutomaticMerging(changes)
        // An undo manager may bring a deleted object back with its values (undoing the
        // delete); its stack holds the objects until the actions go, so no cycle is lost.
        if undoManager == nil { lifecycle.releaseSavedDeletes(savedDeleted) }
        refreshAfterUpserts(stale)
        // Read as the save left them (NSManagedObjectContext+Relinked.swift); all are clean now.
        for object in relinked where registry[object.objectID] === object && !object.isDeleted && !object.isFault {
            refresh(object, mergeChanges: true)
        }
    }

    /// Turns the objects an upsert left stale into faults (`keepingChanges`: those without
    /// unsaved changes; the others read the rest of their rows again), and every object
    /// whose loaded relationships still hold the one registered for the row before (it is
    /// no longer what the row's ID finds, so a change made through it, say the nullify of
    /// a cascading delete, would write the row back).
    func refreshAfterUpserts(_ stale: [NSManagedObject], keepingChanges: Bool = false) {
        guard !stale.isEmpty else { return }
        let superseded = Set(stale.filter { registry[$0.objectID] !== $0 }.map(ObjectIdentifier.init))
        for object in stale where object.isRegistered(in: self) && !object.isDeleted {
            refresh(object, mergeChanges: keepingChanges)
        }
        guard !superseded.isEmpty else { return }
        func holds(_ value: Any?) -> Bool {
            switch value {
            case let object as NSManagedObject: superseded.contains(ObjectIdentifier(object))
            case let set as Set<NSManagedObject>: set.contains { superseded.contains(ObjectIdentifier($0)) }
            case let array as [NSManagedObject]: array.contains { superseded.contains(ObjectIdentifier($0)) }
            default: false
            }
        }
        for object in Array(registry.values) where !object.isFault && !object.isDeleted {
            if object.layout.relationshipSlots.contains(where: { $0 < object.values.count && holds(object.values[$0]) })
            {
                refresh(object, mergeChanges: true)
            }
        }
    }

    func validatePendingChanges() throws {
        var errors: [Error] = []
        func collect(_ body: () throws -> Void) {
            do { try body() } catch {
                let nsError = error as NSError
                if nsError.domain == NSCocoaErrorDomain, nsError.code == NSValidationMultipleErrorsError,
                    let details = nsError.userInfo[NSDetailedErrorsKey] as? [Error]
                {
                    errors.append(contentsOf: details)
                } else {
                    errors.append(error)
                }
            }
        }
        for object in inserted { collect { try object.validateForInsert() } }
        for object in updated where object.hasDirtySlots { collect { try object.validateForUpdate() } }
        for object in deleted { collect { try object.validateForDelete() } }
        if let error = CoreDataError.combining(errors) { throw error }
    }

    /// Builds one save request of rows and hands it to the coordinator; returns the new row
    /// versions and the objects an upsert left stale: an inserted object that took an
    /// existing row holds only its own values while the row keeps the stored ones the policy
    /// chose and its relationships (an empty to-many of the new object keeps the stored
    /// list), and an object already registered for that row was read before the upsert.
    /// Both become faults once the save is done, so a later change (a cascading delete
    /// above all) starts from the row as stored.
    func writeChangesToStores(
        inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject],
        acceptedUpserts: Set<ObjectIdentifier> = []
    ) throws -> (versions: [NSManagedObjectID: Int64], stale: [NSManagedObject]) {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        let newObjects = inserted.filter { $0.objectID.isTemporaryID }
        var permanentIDs: [NSManagedObjectID] = []
        if !newObjects.isEmpty {
            permanentIDs = try coordinator.obtainPermanentIDs(for: newObjects.map(\.entity))
            guard permanentIDs.count == newObjects.count else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "the store returned the wrong number of object IDs")
            }
        }
        // Filled when a relationship first names a new object (TemporaryIDMapping.swift).
        let mapping = TemporaryIDMapping(objects: newObjects, permanentIDs: permanentIDs)
        var request = StoreSaveRequest()
        request.transactionAuthor = transactionAuthor
        request.contextName = name
        request.mergePolicyType = (mergePolicy as? NSMergePolicy)?.mergeType ?? .errorMergePolicyType
        // Stale rows always fail in the store; the context's policy resolves them and retries.
        request.checksVersions = true
        request.insertedRows.reserveCapacity(inserted.count)
        for (index, object) in newObjects.enumerated() {
            request.insertedRows.append(
                StoreRow(objectID: permanentIDs[index], version: 0, values: try object.storeValues(mapping: mapping)))
        }
        // Objects inserted again under their permanent IDs (a merge policy kept them): mostly none.
        for object in newObjects.count == inserted.count ? [] : inserted where !object.objectID.isTemporaryID {
            request.insertedRows.append(
                StoreRow(objectID: object.objectID, version: 0, values: try object.storeValues(mapping: mapping)))
        }
        try addChanges(updated: updated, deleted: deleted, to: &request, mapping: mapping)
        try settleTemporaryReferences(
            in: &request, newObjects: newObjects, permanentIDs: permanentIDs, mapping: mapping)
        let result = try saveResolvingConflicts(
            request, updated: updated, deleted: deleted, mapping: mapping,
            inserted: NewObjectsByID(objects: newObjects, permanentIDs: permanentIDs), acceptedUpserts: acceptedUpserts)
        // No reserve: each object leaves its temporary entry as it gains its permanent one.
        var stale: [NSManagedObject] = []
        let forChildren = tracksPermanentIDsForChildren()
        // Many new objects and no upsert (whose stale objects depend on the order): re-keyed at once.
        if result.replacedObjectIDs.isEmpty, newObjects.count >= Self.registryRebuildMinimum,
            newObjects.count * 4 >= registry.count
        {
            reassign(newObjects, to: permanentIDs, forChildren: forChildren)
            return (result.versions, stale)
        }
        for (object, id) in zip(newObjects, permanentIDs) {
            guard let existing = result.replacedObjectIDs[id] else {
                reassign(object, to: id, forChildren: forChildren)
                continue
            }
            if let registered = registry[existing], registered !== object { stale.append(registered) }
            reassign(object, to: existing, forChildren: forChildren, upserted: true)
            stale.append(object)
        }
        return (result.versions, stale)
    }

    /// New objects of a save from which the registry is rebuilt rather than re-keyed one by
    /// one (when they are at least a quarter of it).
    static let registryRebuildMinimum = 64

    /// Applies this child's changes to `parent`'s objects, on the parent's queue.
    private func pushChanges(
        into parent: NSManagedObjectContext, inserted: [NSManagedObject], updated: [NSManagedObject],
        deleted: [NSManagedObject]
    ) throws {
        // Edits of unloaded to-manys name this context's objects: applied here first.
        for object in inserted + updated + deleted { object.resolvePendingToManyEdits() }
        let work = UncheckedBox((inserted, updated, deleted))
        parent.performAndWait {
            let (inserted, updated, deleted) = work.value
            for object in inserted where parent.registry[object.objectID] == nil {
                let copy = type(of: object).init(entity: object.entity, insertInto: nil)
                copy.setObjectID(object.objectID)
                parent.lifecycle.insert(copy, awakes: false)
            }
            for object in inserted + updated {
                let target = parent.object(forChild: object.objectID)
                let slots: [Int] =
                    object.isInserted
                    ? Array(object.values.indices)
                    : object.dirtySlots.indices.filter { object.dirtySlots[$0] }
                for slot in slots {
                    target.storeSlot(slot, parent.translate(object.values[slot], slot: slot, of: object))
                }
            }
            for object in deleted {
                let target = parent.object(forChild: object.objectID)
                // The parent runs the delete rules again, over its own lists: they must be
                // the ones this context deleted the object with. A destination moved away
                // before the delete (an item given another owner, then its old owner
                // deleted) would otherwise still be on the parent's list, and a cascade
                // would delete it (the soak's chain losing an item).
                for slot in object.layout.relationshipSlots
                where slot < object.dirtySlots.count && object.dirtySlots[slot] {
                    target.storeSlot(slot, parent.translate(object.values[slot], slot: slot, of: object))
                }
                parent.delete(target)
            }
            parent.processPendingChanges()
        }
    }

    /// A child's slot value as this context's value: objects replaced by this context's ones.
    private func translate(_ value: Any?, slot: Int, of object: NSManagedObject) -> Any? {
        guard object.layout.relationshipBySlot[slot] != nil else { return value }
        // Collections first: casting a set to a class bridges it to an NSSet on Linux.
        switch value {
        case let set as Set<NSManagedObject>:
            return Set(set.map { self.object(forChild: $0.objectID) })
        case let array as [NSManagedObject]:
            return array.map { self.object(forChild: $0.objectID) }
        case let destination as NSManagedObject:
            return self.object(forChild: destination.objectID)
        default:
            return value
        }
    }

    /// This context's object for an ID a child holds: an object this context inserted and
    /// saved since is found under its permanent ID, not made up anew as a fault of the
    /// temporary one (whose key names no row: a list naming it wrote a dangling join entry,
    /// the soak's chain losing an item).
    private func object(forChild objectID: NSManagedObjectID) -> NSManagedObject {
        guard objectID.isTemporaryID, registry[objectID] == nil, let permanent = permanentIDsForChildren[objectID]
        else { return object(with: objectID) }
        return object(with: permanent)
    }

    private func logSave(
        inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject], since started: UInt64
    ) {
        var ids = ""
        if OpenCoreDataDebugLog.isOn(3) {
            ids =
                ": "
                + (inserted + updated + deleted).map { $0.objectID.uriRepresentation().absoluteString }
                .joined(separator: " ")
        }
        OpenCoreDataDebugLog.log(
            1,
            "save \(name ?? "a context")\(parent == nil ? "" : " into its parent"): \(inserted.count) inserted, "
                + "\(updated.count) updated, \(deleted.count) deleted in "
                + OpenCoreDataDebugLog.elapsed(since: started)
                + ids)
    }
}

/// The object IDs a save changed, as carried in its DidSave notification.
struct SavedChanges: @unchecked Sendable {
    static let userInfoKey = "OpenCoreDataSavedObjectIDs"
    let inserted: [NSManagedObjectID]
    let updated: [NSManagedObjectID]
    let deleted: [NSManagedObjectID]
}

extension ObjectSet {
    /// The objects with temporary IDs first, each group by ascending key: creation order
    /// for new objects. Sorted on (rank, key, position) triples read once per object, not
    /// through `objectID` in every comparison (the sort sits on every inserted object).
    func inCreationOrder() -> [NSManagedObject] {
        let objects = Array(self)
        // One object (a save after each insert) is in order: no keys read or sorted.
        if objects.count < 2 { return objects }
        // Objects mostly join in creation order: a walk that finds them so sorts nothing.
        var previous = (rank: Int8.min, key: Int64.min)
        var ascending = true
        for object in objects {
            let id = object.objectID
            let current = (rank: Int8(id.isTemporaryID ? 0 : 1), key: id.key)
            if current < previous {
                ascending = false
                break
            }
            previous = current
        }
        if ascending { return objects }
        var order: [(rank: Int8, key: Int64, index: Int32)] = []
        order.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            let id = object.objectID
            order.append((id.isTemporaryID ? 0 : 1, id.key, Int32(truncatingIfNeeded: index)))
        }
        order.sort { ($0.rank, $0.key, $0.index) < ($1.rank, $1.key, $1.index) }
        return order.map { objects[Int($0.index)] }
    }
}

extension NSManagedObjectContext {
    /// Objects the save did not change whose rows it updated anyway (derived values the
    /// store recomputed): loaded ones take the new row version, so their next save is no
    /// conflict; faults holding a fetched row load afresh.
    fileprivate func adoptDerivedVersions(_ versions: [NSManagedObjectID: Int64], saved: [NSManagedObject]) {
        guard versions.count > saved.count else { return }
        let savedIDs = Set(saved.map(\.objectID))
        for (id, version) in versions where !savedIDs.contains(id) {
            guard let object = registry[id], !object.hasChanges else { continue }
            if object.isFault {
                object.pendingFault = nil
            } else {
                object.version = version
            }
        }
    }
}
