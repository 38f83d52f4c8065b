// The object lifecycle: the one place every state change of a context's objects passes.
//
// Every insert, delete, undelete, load, refresh, turn into a fault, save, rollback and
// invalidation of an object, and every change of one of its properties, runs through
// ObjectLifecycle. It keeps the context's sets of inserted, updated and deleted
// objects, records what the next NSManagedObjectContextObjectsDidChange reports, posts
// the context's change and save notifications, and tells its observer (undo, results
// controllers) of each step in order. The flags of ObjectState are settable only in
// this file, so no other code can change an object's state.
//
// The phases an object goes through and the legal transitions between them are in
// ObjectTransition.swift.
//
// A fault enters the registry through object(with:) without a transition: nothing
// about the object changed.
//
// Property changes are in ObjectLifecycle+PropertyChanges.swift, the ObjectsDidChange
// notification in ObjectLifecycle+ObjectsDidChange.swift and the save's notifications in
// ObjectLifecycle+SaveNotifications.swift: none of them sets a flag of ObjectState.
import Foundation

/// An object's lifecycle flags. Only ObjectLifecycle (this file) sets them.
struct ObjectState {
    /// Inserted into its context and not saved yet.
    fileprivate(set) var isInserted = false
    /// Marked for deletion at the next save.
    fileprivate(set) var isDeleted = false
    /// Values not loaded. An object starts as one: inserting or loading it fills it.
    fileprivate(set) var isFault = true
    /// A member of its context's updated objects.
    fileprivate(set) var isListedUpdated = false
    /// Listed as updated for the next ObjectsDidChange notification.
    fileprivate(set) var isNoticedUpdated = false
    /// Its context has an observer, so changes of it are reported even while it is
    /// inserted (kept for the inserted objects' fast path; other objects' changes always
    /// reach the observer).
    fileprivate(set) var isObserved = false
    /// Its context forgot it (reset) or was deallocated: its values are gone, and reading
    /// them is a mistake worth reporting.
    fileprivate(set) var isForgotten = false
    /// The read of a forgotten object was reported (once per object).
    fileprivate(set) var hasReportedForgottenRead = false
}

/// The lifecycle of one context's objects: the only code that changes their states.
final class ObjectLifecycle {
    // The context owns its lifecycle for its whole life and the lifecycle never escapes
    // it, so an unretained reference is safe (and costs no reference counting). Set once,
    // right after the context's initializer has a `self` to give.
    private unowned(unsafe) var owner: NSManagedObjectContext?
    var context: NSManagedObjectContext { owner.unsafelyUnwrapped }

    /// Objects inserted since the last save (not those deleted again).
    @exclusivity(unchecked) private(set) var inserted = ObjectSet() {
        didSet { membershipChanges &+= 1 }
    }
    /// Objects changed since the last save; some may have had their changes discarded.
    @exclusivity(unchecked) private(set) var updated = ObjectSet()
    /// Stored objects deleted since the last save.
    @exclusivity(unchecked) private(set) var deleted = ObjectSet() {
        didSet { membershipChanges &+= 1 }
    }
    /// Counts the changes of `inserted` and `deleted`: a set of their objects built for a
    /// notification still holds them while the count stays (ObjectLifecycle+SaveNotifications.swift).
    @exclusivity(unchecked) private(set) var membershipChanges = 0
    /// While a save runs: the large sets its ObjectsDidChange posted that hold all the
    /// inserted or deleted objects, for its DidSave to post again instead of building them.
    @exclusivity(unchecked) var postedChangeSets = PostedChangeSets()
    /// Deleted objects whose delete rules have not run yet.
    private(set) var pendingDeletes: [NSManagedObject] = []
    // Changes since the last ObjectsDidChange notification.
    @exclusivity(unchecked) private(set) var noticeInserted = ObjectSet()
    @exclusivity(unchecked) private(set) var noticeUpdated = ObjectSet()
    @exclusivity(unchecked) private(set) var noticeDeleted = ObjectSet()

    /// The userInfo dictionaries and sets of the context's notifications, reused from one
    /// post to the next (NotificationUserInfo.swift).
    @exclusivity(unchecked) var notificationBuffers = NotificationBuffers()

