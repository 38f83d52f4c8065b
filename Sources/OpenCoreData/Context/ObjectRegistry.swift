// The context's registered objects by ID.
//
// Keyed by the ID's fields rather than the ID object (hashing and comparing NSObject keys
// goes through dynamic dispatch and existential casts), in tables of their own
// (ObjectKeyTable.swift) rather than Dictionaries, which ran SipHash on every probe.
// Objects under temporary IDs (the inserted ones) are kept in a table of their own: a
// save of many new objects gives each a permanent ID, and when every temporary entry goes
// at once the table is dropped whole instead of each entry being removed (a removal
// shifts the entries after it) or the whole registry being rebuilt.
import Foundation

/// Registered objects by ID (see the file comment).
struct ObjectRegistry {
    private var permanent = ObjectKeyTable()
    private var temporary = ObjectKeyTable()

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { self[id.registryKey] }
        set { self[id.registryKey] = newValue }
    }

    subscript(key: NSManagedObjectID.Key) -> NSManagedObject? {
        get { key.isTemporary ? temporary[key] : permanent[key] }
        set {
            if key.isTemporary {
                temporary[key] = newValue
            } else {
                permanent[key] = newValue
            }
        }
    }

    /// The object registered under `key`, or the one `make` creates, registered.
    mutating func object(for key: NSManagedObjectID.Key, orRegister make: () -> NSManagedObject) -> NSManagedObject {
        if key.isTemporary { return temporary.object(for: key, orRegister: make) }
        return permanent.object(for: key, orRegister: make)
    }

    /// Every registered object (permanent IDs first).
    var values: Values { Values(permanent: permanent.objects, temporary: temporary.objects) }

    /// The registered objects: the permanent table's, then the temporary table's.
    struct Values: Sequence, IteratorProtocol {
        fileprivate var permanent: ObjectKeyTable.Objects
        fileprivate var temporary: ObjectKeyTable.Objects

        mutating func next() -> NSManagedObject? { permanent.next() ?? temporary.next() }
    }
    var isEmpty: Bool { permanent.isEmpty && temporary.isEmpty }
    var count: Int { permanent.count + temporary.count }
    /// Objects the permanent table holds before it grows.
    var permanentCapacity: Int { permanent.capacity }

    /// Room for `count` objects in all; new objects of a fetch or fault batch are stored,
    /// so the room goes to the permanent table.
    mutating func reserveCapacity(_ count: Int) { permanent.reserveCapacity(Swift.max(0, count - temporary.count)) }

    /// Empties the registry and keeps its permanent table when it is at most
    /// `retainedCapacity` entries and at least a quarter full: a context reset between
    /// rounds of similar size (fetch, use, reset) does not grow the table again from empty
    /// each round, a round of a million objects does not leave its table behind, and a
    /// reset after a round of a few objects does not clear a table sized for an earlier
    /// large one (emptying a kept table walks every slot, more than a fetch of one object
    /// costs to register once the table is sized for thousands).
    mutating func removeAll() {
        permanent.removeAll(keepingCapacity: keepsPermanentTable)
        temporary = ObjectKeyTable()
    }

    /// Takes every object out, leaving the registry empty (and usable) while the caller
    /// empties what it took with ``Taken/removeEach(_:)``: a reset forgets each object in
    /// the one pass that lets go of it. ``reuse(_:)`` then gives the table back.
    mutating func takeAll() -> Taken {
        let taken = Taken(permanent: permanent, temporary: temporary, keepsTable: keepsPermanentTable)
        permanent = ObjectKeyTable()
        temporary = ObjectKeyTable()
        return taken
    }

    /// Keeps the emptied permanent table of `taken` for the next round, as ``removeAll()``
    /// keeps its own, unless objects were registered since ``takeAll()``.
    mutating func reuse(_ taken: Taken) {
        if taken.keepsTable, isEmpty, permanent.capacity == 0 { permanent = taken.permanent }
    }

    /// The objects ``takeAll()`` took out of the registry.
    struct Taken {
        fileprivate var permanent: ObjectKeyTable
        fileprivate var temporary: ObjectKeyTable
        fileprivate let keepsTable: Bool

        /// Hands each object to `body` as it leaves (permanent IDs first), moved out of its
        /// slot: once `body` returns, the object is released (`body` gets the registry's
        /// reference, so `isKnownUniquelyReferenced` tells whether that frees it).
        mutating func removeEach(_ body: (inout NSManagedObject) -> Void) {
            permanent.removeAll(keepingCapacity: keepsTable, forEach: body)
            temporary.removeAll(keepingCapacity: false, forEach: body)
        }
    }

    /// Whether emptying the registry keeps the permanent table's storage (see ``removeAll()``).
    private var keepsPermanentTable: Bool {
        permanent.capacity <= Self.retainedCapacity && permanent.count >= permanent.capacity / 4
    }

    /// The largest capacity `removeAll()` keeps: up to a table of 2^18 slots (room for
    /// 196,608 objects, 8 MiB of 32-byte entries), so rounds of 100,000 objects (a traversal
    /// of every employee, then `reset()`) do not grow theirs again from empty each round.
    static let retainedCapacity = 1 << 18

    /// Moves each of `moved` from its temporary key `from` to its permanent key `to`
    /// (the objects are the ones registered under `from`, which are all distinct):
    /// the temporary table is dropped whole when they are all of it.
    /// The entries are read in place through a buffer pointer, one field at a time: a loop
    /// over the array copied each `(Key, Key, NSManagedObject)` out whole (an outlined copy
    /// with a retain, and its destroy) in each of the three passes.
    mutating func rekey(_ moved: [(from: NSManagedObjectID.Key, to: NSManagedObjectID.Key, object: NSManagedObject)]) {
        permanent.reserveCapacity(permanent.count + moved.count)
        moved.withUnsafeBufferPointer { moved in
            var leaving = 0
            for index in moved.indices where moved[index].from.isTemporary {
                if temporary[moved[index].from] === moved[index].object { leaving += 1 }
            }
            if leaving == temporary.count {
                temporary = ObjectKeyTable()
            } else {
                for index in moved.indices where moved[index].from.isTemporary { temporary[moved[index].from] = nil }
            }
            for index in moved.indices { self[moved[index].to] = moved[index].object }
        }
    }
}
