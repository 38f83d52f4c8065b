// The mutable sets mutableSetValue(forKey:) and mutableOrderedSetValue(forKey:)
// return: every edit goes through the owner's relationship, so inverses and change
// tracking stay exact.
import Foundation

/// The relationship behind a proxy set: its owner and slot, and what both proxy kinds do
/// the same way.
struct ToManyRelationshipHandle {
    let owner: NSManagedObject
    let slot: Int

    var objects: [NSManagedObject] { owner.toManyObjects(slot) }

    /// `object` as a managed object; anything else is a programming error, as in Core Data.
    func destination(_ object: Any) -> NSManagedObject {
        guard let object = object as? NSManagedObject else {
            preconditionFailure("OpenCoreData: only managed objects can be added to a relationship set")
        }
        return object
    }

    func remove(_ object: Any) {
        guard let object = object as? NSManagedObject else { return }
        owner.removeFromToMany(slot, object)
    }

    /// The proxies exist only as `accessor` returns them: the collection initializers
    /// Foundation requires have no relationship to edit.
    static func madeOnlyBy(_ accessor: String) -> Never {
        preconditionFailure("OpenCoreData: a relationship set is created by \(accessor) only")
    }
}

final class RelationshipMutableSet: NSMutableSet {
    private let relationship: ToManyRelationshipHandle

    init(owner: NSManagedObject, slot: Int) {
        relationship = ToManyRelationshipHandle(owner: owner, slot: slot)
        super.init(capacity: 0)
    }

    required convenience init(arrayLiteral elements: Any...) {
        ToManyRelationshipHandle.madeOnlyBy("mutableSetValue(forKey:)")
    }

    required init?(coder: NSCoder) { nil }

    required init(capacity numItems: Int) {
        ToManyRelationshipHandle.madeOnlyBy("mutableSetValue(forKey:)")
    }

    private var owner: NSManagedObject { relationship.owner }
    private var slot: Int { relationship.slot }
    private var current: [NSManagedObject] { relationship.objects }

    override var count: Int { current.count }

    override func member(_ object: Any) -> Any? {
        guard let object = object as? NSManagedObject else { return nil }
        return current.contains(object) ? object : nil
    }

    override func objectEnumerator() -> NSEnumerator {
        NSArray(array: current).objectEnumerator()
    }

    override var allObjects: [Any] { current }

    override func add(_ object: Any) {
        let object = relationship.destination(object)
        if let relationship = owner.layout.relationshipBySlot[slot] {
            do {
                try owner.checkDestination(object, relationship)
            } catch {
                preconditionFailure("OpenCoreData: mutableSetValue(forKey:).add: \(error.localizedDescription)")
            }
        }
        owner.addToMany(slot, object)
    }

    override func remove(_ object: Any) {
        relationship.remove(object)
    }

    override func removeAllObjects() {
        owner.setToMany(slot, [])
    }

    override func addObjects(from array: [Any]) {
        for object in array { add(object) }
    }
}

final class RelationshipMutableOrderedSet: NSMutableOrderedSet {
    private let relationship: ToManyRelationshipHandle

    init(owner: NSManagedObject, slot: Int) {
        relationship = ToManyRelationshipHandle(owner: owner, slot: slot)
        super.init(capacity: 0)
    }

    required convenience init(arrayLiteral elements: Any...) {
        ToManyRelationshipHandle.madeOnlyBy("mutableOrderedSetValue(forKey:)")
    }

    required init?(coder: NSCoder) { nil }

    private var owner: NSManagedObject { relationship.owner }
    private var slot: Int { relationship.slot }
    private var current: [NSManagedObject] { relationship.objects }

    override var count: Int { current.count }

    override func object(at index: Int) -> Any {
        let objects = current
        precondition(
            objects.indices.contains(index),
            "OpenCoreData: index \(index) is out of range for a relationship of \(objects.count) objects")
        return objects[index]
    }

    override func index(of object: Any) -> Int {
        guard let object = object as? NSManagedObject else { return NSNotFound }
        return current.firstIndex(of: object) ?? NSNotFound
    }

    override func insert(_ object: Any, at index: Int) {
        let object = relationship.destination(object)
        var objects = current
        if objects.contains(object) { return }
        objects.insert(object, at: Swift.min(Swift.max(index, 0), objects.count))
        owner.setToMany(slot, objects)
    }

    override func add(_ object: Any) {
        insert(object, at: current.count)
    }

    override func removeObject(at index: Int) {
        var objects = current
        guard objects.indices.contains(index) else { return }
        objects.remove(at: index)
        owner.setToMany(slot, objects)
    }

    override func remove(_ object: Any) {
        relationship.remove(object)
    }

    override func replaceObject(at index: Int, with object: Any) {
        guard let object = object as? NSManagedObject else { return }
        var objects = current
        guard objects.indices.contains(index) else { return }
        objects[index] = object
        owner.setToMany(slot, objects)
    }

    override func removeAllObjects() {
        owner.setToMany(slot, [])
    }

    // Foundation's bulk edits of NSMutableOrderedSet change its own storage, not the
    // primitives above: each goes through the relationship here.

    override func addObjects(from array: [Any]) {
        for object in array { add(object) }
    }

    override func removeObjects(in array: [Any]) {
        for object in array { remove(object) }
    }
}