    /// Told of every step (held strongly: the context owns what observes it).
    var observer: (any ObjectLifecycleObserver)? {
        didSet { observersDidChange() }
    }
    /// The context's results controllers and result sequences (ContextChangeObservers.swift),
    /// told of every step after `observer`.
    var resultsObserver: (any ObjectLifecycleObserver)? {
        didSet { observersDidChange() }
    }
    /// Whether anything observes the context.
    @exclusivity(unchecked) private(set) var isObserved = false

    private func observersDidChange() {
        let observed = observer != nil || resultsObserver != nil
        if observed == isObserved { return }
        isObserved = observed
        for object in context.registry.values { object.state.isObserved = observed }
    }

    /// Makes `context` the owner; called once by the context's initializer.
    func attach(to context: NSManagedObjectContext) {
        owner = context
    }

    /// Whether there are unsaved changes.
    var hasChanges: Bool {
        !inserted.isEmpty || !deleted.isEmpty || !pendingDeletes.isEmpty || updated.contains { $0.hasDirtySlots }
    }

    /// Tells the observers (none: nothing read), after the state changes, before the object's hooks run.
    private func report(_ transition: ObjectTransition, _ object: NSManagedObject) {
        guard isObserved else { return }
        observer?.object(object, didUndergo: transition)
        resultsObserver?.object(object, didUndergo: transition)
    }

    private func checkLegal(_ transition: ObjectTransition, _ object: NSManagedObject) {
        assert(
            transition.isLegal(from: object.lifecyclePhase),
            "OpenCoreData: illegal lifecycle transition \(transition) from \(object.lifecyclePhase) of \(object)")
    }

    /// Takes `object` off the updated objects, if it is on them.
    private func unlistUpdated(_ object: NSManagedObject) {
        guard object.state.isListedUpdated else { return }
        updated.remove(object)
        object.state.isListedUpdated = false
    }

    /// Lists the stored, changed `object` as updated, for the next save and notification.
    func objectDidChange(_ object: NSManagedObject) {
        if object.state.isInserted || object.state.isDeleted { return }
        if !object.state.isListedUpdated {
            object.state.isListedUpdated = true
            updated.insert(object)
        }
        if !object.state.isNoticedUpdated {
            object.state.isNoticedUpdated = true
            noticeUpdated.insert(object)
        }
    }

    // MARK: Entering and leaving the context

    /// `object`, in no context, joins this one as inserted; `awakes` calls its
    /// `awakeFromInsert()` (not for a child context's object saved into this one).
    func insert(_ object: NSManagedObject, awakes: Bool) {
        checkLegal(.inserted, object)
        object.state.isForgotten = false
        if object.state.isFault && object.values.isEmpty {
            object.values = object.layout.defaultValues
            object.state.isFault = false
        }
        object.managedObjectContext = context
        object.state.isInserted = true
        // An inserted object deleted before any save keeps the flag when discarded; undo
        // may insert it again.
        object.state.isDeleted = false
        object.state.isObserved = isObserved
        context.registry[object.objectID] = object
        inserted.insert(object)
        noticeInserted.insert(object)
        report(.inserted, object)
        if awakes { object.awakeFromInsert() }
    }

    /// Inserts the stored `object` again, keeping its object ID: another save deleted its
    /// row and the merge policy keeps the object. It is saved as a new row.
    func insertAgain(_ object: NSManagedObject) {
        checkLegal(.inserted, object)
        unlistUpdated(object)
        object.state.isInserted = true
        object.state.isObserved = isObserved
        inserted.insert(object)
        report(.inserted, object)
    }

    /// Marks `object` (loaded, registered here, not deleted) deleted; its delete rules
    /// run when pending changes are processed.
    func delete(_ object: NSManagedObject) {
        checkLegal(.deleted, object)
        object.state.isDeleted = true
        if object.state.isInserted {
            inserted.remove(object)
        } else {
            deleted.insert(object)
            noticeDeleted.insert(object)
        }
        unlistUpdated(object)
        pendingDeletes.append(object)
        report(.deleted, object)
    }

