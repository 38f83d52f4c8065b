// One table of the context's registry (ObjectRegistry.swift): objects by the fields of
// their ID key (key, entity, store). A Dictionary keyed by `NSManagedObjectID.Key` ran
// SipHash on every probe (seeding and finalizing cost more than the probe), and at scale
// each probe read three places apart: its bitmap word, its key and its value. Here an
// entry holds the key's fields and the object together, 32 bytes, so a probe reads one
// cache line; the slot comes from the fields mixed by two multiplications (keys are
// store keys and addresses, not chosen by any input, so a keyed hash buys nothing).
// Open addressing with linear probing, at most three quarters full; removal shifts the
// entries after it back (no tombstones). Whether the key is temporary is not stored: the
// registry keeps temporary and permanent keys in tables of their own.
import Foundation

struct ObjectKeyTable {
    fileprivate struct Entry {
        var key: Int64
        /// The entity's address; 0 for an empty slot (read instead of the object, which
        /// a check would retain).
        var entity: UInt
        /// The store's address; 0 for none (a temporary ID).
        var store: UInt
        /// Nil exactly when the slot is empty.
        var object: NSManagedObject?

        static var empty: Entry { Entry(key: 0, entity: 0, store: 0, object: nil) }
        var isEmpty: Bool { entity == 0 }
    }

    /// A power of two (at least 8) or empty.
    private var entries: [Entry] = []
    /// The number of objects in the table.
    private(set) var count = 0

    init() {}

    /// Objects the table holds before it grows.
    var capacity: Int { entries.count / 4 * 3 }

    var isEmpty: Bool { count == 0 }

    subscript(key: NSManagedObjectID.Key) -> NSManagedObject? {
        get {
            guard count > 0 else { return nil }
            let probe = Probe(key)
            return entries.withUnsafeBufferPointer { entries in
                let mask = entries.count - 1
                var slot = probe.home(shift: Self.shift(entries.count))
                while !entries[slot].isEmpty {
                    if probe.matches(entries[slot]) { return entries[slot].object }
                    slot = (slot + 1) & mask
                }
                return nil
            }
        }
        set {
            if let newValue {
                insert(newValue, for: Probe(key), replacing: true)
            } else {
                remove(Probe(key))
            }
        }
    }

    /// The object under `key`, or the one `make` creates, stored under it: in the empty slot
    /// the one probe ended at (the table grows first when one more would make it too full).
    /// `make` must not register anything (the context's makes an object given no context).
    mutating func object(for key: NSManagedObjectID.Key, orRegister make: () -> NSManagedObject) -> NSManagedObject {
        let probe = Probe(key)
        if (count + 1) * 4 > entries.count * 3 { rebuild(slots: Swift.max(8, entries.count * 2)) }
        // Probed through a read-only view: a registered object (a refetch) pays no mutable access.
        let shift = Self.shift(entries.count)
        let (found, empty) = entries.withUnsafeBufferPointer { entries -> (NSManagedObject?, Int) in
            let mask = entries.count - 1
            var slot = probe.home(shift: shift)
            while !entries[slot].isEmpty {
                if probe.matches(entries[slot]) { return (entries[slot].object, slot) }
                slot = (slot + 1) & mask
            }
            return (nil, slot)
        }
        if let found { return found }
        let object = make()
        entries.withUnsafeMutableBufferPointer { entries in
            (entries.baseAddress.unsafelyUnwrapped + empty).initialize(
                to: Entry(key: probe.key, entity: probe.entity, store: probe.store, object: object))
        }
        count += 1
        return object
    }

    /// Every object, in table order.
    var objects: Objects { Objects(entries: entries) }

    /// The objects of a table, in table order: a plain loop over the slots (a lazy
    /// `compactMap` left unspecialized cost ~100 instructions per slot).
    struct Objects: Sequence, IteratorProtocol {
        fileprivate let entries: [Entry]
        private var position = 0

        fileprivate init(entries: [Entry]) { self.entries = entries }

        mutating func next() -> NSManagedObject? {
            while position < entries.count {
                let slot = position
                position += 1
                if !entries[slot].isEmpty { return entries[slot].object }
            }
            return nil
        }
    }

    /// Room for `count` objects without growing.
    mutating func reserveCapacity(_ count: Int) {
        guard count > capacity else { return }
        rebuild(slots: Self.slots(for: count))
    }

    /// Empties the table, handing each object to `body` as it leaves, in table order: each
    /// slot is visited once and its object moved out of it (no retain, and no second pass
    /// over the slots to release it); `keepingCapacity` keeps the storage for the next round.
    /// `body` gets the table's own reference, so it can tell whether it is the last one.
    mutating func removeAll(keepingCapacity: Bool, forEach body: (inout NSManagedObject) -> Void) {
        if count > 0 {
            entries.withUnsafeMutableBufferPointer { entries in
                for slot in entries.indices where !entries[slot].isEmpty {
                    entries[slot].entity = 0
                    if var object = entries[slot].object.take() { body(&object) }
                }
            }
        }
        if !keepingCapacity { entries = [] }
        count = 0
    }

