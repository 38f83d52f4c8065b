// The vocabulary of the object lifecycle (ObjectLifecycle.swift): the phases an
// object goes through, the transitions between them with the phases each may start
// from, and the observer told of them.
//
// An object's phase (ObjectPhase), read from its flags and its context:
//
//   PHASE             isInserted  isDeleted  isFault   the context holds it in
//   detached          (no context)                     nothing
//   fault             -           -          yes       registry
//   clean             -           -          -         registry (maybe updated, unchanged)
//   updated           -           -          -         registry, updated (changed slots)
//   inserted          yes         -          -         registry, inserted
//   deleted           -           yes        -         registry, deleted (*)
//   deletedFault      -           yes        yes       registry, deleted
//   insertedDeleted   yes         yes        -         registry
//
//   (*) also a fault whose row is gone, loaded with default values while the context's
//       shouldDeleteInaccessibleFaults is set: it reports isDeleted, is in no set and
//       is never saved.
//
// The transitions (ObjectTransition) and the phases each may start from; each
// transition asserts it (ObjectTransition.isLegal(from:), debug builds):
//
//   TRANSITION       FROM                                        TO
//   inserted         detached; clean, updated (**)               inserted
//   loaded           fault, deletedFault; detached (defaults)    clean, deleted
//   inaccessible     fault, deletedFault                         clean or deleted (*)
//   deleted          fault, clean, updated; inserted             deleted; insertedDeleted
//   undeleted        deleted, deletedFault; insertedDeleted      clean/updated/fault; inserted
//   discarded        insertedDeleted                             detached (pending changes processed)
//   refreshed        clean, updated, deleted                     the same, stored values taken
//   turnedIntoFault  fault, clean, updated; deleted(Fault)       fault; deletedFault
//   saved            inserted, updated; deleted(Fault)           clean; detached
//   rolledBack       clean, updated, deleted(Fault); inserted,   clean or fault; detached
//                    insertedDeleted
//   invalidated      any but detached                            detached (another save deleted it)
//   forgotten        any but detached                            detached (reset)
//
//   (**) inserted again under its object ID: another save deleted its row and the
//        merge policy keeps the object.
import Foundation

/// Where an object stands in its lifecycle (see the file comment's table).
enum ObjectPhase: CaseIterable, Sendable {
    case detached, fault, clean, updated, inserted, deleted, deletedFault, insertedDeleted
}

/// One step of an object's lifecycle (see the file comment's table).
enum ObjectTransition: CaseIterable, Sendable {
    case inserted, loaded, inaccessible, deleted, undeleted, discarded, refreshed, turnedIntoFault, saved,
        rolledBack, invalidated, forgotten

    /// The phases the transition may start from.
    var legalPhases: Set<ObjectPhase> {
        switch self {
        case .inserted: [.detached, .clean, .updated]
        case .loaded: [.fault, .deletedFault, .detached]
        case .inaccessible: [.fault, .deletedFault]
        case .deleted: [.fault, .clean, .updated, .inserted]
        case .undeleted: [.deleted, .deletedFault, .insertedDeleted]
        case .discarded: [.insertedDeleted]
        case .refreshed: [.clean, .updated, .deleted]
        case .turnedIntoFault: [.fault, .clean, .updated, .deleted, .deletedFault]
        case .saved: [.inserted, .updated, .deleted, .deletedFault]
        case .rolledBack: [.clean, .updated, .deleted, .deletedFault, .inserted, .insertedDeleted]
        case .invalidated, .forgotten: Set(ObjectPhase.allCases).subtracting([.detached])
        }
    }

    /// Whether an object in `phase` may go through this transition.
    func isLegal(from phase: ObjectPhase) -> Bool { legalPhases.contains(phase) }
}

/// Told of every transition and property change of a context's objects, in order.
/// Undo and results controllers hang off this.
protocol ObjectLifecycleObserver: AnyObject {
    /// `object` went through `transition`; its state is already the new one.
    func object(_ object: NSManagedObject, didUndergo transition: ObjectTransition)
    /// The property in `slot` of `object` changed from `oldValue` to `newValue`.
    func object(_ object: NSManagedObject, didChangeSlot slot: Int, from oldValue: Any?, to newValue: Any?)
    /// The context processed its pending changes (or merged others'): `changes` holds
    /// what it reports in NSManagedObjectContextObjectsDidChange.
    func objectsDidChange(_ changes: ObjectChanges)
    /// The context saved: its inserted objects have their permanent IDs now.
    func contextDidSave()
    /// Whether the observer saw changes the next ObjectsDidChange notification will not
    /// list, so it wants `objectsDidChange(_:)` even when there is nothing to notify.
    var awaitsChanges: Bool { get }
}

extension ObjectLifecycleObserver {
    /// Nothing to do by default.
    func contextDidSave() {}
    /// False by default.
    var awaitsChanges: Bool { false }
}

/// The changes one ObjectsDidChange notification reports.
struct ObjectChanges {
    var inserted: Set<NSManagedObject> = []
    var updated: Set<NSManagedObject> = []
    var deleted: Set<NSManagedObject> = []
    var refreshed: Set<NSManagedObject> = []
    /// For results controllers: the objects a merge says were inserted or updated
    /// elsewhere, registered in this context or not (not part of the notification).
    var mergedObjectIDs: [NSManagedObjectID] = []

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty }

    /// The notification's userInfo: a key only for a kind that has objects.
    var userInfo: [AnyHashable: Any] {
        var values: [Any] = []
        values.reserveCapacity(4)
        var mask = 0
        // Kind by kind, without an array of the four sets first.
        func add(_ objects: Set<NSManagedObject>, bit: Int) {
            guard !objects.isEmpty else { return }
            mask |= 1 << bit
            values.append(objects)
        }
        add(inserted, bit: 0)
        add(updated, bit: 1)
        add(deleted, bit: 2)
        add(refreshed, bit: 3)
        return NotificationUserInfo.objectsDidChange[mask].filled(values)
    }
}

extension NSManagedObject {
    /// The object's phase, from its flags and context (for checks and tests; not on hot paths).
    var lifecyclePhase: ObjectPhase {
        guard managedObjectContext != nil else { return .detached }
        if state.isInserted { return state.isDeleted ? .insertedDeleted : .inserted }
        if state.isDeleted { return state.isFault ? .deletedFault : .deleted }
        if state.isFault { return .fault }
        return hasDirtySlots ? .updated : .clean
    }
}