    /// Takes back the deletion of `object`.
    func undelete(_ object: NSManagedObject) {
        checkLegal(.undeleted, object)
        object.state.isDeleted = false
        deleted.remove(object)
        noticeDeleted.remove(object)
        pendingDeletes.removeAll { $0 === object }
        if object.state.isInserted {
            inserted.insert(object)
        } else if object.hasDirtySlots {
            // Deleting took it off the updated objects; its changes are still to be saved.
            object.state.isListedUpdated = true
            updated.insert(object)
        }
        report(.undeleted, object)
    }

    /// Runs `applyDeleteRules` on each pending deletion (deleting more appends to them),
    /// then lets the inserted objects among them leave the context: never saved, nothing
    /// to delete.
    func processPendingDeletes(applyingDeleteRules applyDeleteRules: (NSManagedObject) -> Void) {
        var index = 0
        var discarded: [NSManagedObject] = []
        while index < pendingDeletes.count {
            let object = pendingDeletes[index]
            index += 1
            applyDeleteRules(object)
            if object.state.isInserted { discarded.append(object) }
        }
        pendingDeletes.removeAll()
        for object in discarded {
            checkLegal(.discarded, object)
            context.registry[object.objectID] = nil
            noticeInserted.remove(object)
            noticeUpdated.remove(object)
            object.state.isInserted = false
            object.managedObjectContext = nil
            report(.discarded, object)
        }
    }

    /// `object` was deleted by another context's save: it leaves this one.
    func invalidate(_ object: NSManagedObject) {
        checkLegal(.invalidated, object)
        context.registry[object.objectID] = nil
        inserted.remove(object)
        updated.remove(object)
        deleted.remove(object)
        object.state.isListedUpdated = false
        object.managedObjectContext = nil
        // A batch of faults it belongs to holds it: neither may keep the other alive.
        object.pendingFault = nil
        noticeDeleted.insert(object)
        report(.invalidated, object)
    }

    /// Every object leaves the context, with every unsaved change, and drops its values:
    /// objects holding each other through relationships (`item.group.items`) would
    /// otherwise keep each other alive after the context let go of them, as Core Data's
    /// objects do until turned into faults. `reporting` tells the observer (not while the
    /// context is being deallocated).
    ///
    /// The registry is emptied in the same pass: each object is forgotten as it leaves it
    /// (visited once, not once here and again when the registry lets go of it).
    func forgetAll(reporting: Bool = true) {
        var taken = context.registry.takeAll()
        let observed = reporting && isObserved
        taken.removeEach { object in
            if reporting { checkLegal(.forgotten, object) }
            // The registry's reference is the last one (most objects of a fetch, once its
            // results are gone) and nothing observes: the object is freed as the closure
            // returns, and no one can see it forgotten; its deinit lets go of its values.
            if !observed, isKnownUniquelyReferenced(&object) { return }
            object.managedObjectContext = nil
            Self.releaseValues(of: object)
            if reporting { report(.forgotten, object) }
        }
        context.registry.reuse(taken)
        // Objects deleted while inserted are in no set and no longer registered.
        for object in pendingDeletes where object.state.isInserted { Self.releaseValues(of: object) }
        inserted = []
        updated = []
        deleted = []
        pendingDeletes = []
        if reporting {
            clearNotices()
        } else {
            noticeInserted = []
            noticeUpdated = []
            noticeDeleted = []
        }
    }

    /// `object`, out of its context, becomes a forgotten fault holding no other object.
    /// A reset visits every registered object, most of them clean and loaded: the fields
    /// already empty are left alone rather than released and stored again.
    private static func releaseValues(of object: NSManagedObject) {
        object.values = SlotValues()
        object.committed = nil
        if !object.dirtySlots.isEmpty { object.dirtySlots = [] }
        if case .some = object.pendingFault { object.pendingFault = nil }
        object.state = ObjectState(isForgotten: true)
    }

