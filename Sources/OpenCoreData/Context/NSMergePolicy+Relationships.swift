// A to-many relationship merges as a difference: what the context added to it and removed
// from it since it last read the object, applied to the list as stored now. A policy that
// writes the context's whole list instead would take back what another save added
// meanwhile (while the other side of those links still names the object), or name again
// objects another save deleted. Core Data's stores also save to-many changes as the
// difference, under every merge policy. Only rollback discards the context's changes.
import Foundation

extension NSMergePolicy {
    /// The value of the to-many `slot` of `object` once its changes since `committed` are
    /// applied to the stored destinations `stored` (an unresolved relationship of the
    /// persisted row), and whether it differs from the stored list; nil when the slot
    /// holds no resolved objects (nothing the context changed).
    func mergedToMany(
        _ object: NSManagedObject, slot: Int, committed: Any?, stored: Any?, policy: NSMergePolicyType
    ) -> (value: Any, differs: Bool)? {
        // Edits recorded without loading the relationship are changes like any other.
        if UnresolvedRelationship.from(object.values[slot])?.hasEdits == true { _ = object.slotValue(slot) }
        guard let relationship = object.layout.relationshipBySlot[slot], relationship.isToMany,
            let context = object.managedObjectContext, let current = Self.objects(in: object.values[slot])
        else { return nil }
        let persisted: [NSManagedObjectID]
        if let unresolved = UnresolvedRelationship.from(stored) {
            persisted =
                unresolved.objectIDs ?? context.destinationIDs(of: relationship, for: object.objectID)
        } else {
            persisted = (Self.objects(in: stored) ?? []).map(\.objectID)
        }
        // A snapshot never resolved names nothing the context could have removed.
        let snapshot: [NSManagedObjectID] =
            UnresolvedRelationship.from(committed)?.objectIDs ?? Self.objects(in: committed)?.map(\.objectID) ?? []
        let currentIDs = current.map(\.objectID)
        let snapshotSet = Set(snapshot)
        let currentSet = Set(currentIDs)
        let persistedSet = Set(persisted)
        let added = currentIDs.filter { !snapshotSet.contains($0) }
        let removed = snapshotSet.subtracting(currentSet)
        var merged: [NSManagedObjectID]
        if relationship.isOrdered && policy != .mergeByPropertyStoreTrumpMergePolicyType {
            // The context's order wins: its list, less what the store lost meanwhile, then
            // what the store gained.
            let addedSet = Set(added)
            merged = currentIDs.filter { persistedSet.contains($0) || addedSet.contains($0) }
            merged += persisted.filter { !currentSet.contains($0) && !removed.contains($0) }
        } else {
            merged = persisted.filter { !removed.contains($0) }
            merged += added.filter { !persistedSet.contains($0) }
        }
        let differs = relationship.isOrdered ? merged != persisted : Set(merged) != persistedSet
        let objects = merged.map { context.object(with: $0) }
        return (relationship.isOrdered ? objects as Any : Set(objects) as Any, differs)
    }

    /// The objects of a resolved to-many value; nil for an unresolved or absent one.
    private static func objects(in value: Any?) -> [NSManagedObject]? {
        switch value {
        case let set as Set<NSManagedObject>: Array(set)
        case let array as [NSManagedObject]: array
        default: nil
        }
    }
}
