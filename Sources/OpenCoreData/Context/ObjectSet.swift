// The context's internal sets of objects (inserted, updated, deleted, pending
// notices), keyed by object identity. A Set<NSManagedObject> hashes through NSObject's
// dynamically dispatched `hash` and compares with `isEqual(_:)` and a cast, and even a
// dictionary keyed by ObjectIdentifier runs SipHash per probe; these sets sit on the
// insert path of every object, so they keep a table of their own: open addressing with
// linear probing over the object's address mixed by one multiplication (addresses are
// not chosen by any input, so a keyed hash buys nothing), and removal by shifting the
// entries after it back (no tombstones).
//
// A set iterates in the order its objects joined it (a removed object leaves a hole,
// skipped, until holes are half the list): a save lists its new objects in creation
// order, and objects mostly join the inserted set in that order, so sorting them is a
// walk over one ascending run instead of a sort of the hash order.
import Foundation

struct ObjectSet: Sequence, ExpressibleByArrayLiteral {
    /// The objects in the order they joined; nil where one left.
    private var members: [NSManagedObject?] = []
    /// Positions in `members`, by hash slot; `empty` where none. Its size is a power of
    /// two (or zero), at most three quarters full.
    private var table: [Int32] = []
    /// The number of objects in the set.
    private(set) var count = 0

    private static let empty: Int32 = -1

    init() {}

    init(arrayLiteral elements: NSManagedObject...) {
        for element in elements { insert(element) }
    }

    init(_ elements: some Sequence<NSManagedObject>) {
        for element in elements { insert(element) }
    }

    var isEmpty: Bool { count == 0 }

    func contains(_ object: NSManagedObject) -> Bool { slot(of: object) != nil }

    mutating func insert(_ object: NSManagedObject) {
        if (count + 1) * 4 > table.count * 3 { rebuild(capacity: Swift.max(8, table.count * 2)) }
        let mask = table.count - 1
        var slot = home(object)
        while true {
            let position = table[slot]
            if position == Self.empty { break }
            if members[Int(position)] === object { return }
            slot = (slot + 1) & mask
        }
        table[slot] = Int32(members.count)
        members.append(object)
        count += 1
    }

    mutating func remove(_ object: NSManagedObject) {
        guard var hole = slot(of: object) else { return }
        members[Int(table[hole])] = nil
        count -= 1
        // Entries after the hole move back into it unless their home lies after the hole.
        let mask = table.count - 1
        var next = hole
        while true {
            next = (next + 1) & mask
            let position = table[next]
            if position == Self.empty { break }
            let wanted = home(members[Int(position)].unsafelyUnwrapped)
            let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if staysPut { continue }
            table[hole] = position
            hole = next
        }
        table[hole] = Self.empty
        if count == 0 {
            members.removeAll(keepingCapacity: true)
        } else if members.count > 32, count * 2 < members.count {
            rebuild(capacity: table.count)
        }
    }

    /// The most table slots `removeAll()` keeps for the next round.
    static let retainedTableLimit = 64

    /// Empties the set. A small table is kept, emptied in place, for the next round: a
    /// save of one object empties the context's sets and fills them again with about as
    /// many, and two fresh allocations per set per save (its list and its table) cost more
    /// than the save's whole list work. A larger table (a bulk save) is let go.
    mutating func removeAll() {
        guard count > 0 || !members.isEmpty else { return }
        guard table.count <= Self.retainedTableLimit else {
            self = ObjectSet()
            return
        }
        members.removeAll(keepingCapacity: true)
        for slot in table.indices { table[slot] = Self.empty }
        count = 0
    }

    /// The slots of the hash table (for tests of what `removeAll()` keeps).
    var tableSize: Int { table.count }

    /// The objects as the public `Set<NSManagedObject>` (O(n)).
    var asSet: Set<NSManagedObject> {
        // Notifications build one per kind on every save, most of them empty or tiny.
        guard count > 0 else { return [] }
        var set = Set<NSManagedObject>(minimumCapacity: count)
        for case let object? in members { set.insert(object) }
        return set
    }

    func makeIterator()
        -> LazyMapSequence<
            LazyFilterSequence<LazyMapSequence<[NSManagedObject?], NSManagedObject?>>, NSManagedObject
        >.Iterator
    {
        members.lazy.compactMap { $0 }.makeIterator()
    }

    var underestimatedCount: Int { count }

    /// The table slot holding `object`; nil when it is not in the set.
    private func slot(of object: NSManagedObject) -> Int? {
        guard !table.isEmpty else { return nil }
        let mask = table.count - 1
        var slot = home(object)
        while true {
            let position = table[slot]
            if position == Self.empty { return nil }
            if members[Int(position)] === object { return slot }
            slot = (slot + 1) & mask
        }
    }

    /// The slot `object` hashes to: the high bits of its address times a constant
    /// (Fibonacci hashing), which spreads the low bits allocation alignment leaves zero.
    private func home(_ object: NSManagedObject) -> Int {
        let mixed = UInt64(UInt(bitPattern: ObjectIdentifier(object))) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt64(64 - table.count.trailingZeroBitCount))
    }

    /// Drops the holes and hashes every object again into a table of `capacity` slots.
    private mutating func rebuild(capacity: Int) {
        members.removeAll { $0 == nil }
        table = Array(repeating: Self.empty, count: capacity)
        let mask = capacity - 1
        for (position, object) in members.enumerated() {
            var slot = home(object.unsafelyUnwrapped)
            while table[slot] != Self.empty { slot = (slot + 1) & mask }
            table[slot] = Int32(position)
        }
    }
}