    /// A read of the forgotten `object`'s `key`: reported once per object (Core Data raises
    /// `NSObjectInaccessibleException` for it; the non-throwing accessors here read default values).
    static func noteForgottenRead(of object: NSManagedObject, key: String) {
        guard !object.state.hasReportedForgottenRead else { return }
        object.state.hasReportedForgottenRead = true
        ObjectDiagnostics.report(
            "read of '\(key)' of \(object.entity.name ?? "?") \(object.objectID.uriRepresentation().absoluteString) "
                + "after its context was reset or deallocated: it reads default values. Fetch the object again "
                + "in a live context (readValue(forKey:) throws for it)")
    }

    // MARK: Values from a store or parent

    /// The fault `object` loads row version `version`'s `values` (its layout's
    /// `objectValues(taking:source:)` or `objectValues(fromStored:source:)`).
    func load(_ object: NSManagedObject, values: SlotValues, version: Int64) {
        checkLegal(.loaded, object)
        object.pendingFault = nil
        object.values = values
        object.committed = object.values
        object.version = version
        object.state.isFault = false
        report(.loaded, object)
        object.awakeFromFetch()
    }

    /// The fault `object`'s row is gone: it reads default values and, with
    /// `marksDeleted`, reports itself deleted.
    func faultIsInaccessible(_ object: NSManagedObject, marksDeleted: Bool) {
        checkLegal(.inaccessible, object)
        object.values = object.layout.defaultValues
        object.committed = nil
        object.state.isFault = false
        if marksDeleted { object.state.isDeleted = true }
        report(.inaccessible, object)
    }

    /// A fault with nothing to load from (no context, or its lookup failed) reads default values.
    static func loadDefaults(_ object: NSManagedObject) {
        object.managedObjectContext?.lifecycle.checkLegal(.loaded, object)
        object.state.isFault = false
        object.values = object.layout.defaultValues
        object.managedObjectContext?.lifecycle.report(.loaded, object)
    }

    /// Stored values (`stored`, of row version `version`) come in for the loaded
    /// `object` (`fresh`: its object values): every slot without an unsaved change takes its stored value.
    func refresh(_ object: NSManagedObject, fresh: SlotValues, version: Int64) {
        checkLegal(.refreshed, object)
        for slot in fresh.indices where slot < object.values.count {
            let changed = slot < object.dirtySlots.count && object.dirtySlots[slot]
            if !changed {
                object.values[slot] = fresh[slot]
            } else if let edits = UnresolvedRelationship.from(object.values[slot]), edits.hasEdits {
                // Edits of an unloaded to-many apply to the fresh list.
                object.values[slot] = edits.rebased(on: fresh[slot])
            }
        }
        object.committed = fresh
        object.version = version
        report(.refreshed, object)
        object.awake(fromSnapshotEvents: .refresh)
    }

    /// `slots` of `object` take their values in `stored` (a save repaired those
    /// relationships in the store).
    func adopt(_ slots: [Int], from stored: [StoreValue], of object: NSManagedObject) {
        checkLegal(.refreshed, object)
        let fresh = object.objectValues(from: stored)
        for slot in slots where slot < fresh.count && slot < object.values.count {
            object.values[slot] = fresh[slot]
        }
        report(.refreshed, object)
    }

    /// A merge policy resolved a conflict of `object`: its values, the stored values it
    /// now compares against, the slots the retried save writes and the row version.
    /// (A conflict made with the public initializer may name an object in no context.)
    static func resolveConflict(
        of object: NSManagedObject, values: SlotValues, committed: SlotValues, dirtySlots: [Bool], version: Int64
    ) {
        let lifecycle = object.managedObjectContext?.lifecycle
        lifecycle?.checkLegal(.refreshed, object)
        object.values = values
        object.committed = committed
        object.dirtySlots = dirtySlots
        object.version = version
        lifecycle?.report(.refreshed, object)
    }

    /// `object` drops its values and unsaved changes and becomes a fault.
    func turnIntoFault(_ object: NSManagedObject) {
        checkLegal(.turnedIntoFault, object)
        object.willTurnIntoFault()
        object.pendingFault = nil
        object.values = []
        object.committed = nil
        object.dirtySlots = []
        object.state.isFault = true
        unlistUpdated(object)
        report(.turnedIntoFault, object)
        object.didTurnIntoFault()
    }

    // MARK: Saving and rolling back

