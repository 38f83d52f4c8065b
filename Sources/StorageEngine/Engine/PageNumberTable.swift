// A table keyed by page number: the writer's dirty pages and the log index (page ->
// offset of its newest frame). A one-row commit probes them a few dozen times (each put's
// descent, every copy and free, the commit's sort, publishing); `Dictionary` hashed each
// probe with SipHash, about a hundred instructions. Page numbers need no protection from
// chosen collisions (they come from the engine's own allocator, below 2^40), so a
// multiplicative hash and linear probing do: a few instructions a probe.
//
// The entries are kept dense, in two arrays (keys, values); the hash slots hold entry
// positions. So a new table clears only an array of integers, and the values come out
// as one array copy (a commit's dirty pages).

/// Values by page number: open addressing over entry positions, linear probing, at most
/// half full; removal shifts the slots after it back (no tombstones) and moves the last
/// entry into the removed one's place.
struct PageNumberTable<Value> {
    /// Marks an empty slot.
    private static var vacant: Int32 { -1 }

    /// Entry position per hash slot, or ``vacant``.
    private var slots: ContiguousArray<Int32>
    private var entryKeys: ContiguousArray<UInt64> = []
    private var entryValues: ContiguousArray<Value> = []
    /// `64 - log2(slots.count)`: the multiplicative hash keeps the product's top bits.
    private var shift: UInt64

    /// An empty table with room for `minimumCapacity` keys before it grows.
    init(minimumCapacity: Int = 0) {
        var capacity = 8
        while capacity < 2 * minimumCapacity { capacity *= 2 }
        slots = ContiguousArray(repeating: Self.vacant, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        entryKeys.reserveCapacity(capacity / 2)
        entryValues.reserveCapacity(capacity / 2)
    }

    /// A table holding the entries of `dictionary`.
    init(_ dictionary: [UInt64: Value]) {
        self.init(minimumCapacity: dictionary.count)
        for (key, value) in dictionary { self[key] = value }
    }

    /// How many keys the table holds.
    var count: Int { entryKeys.count }

    var isEmpty: Bool { entryKeys.isEmpty }

    /// How many hash slots the table has (twice the keys it holds before it grows).
    var slotCount: Int { slots.count }

    /// The keys, in no particular order.
    var keys: [UInt64] { Array(entryKeys) }

    /// The values, in no particular order.
    var values: [Value] { Array(entryValues) }

    @inline(__always)
    private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) &>> shift)
    }

    /// The slot holding `key` and its entry's position, or the empty slot where it would
    /// go and -1.
    @inline(__always)
    private func find(_ key: UInt64) -> (slot: Int, entry: Int) {
        let mask = slots.count - 1
        var slot = home(key)
        while true {
            let entry = Int(slots[slot])
            if entry < 0 { return (slot, -1) }
            if entryKeys[entry] == key { return (slot, entry) }
            slot = (slot + 1) & mask
        }
    }

    /// The value stored under `key`; setting nil removes it.
    subscript(key: UInt64) -> Value? {
        @inline(__always) get {
            let entry = find(key).entry
            return entry < 0 ? nil : entryValues[entry]
        }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            var (slot, entry) = find(key)
            if entry >= 0 {
                entryValues[entry] = newValue
                return
            }
            if 2 * (count + 1) > slots.count {
                grow()
                slot = find(key).slot
            }
            precondition(count < Int(Int32.max), "a page-number table holds fewer than 2^31 entries")
            slots[slot] = Int32(truncatingIfNeeded: count)
            entryKeys.append(key)
            entryValues.append(newValue)
        }
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> Value? {
        let (found, entry) = find(key)
        guard entry >= 0 else { return nil }
        let mask = slots.count - 1
        // Backward shift: a slot after the hole moves into it unless its key's home lies
        // cyclically after the hole and at or before the slot (a probe for it then never
        // passes the hole).
        var hole = found
        var next = (found + 1) & mask
        while slots[next] >= 0 {
            let natural = home(entryKeys[Int(slots[next])])
            let staysPut = hole <= next ? (natural > hole && natural <= next) : (natural > hole || natural <= next)
            if !staysPut {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = Self.vacant
        // The last entry moves into the removed one's place; its slot follows.
        let last = count - 1
        if entry != last {
            var slot = home(entryKeys[last])
            while Int(slots[slot]) != last { slot = (slot + 1) & mask }
            slots[slot] = Int32(truncatingIfNeeded: entry)
            entryKeys.swapAt(entry, last)
            entryValues.swapAt(entry, last)
        }
        entryKeys.removeLast()
        return entryValues.removeLast()
    }

    /// Forgets every entry; keeps the storage. A few entries in many slots (a reused writer's
    /// table, grown by a large transaction) are cleared slot by slot, not the whole array.
    mutating func removeAll() {
        guard !isEmpty else { return }
        if 8 * count < slots.count {
            let mask = slots.count - 1
            for entry in entryKeys.indices {
                // Entry `entry` lies on its key's probe chain from home; slots already cleared
                // for other entries are passed over.
                var slot = home(entryKeys[entry])
                while Int(slots[slot]) != entry { slot = (slot + 1) & mask }
                slots[slot] = Self.vacant
            }
        } else {
            for index in slots.indices { slots[index] = Self.vacant }
        }
        entryKeys.removeAll(keepingCapacity: true)
        entryValues.removeAll(keepingCapacity: true)
    }

    private mutating func grow() {
        let capacity = 2 * slots.count
        slots = ContiguousArray(repeating: Self.vacant, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        let mask = capacity - 1
        for entry in entryKeys.indices {
            var slot = home(entryKeys[entry])
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(truncatingIfNeeded: entry)
        }
    }
}
