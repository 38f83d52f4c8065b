// The context's internal sets of objects (inserted, updated, deleted, pending
// notices), keyed by object identity. A Set<NSManagedObject> hashes through NSObject's
// dynamically dispatched `hash` and compares with `isEqual(_:)` and a cast; these
// sets sit on the insert path of every object, so they hash a pointer instead.
import Foundation

struct ObjectSet: Sequence, ExpressibleByArrayLiteral {
    private var objects: [ObjectIdentifier: NSManagedObject] = [:]

    init() {}

    init(arrayLiteral elements: NSManagedObject...) {
        for element in elements { insert(element) }
    }

    init(_ elements: some Sequence<NSManagedObject>) {
        for element in elements { insert(element) }
    }

    var isEmpty: Bool { objects.isEmpty }
    var count: Int { objects.count }

    func contains(_ object: NSManagedObject) -> Bool { objects[ObjectIdentifier(object)] != nil }

    mutating func insert(_ object: NSManagedObject) { objects[ObjectIdentifier(object)] = object }

    mutating func remove(_ object: NSManagedObject) { objects[ObjectIdentifier(object)] = nil }

    /// The objects as the public `Set<NSManagedObject>` (O(n)).
    var asSet: Set<NSManagedObject> { Set(objects.values) }

    func makeIterator() -> Dictionary<ObjectIdentifier, NSManagedObject>.Values.Iterator {
        objects.values.makeIterator()
    }
}