    /// Empties the table; `keepingCapacity` keeps its storage for the next round.
    mutating func removeAll(keepingCapacity: Bool) {
        if keepingCapacity {
            if count > 0 {
                entries.withUnsafeMutableBufferPointer { entries in
                    for slot in entries.indices where !entries[slot].isEmpty { entries[slot] = .empty }
                }
            }
        } else {
            entries = []
        }
        count = 0
    }

    /// The slot holding `probe`'s key; nil when absent.
    private func slot(of probe: Probe) -> Int? {
        guard count > 0 else { return nil }
        return entries.withUnsafeBufferPointer { entries in
            let mask = entries.count - 1
            var slot = probe.home(shift: Self.shift(entries.count))
            while !entries[slot].isEmpty {
                if probe.matches(entries[slot]) { return slot }
                slot = (slot + 1) & mask
            }
            return nil
        }
    }

    private mutating func insert(_ object: NSManagedObject, for probe: Probe, replacing: Bool) {
        if (count + 1) * 4 > entries.count * 3 { rebuild(slots: Swift.max(8, entries.count * 2)) }
        let shift = Self.shift(entries.count)
        let added = entries.withUnsafeMutableBufferPointer { entries in
            let mask = entries.count - 1
            var slot = probe.home(shift: shift)
            while !entries[slot].isEmpty {
                if replacing, probe.matches(entries[slot]) {
                    entries[slot].object = object
                    return false
                }
                slot = (slot + 1) & mask
            }
            // An empty slot holds no object: written over, with nothing to release first.
            (entries.baseAddress.unsafelyUnwrapped + slot).initialize(
                to: Entry(key: probe.key, entity: probe.entity, store: probe.store, object: object))
            return true
        }
        if added { count += 1 }
    }

    private mutating func remove(_ probe: Probe) {
        guard var hole = slot(of: probe) else { return }
        let shift = Self.shift(entries.count)
        entries.withUnsafeMutableBufferPointer { entries in
            let mask = entries.count - 1
            // Entries after the hole move back into it unless their home lies after the hole.
            var next = hole
            while true {
                next = (next + 1) & mask
                guard !entries[next].isEmpty else { break }
                let wanted = Probe(entries[next]).home(shift: shift)
                let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
                if staysPut { continue }
                entries.swapAt(hole, next)
                hole = next
            }
            entries[hole] = .empty
        }
        count -= 1
    }

    /// Hashes every entry again into a table of `slots` slots.
    private mutating func rebuild(slots: Int) {
        let old = entries
        entries = Array(repeating: .empty, count: slots)
        let shift = Self.shift(slots)
        entries.withUnsafeMutableBufferPointer { entries in
            let mask = slots - 1
            for entry in old where !entry.isEmpty {
                var slot = Probe(entry).home(shift: shift)
                while !entries[slot].isEmpty { slot = (slot + 1) & mask }
                entries[slot] = entry
            }
        }
    }

    /// The power of two of slots that holds `count` objects at most three quarters full.
    private static func slots(for count: Int) -> Int {
        var slots = 8
        while slots / 4 * 3 < count { slots *= 2 }
        return slots
    }

    /// How far a mixed word shifts right to leave a slot of a table of `slots` slots.
    private static func shift(_ slots: Int) -> UInt64 { UInt64(64 - slots.trailingZeroBitCount) }

    /// A key's fields as the table stores them.
    private struct Probe {
        let key: Int64
        let entity: UInt
        let store: UInt

        init(_ key: NSManagedObjectID.Key) {
            self.key = key.key
            entity = UInt(bitPattern: key.entity)
            store = key.store.map { UInt(bitPattern: $0) } ?? 0
        }

        init(_ entry: Entry) {
            key = entry.key
            entity = entry.entity
            store = entry.store
        }

        func matches(_ entry: Entry) -> Bool {
            entry.key == key && entry.entity == entity && entry.store == store
        }

        /// The high bits of the fields mixed by multiplications (Fibonacci hashing): the
        /// store keys of one entity are mostly consecutive, and spread over the table.
        func home(shift: UInt64) -> Int {
            var word = UInt64(bitPattern: key) &+ UInt64(entity) &* 0xC2B2_AE3D_27D4_EB4F
            word ^= UInt64(store) &* 0x1656_67B1_9E37_79F9
            return Int(truncatingIfNeeded: (word &* 0x9E37_79B9_7F4A_7C15) >> shift)
        }
    }
}