    /// The saved changes become committed: inserted and updated objects are clean, deleted
    /// ones leave the context. `versions` holds the new row versions of updated objects.
    func settleSave(
        inserted savedInserted: [NSManagedObject], updated savedUpdated: [NSManagedObject],
        deleted savedDeleted: [NSManagedObject], versions: [NSManagedObjectID: Int64]
    ) {
        for object in savedInserted {
            checkLegal(.saved, object)
            object.state.isInserted = false
            commitSaved(object, version: 1)
        }
        for object in savedUpdated {
            checkLegal(.saved, object)
            object.state.isListedUpdated = false
            commitSaved(object, version: versions[object.objectID])
        }
        for object in savedDeleted {
            checkLegal(.saved, object)
            context.registry[object.objectID] = nil
            object.managedObjectContext = nil
            object.state.isDeleted = false
            report(.saved, object)
        }
        // Emptied keeping their small tables: the next save fills them again.
        inserted.removeAll()
        // Listed objects whose changes a merge policy discarded were not saved: nothing to save.
        for object in updated { object.state.isListedUpdated = false }
        updated.removeAll()
        deleted.removeAll()
    }

    /// A saved inserted or updated object: clean, its values committed (with `version`,
    /// when the store gave one).
    private func commitSaved(_ object: NSManagedObject, version: Int64?) {
        object.dirtySlots = []
        object.settlePendingToManyEdits()
        object.committed = object.values
        if let version { object.version = version }
        report(.saved, object)
    }

    /// The deleted objects of a save, once its notifications are posted, become faults
    /// without values (as Core Data's): they left the context, and their relationships to
    /// each other (`company.ceo` and `ceo.company`) would otherwise keep them alive.
    func releaseSavedDeletes(_ savedDeleted: [NSManagedObject]) {
        for object in savedDeleted where object.managedObjectContext == nil && !object.state.isInserted {
            object.values = []
            object.committed = nil
            object.dirtySlots = []
            object.pendingFault = nil
            object.state = ObjectState()
        }
    }

    /// A merge policy rolled back the deletion of `object`, saved in this save: it takes
    /// `values` (nil: a fault keeps none) and row version `version`, without changes.
    func restoreDeleted(_ object: NSManagedObject, values: SlotValues?, version: Int64) {
        checkLegal(.rolledBack, object)
        object.state.isDeleted = false
        deleted.remove(object)
        noticeDeleted.remove(object)
        if let values {
            object.values = values
            object.committed = values
        }
        object.dirtySlots = []
        object.version = version
        report(.rolledBack, object)
        object.awake(fromSnapshotEvents: .mergePolicy)
    }

    /// Discards every unsaved change: inserted objects leave the context, updated and
    /// deleted ones return to their last saved values.
    func rollback() {
        // Inserted objects deleted since pending changes were last processed are in no set.
        let insertedAndDeleted = pendingDeletes.filter { $0.state.isInserted }
        pendingDeletes.removeAll()
        for object in Array(inserted) + insertedAndDeleted {
            checkLegal(.rolledBack, object)
            context.registry[object.objectID] = nil
            object.state.isInserted = false
            object.state.isDeleted = false
            object.managedObjectContext = nil
            report(.rolledBack, object)
            // Out of the context it lets go of the objects it names (its attributes stay
            // readable): discarded objects related both ways would keep each other, and
            // the registered objects they name, alive.
            for slot in object.layout.relationshipSlots where slot < object.values.count { object.values[slot] = nil }
        }
        for object in Array(updated) + Array(deleted) {
            checkLegal(.rolledBack, object)
            if let committed = object.committed { object.values = committed }
            object.dirtySlots = []
            object.state.isDeleted = false
            object.state.isListedUpdated = false
            report(.rolledBack, object)
            object.awake(fromSnapshotEvents: .rollback)
        }
        inserted = []
        updated = []
        deleted = []
        clearNotices()
    }

    /// Starts the changes of the next ObjectsDidChange notification afresh.
    func clearNotices() {
        for object in noticeUpdated { object.state.isNoticedUpdated = false }
        noticeInserted.removeAll()
        noticeUpdated.removeAll()
        noticeDeleted.removeAll()
    }
}
