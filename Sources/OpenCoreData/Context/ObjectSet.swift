// The context's internal sets of objects (inserted, updated, deleted, pending
// notices), keyed by object identity. A Set<NSManagedObject> hashes through NSObject's
// dynamically dispatched `hash` and compares with `isEqual(_:)` and a cast; these
// sets sit on the insert path of every object, so they hash a pointer instead.
//
// A set iterates in the order its objects joined it (a removed object leaves a hole,
// skipped, until holes are half the list): a save lists its new objects in creation
// order, and objects mostly join the inserted set in that order, so sorting them is a
// walk over one ascending run instead of a sort of the hash order.
import Foundation

struct ObjectSet: Sequence, ExpressibleByArrayLiteral {
    /// Each object's position in `members`.
    private var positions: [ObjectIdentifier: Int] = [:]
    /// The objects in the order they joined; nil where one left.
    private var members: [NSManagedObject?] = []

    init() {}

    init(arrayLiteral elements: NSManagedObject...) {
        for element in elements { insert(element) }
    }

    init(_ elements: some Sequence<NSManagedObject>) {
        for element in elements { insert(element) }
    }

    var isEmpty: Bool { positions.isEmpty }
    var count: Int { positions.count }

    func contains(_ object: NSManagedObject) -> Bool { positions[ObjectIdentifier(object)] != nil }

    mutating func insert(_ object: NSManagedObject) {
        // One hash: the position is read, or made the next one when the object is new.
        let next = members.count
        if Self.current(&positions[ObjectIdentifier(object), default: next]) == next { members.append(object) }
    }

    mutating func remove(_ object: NSManagedObject) {
        guard let position = positions.removeValue(forKey: ObjectIdentifier(object)) else { return }
        members[position] = nil
        if positions.isEmpty {
            members.removeAll(keepingCapacity: true)
        } else if members.count > 32, positions.count * 2 < members.count {
            compact()
        }
    }

    /// The objects as the public `Set<NSManagedObject>` (O(n)).
    var asSet: Set<NSManagedObject> { Set(self) }

    func makeIterator()
        -> LazyMapSequence<
            LazyFilterSequence<LazyMapSequence<[NSManagedObject?], NSManagedObject?>>, NSManagedObject
        >.Iterator
    {
        members.lazy.compactMap { $0 }.makeIterator()
    }

    var underestimatedCount: Int { positions.count }

    private static func current(_ position: inout Int) -> Int { position }

    /// Drops the holes, renumbering the objects in their order.
    private mutating func compact() {
        members.removeAll { $0 == nil }
        for (position, object) in members.enumerated() {
            if let object { positions[ObjectIdentifier(object)] = position }
        }
    }
}
