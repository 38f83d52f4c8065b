// Whether two values of one property slot are the same: undo asks it to tell a property
// restored to its last saved value (no longer a change) from one that still differs.
import Foundation

enum SlotValueEquality {
    /// Whether `lhs` and `rhs`, values of one slot in the object form (attributes in their
    /// Swift type, relationships as objects or unresolved IDs), are the same. Values that
    /// cannot be compared (a transformable value that is not hashable) count as different.
    static func same(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case (let lhs?, let rhs?):
            if let unresolved = UnresolvedRelationship.from(lhs) { return same(unresolved, rhs) }
            if let unresolved = UnresolvedRelationship.from(rhs) { return same(unresolved, lhs) }
            if let left = lhs as? AnyHashable, let right = rhs as? AnyHashable { return left == right }
            if let left = lhs as? NSObject, let right = rhs as? NSObject { return left.isEqual(right) }
            return false
        }
    }

    /// An unresolved relationship against a value: the same destinations, by ID.
    private static func same(_ unresolved: UnresolvedRelationship, _ value: Any) -> Bool {
        guard let ids = unresolved.objectIDs else { return false }
        if let other = UnresolvedRelationship.from(value) { return other.objectIDs.map(Set.init) == Set(ids) }
        if let object = value as? NSManagedObject { return ids == [object.objectID] }
        if let objects = value as? [NSManagedObject] { return objects.map(\.objectID) == ids }
        if let objects = value as? Set<NSManagedObject> { return Set(objects.map(\.objectID)) == Set(ids) }
        return false
    }
}
