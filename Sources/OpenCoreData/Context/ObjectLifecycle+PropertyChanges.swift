// Property changes: every store into a slot of a loaded object, attribute or
// relationship, goes through ObjectLifecycle.change(_:slot:to:); relationship inverses
// are maintained by the object as further changes of the other side's slots. An
// inserted object is saved whole, so while nobody observes its context, a change of it
// is stored and nothing else: a bulk insert pays one flag test per property. Any other
// change marks the slot dirty and lists the object as updated. An observer is told of
// each change with the old and new value: undo reverts one by passing the old value
// back through the same call (which it is told of in turn, for redo), and since each
// side of an inverse is its own change, reverting in reverse order restores both sides.
// An insert is reverted by delete(_:) (the object is discarded at the next processing),
// a delete by undelete(_:): the same paths, reported in turn.
//
// Only the flags of ObjectState are kept out of this file: a change that lists an object
// as updated does so through ObjectLifecycle.objectDidChange(_:) (ObjectLifecycle.swift).
import Foundation

extension ObjectLifecycle {
    /// Stores `value` in `slot` of the loaded `object` (`slot` in range): every property
    /// change comes here.
    @inline(__always)
    static func change(_ object: NSManagedObject, slot: Int, to value: Any?) {
        ConcurrencyDebug.check(object, "setting \(object.entity.name ?? "?").\(object.layout.properties[slot].name)")
        // An inserted object is saved whole: unobserved, it has nothing to record.
        if object.state.isInserted && !object.state.isObserved {
            object.values[slot] = value
            return
        }
        record(object, slot: slot, value)
    }

    /// ``change(_:slot:to:)`` for a value already in its typed case (the `@Managed`
    /// setters' fast path): an unobserved inserted object stores it without an `Any`.
    @inline(__always)
    static func change(_ object: NSManagedObject, slot: Int, toTyped value: SlotValue) {
        ConcurrencyDebug.check(object, "setting \(object.entity.name ?? "?").\(object.layout.properties[slot].name)")
        if object.state.isInserted && !object.state.isObserved {
            object.values.storage[slot] = value
            return
        }
        let context = object.managedObjectContext
        guard let lifecycle = context?.lifecycle, lifecycle.isObserved else {
            object.values.storage[slot] = value
            guard !object.state.isInserted else { return }
            markDirty(object, slot: slot, context: context)
            return
        }
        record(object, slot: slot, value.anyValue)
    }

    /// Records the change of `slot` of the loaded `object`, already made in place (a to-many
    /// set edited where it lies): ``change(_:slot:toTyped:)`` without storing the value
    /// again, `context` being the object's context, read by the caller.
    @inline(__always)
    static func changedInPlace(_ object: NSManagedObject, slot: Int, context: NSManagedObjectContext?) {
        if object.state.isInserted && !object.state.isObserved { return }
        guard let lifecycle = context?.lifecycle, lifecycle.isObserved else {
            guard !object.state.isInserted else { return }
            markDirty(object, slot: slot, context: context)
            return
        }
        // The old value is gone (edited in place): the observers are told the new one for both.
        record(object, slot: slot, object.values[slot])
    }

    /// Undo stores `value` back into `slot` of the loaded `object`: a change like any
    /// other (reported, so redo can reverse it), after which the slot counts as changed
    /// only when it differs from the last saved value.
    static func restore(_ object: NSManagedObject, slot: Int, to value: Any?) {
        change(object, slot: slot, to: value)
        guard !object.state.isInserted, slot < object.dirtySlots.count, let committed = object.committed,
            slot < committed.count, SlotValueEquality.same(value, committed[slot])
        else { return }
        object.dirtySlots[slot] = false
    }

    private static func record(_ object: NSManagedObject, slot: Int, _ value: Any?) {
        let context = object.managedObjectContext
        guard let lifecycle = context?.lifecycle, lifecycle.isObserved else {
            store(object, slot: slot, value, context: context)
            return
        }
        let oldValue = object.values[slot]
        store(object, slot: slot, value, context: context)
        lifecycle.observer?.object(object, didChangeSlot: slot, from: oldValue, to: value)
        lifecycle.resultsObserver?.object(object, didChangeSlot: slot, from: oldValue, to: value)
    }

    @inline(__always)
    private static func store(_ object: NSManagedObject, slot: Int, _ value: Any?, context: NSManagedObjectContext?) {
        object.values[slot] = value
        guard !object.state.isInserted else { return }
        markDirty(object, slot: slot, context: context)
    }

    /// Marks `slot` of the stored `object` changed and lists the object as updated.
    @inline(__always)
    private static func markDirty(_ object: NSManagedObject, slot: Int, context: NSManagedObjectContext?) {
        if object.dirtySlots.isEmpty {
            object.dirtySlots = Array(repeating: false, count: object.layout.properties.count)
        }
        object.dirtySlots[slot] = true
        context?.lifecycle.objectDidChange(object)
    }
}
