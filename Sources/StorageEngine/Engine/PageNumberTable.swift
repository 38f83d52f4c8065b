// A table keyed by page number: the writer's dirty pages and the log index (page ->
// offset of its newest frame). A one-row commit probes them a few dozen times (each put's
// descent, every copy and free, the commit's sort, publishing); `Dictionary` hashed each
// probe with SipHash, about a hundred instructions. Page numbers need no protection from
// chosen collisions (they come from the engine's own allocator, below 2^40), so a
// multiplicative hash and linear probing do: a few instructions a probe.

/// Values by page number: open addressing, linear probing, at most half full; removal
/// shifts the entries after it back (no tombstones). Any `UInt64` but `UInt64.max` is a
/// valid key.
struct PageNumberTable<Value> {
    /// Marks an empty slot; never a page number (those are below 2^40, SPEC.md W1).
    private static var vacant: UInt64 { .max }

    private var slotKeys: ContiguousArray<UInt64>
    private var slotValues: ContiguousArray<Value?>
    /// `64 - log2(capacity)`: the multiplicative hash keeps the product's top bits.
    private var shift: UInt64
    /// How many keys the table holds.
    private(set) var count = 0

    /// An empty table with room for `minimumCapacity` keys before it grows.
    init(minimumCapacity: Int = 0) {
        var capacity = 8
        while capacity < 2 * minimumCapacity { capacity *= 2 }
        slotKeys = ContiguousArray(repeating: Self.vacant, count: capacity)
        slotValues = ContiguousArray(repeating: nil, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
    }

    /// A table holding the entries of `dictionary`.
    init(_ dictionary: [UInt64: Value]) {
        self.init(minimumCapacity: dictionary.count)
        for (key, value) in dictionary { self[key] = value }
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) &>> shift)
    }

    /// The slot holding `key`, or the empty slot where it would go.
    @inline(__always)
    private func position(of key: UInt64) -> (index: Int, found: Bool) {
        let mask = slotKeys.count - 1
        var index = home(key)
        while true {
            let stored = slotKeys[index]
            if stored == key { return (index, true) }
            if stored == Self.vacant { return (index, false) }
            index = (index + 1) & mask
        }
    }

    /// The value stored under `key`; setting nil removes it.
    subscript(key: UInt64) -> Value? {
        @inline(__always) get {
            let (index, found) = position(of: key)
            return found ? slotValues[index] : nil
        }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            precondition(key != Self.vacant, "page number \(key) is not a key")
            var (index, found) = position(of: key)
            if !found {
                if 2 * (count + 1) > slotKeys.count {
                    grow()
                    index = position(of: key).index
                }
                slotKeys[index] = key
                count += 1
            }
            slotValues[index] = newValue
        }
    }

    /// Removes `key`; returns the value it had.
    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> Value? {
        let (found, isFound) = position(of: key)
        guard isFound else { return nil }
        let removed = slotValues[found]
        let mask = slotKeys.count - 1
        // Backward shift: an entry after the hole moves into it unless its home lies
        // cyclically after the hole and at or before the entry (it would then be found
        // before reaching the hole's slot anyway).
        var hole = found
        var next = (found + 1) & mask
        while slotKeys[next] != Self.vacant {
            let natural = home(slotKeys[next])
            let staysPut = hole <= next ? (natural > hole && natural <= next) : (natural > hole || natural <= next)
            if !staysPut {
                slotKeys[hole] = slotKeys[next]
                slotValues[hole] = slotValues[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slotKeys[hole] = Self.vacant
        slotValues[hole] = nil
        count -= 1
        return removed
    }

    /// Forgets every entry; keeps the storage.
    mutating func removeAll() {
        guard count > 0 else { return }
        for index in slotKeys.indices where slotKeys[index] != Self.vacant {
            slotKeys[index] = Self.vacant
            slotValues[index] = nil
        }
        count = 0
    }

    /// The keys, in no particular order.
    var keys: [UInt64] {
        var result: [UInt64] = []
        result.reserveCapacity(count)
        for key in slotKeys where key != Self.vacant { result.append(key) }
        return result
    }

    /// The values, in no particular order.
    var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for index in slotKeys.indices where slotKeys[index] != Self.vacant {
            if let value = slotValues[index] { result.append(value) }
        }
        return result
    }

    private mutating func grow() {
        let oldKeys = slotKeys
        let oldSlots = slotValues
        let capacity = 2 * oldKeys.count
        slotKeys = ContiguousArray(repeating: Self.vacant, count: capacity)
        slotValues = ContiguousArray(repeating: nil, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        for index in oldKeys.indices where oldKeys[index] != Self.vacant {
            let target = position(of: oldKeys[index]).index
            slotKeys[target] = oldKeys[index]
            slotValues[target] = oldSlots[index]
        }
    }
}
