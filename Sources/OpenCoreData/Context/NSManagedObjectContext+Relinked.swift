// Objects a merge policy relinked. A policy that takes a stored relationship value over
// the context's (rollback always, store trump for a to-one the store changed) leaves the
// in-memory graph disagreeing with itself: the resolved object names destinations as
// stored before the save, while objects the save writes unchanged keep the context's
// side of the same links. The store settles each link as it saves (the to-one decides a
// one-to-many, the changed side a many-to-many), so once the save is done both the
// resolved object and the destinations whose link it changed read their rows again.
// Without that, a later delete cascades over a list the store no longer holds: the soak's
// rollback writer deleted an owner whose stale list still named an item it had moved to
// another owner, and lost the item.
import Foundation

/// The loaded relationship destinations of the objects in conflict, taken before their
/// merge policy runs.
struct RelationshipLinks {
    private var before: [(object: NSManagedObject, links: [Int: Set<ObjectIdentifier>])] = []
    private var destinations: [ObjectIdentifier: NSManagedObject] = [:]

    init(_ objects: [NSManagedObject]) {
        for object in objects { before.append((object, links(of: object))) }
    }

    /// The objects whose links the policy changed: each object in conflict with a
    /// relationship that now names other destinations, and those destinations (added or
    /// removed).
    mutating func relinked() -> [NSManagedObject] {
        var found: [NSManagedObject] = []
        var seen: Set<ObjectIdentifier> = []
        func add(_ object: NSManagedObject) {
            if seen.insert(ObjectIdentifier(object)).inserted { found.append(object) }
        }
        for (object, old) in before {
            let new = links(of: object)
            for slot in Set(old.keys).union(new.keys) {
                let changed = old[slot, default: []].symmetricDifference(new[slot, default: []])
                guard !changed.isEmpty else { continue }
                add(object)
                for id in changed { if let destination = destinations[id] { add(destination) } }
            }
        }
        return found
    }

    /// The destinations each relationship of `object` holds: the objects of a loaded one;
    /// for one not loaded that names its rows (a stored snapshot a policy put there), the
    /// registered objects of those rows and the snapshot itself, so that a new snapshot
    /// counts as a change. One the store computes on demand names nothing.
    private mutating func links(of object: NSManagedObject) -> [Int: Set<ObjectIdentifier>] {
        var links: [Int: Set<ObjectIdentifier>] = [:]
        let values = object.values
        for slot in object.layout.relationshipSlots where slot < values.count {
            var members: [NSManagedObject]
            var identities: Set<ObjectIdentifier> = []
            // By case, and for a boxed value the Swift collections before the class: on
            // Linux, casting a set to a class bridges the whole set to an NSSet first.
            switch values.storage[slot] {
            case .object(let destination): members = [destination]
            case .objects(let set): members = Array(set)
            case .orderedObjects(let array): members = array
            case .unresolved(let unresolved):
                guard let ids = unresolved.objectIDs else {
                    members = []
                    break
                }
                identities.insert(ObjectIdentifier(unresolved))
                members = ids.compactMap { object.managedObjectContext?.registry[$0] }
            case .other(let box):
                switch box.value {
                case let set as Set<NSManagedObject>: members = Array(set)
                case let array as [NSManagedObject]: members = array
                case let destination as NSManagedObject: members = [destination]
                default: members = []
                }
            case .null, .int16, .int32, .int64, .double, .bool, .string, .date, .uuid, .data: members = []
            }
            for member in members {
                destinations[ObjectIdentifier(member)] = member
                identities.insert(ObjectIdentifier(member))
            }
            links[slot] = identities
        }
        return links
    }
}
