// The mutable sets mutableSetValue(forKey:) and mutableOrderedSetValue(forKey:)
// return: every edit goes through the owner's relationship, so inverses and change
// tracking stay exact.
import Foundation

final class RelationshipMutableSet: NSMutableSet {
    private let owner: NSManagedObject
    private let slot: Int

    init(owner: NSManagedObject, slot: Int) {
        self.owner = owner
        self.slot = slot
        super.init(capacity: 0)
    }

    required convenience init(arrayLiteral elements: Any...) {
        preconditionFailure("OpenCoreData: a relationship set is created by mutableSetValue(forKey:) only")
    }

    required init?(coder: NSCoder) { nil }

    required init(capacity numItems: Int) {
        preconditionFailure("OpenCoreData: a relationship set is created by mutableSetValue(forKey:) only")
    }

    private var current: [NSManagedObject] { owner.toManyObjects(slot) }

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
        guard let object = object as? NSManagedObject else {
            preconditionFailure("OpenCoreData: only managed objects can be added to a relationship set")
        }
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
        guard let object = object as? NSManagedObject else { return }
        owner.removeFromToMany(slot, object)
    }

    override func removeAllObjects() {
        owner.setToMany(slot, [])
    }

    override func addObjects(from array: [Any]) {
        for object in array { add(object) }
    }
}

final class RelationshipMutableOrderedSet: NSMutableOrderedSet {
    private let owner: NSManagedObject
    private let slot: Int

    init(owner: NSManagedObject, slot: Int) {
        self.owner = owner
        self.slot = slot
        super.init(capacity: 0)
    }

    required convenience init(arrayLiteral elements: Any...) {
        preconditionFailure("OpenCoreData: a relationship set is created by mutableOrderedSetValue(forKey:) only")
    }

    required init?(coder: NSCoder) { nil }

    private var current: [NSManagedObject] { owner.toManyObjects(slot) }

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
        guard let object = object as? NSManagedObject else {
            preconditionFailure("OpenCoreData: only managed objects can be added to a relationship set")
        }
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
        guard let object = object as? NSManagedObject else { return }
        owner.removeFromToMany(slot, object)
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
