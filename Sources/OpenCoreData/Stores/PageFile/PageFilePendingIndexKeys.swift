// The ordinary index entries one writer adds, kept until its `finish()` and written in
// key order: a bulk insert then appends to each index tree instead of splitting pages
// at random places, and an entry added and taken back in one transaction is never
// written.
import Foundation

/// The ordinary index keys a save adds to one index tree, written sorted at the end.
/// Kept as a plain list while the save only adds (a bulk insert); a lookup set is built
/// the first time a key must be taken back (an update or delete of this save).
struct PendingIndexKeys {
    private var keys: [[UInt8]] = []
    private var lookup: Set<[UInt8]>?

    /// Keys added so far (taken-back ones included until the next write).
    var count: Int { keys.count }

    mutating func insert(_ key: [UInt8]) {
        if lookup == nil {
            keys.append(key)
        } else if lookup?.insert(key).inserted == true {
            keys.append(key)
        }
    }

    /// Takes `key` back; false when this save did not add it.
    mutating func remove(_ key: [UInt8]) -> Bool {
        // Nothing added yet (an update's old entry): no lookup set, adding stays appending.
        if keys.isEmpty { return false }
        if lookup == nil { lookup = Set(keys) }
        return lookup?.remove(key) != nil
    }

    /// The keys still added, in byte order, each once.
    func sortedKeys() -> [[UInt8]] {
        var result: [[UInt8]]
        if let lookup {
            result = keys.filter { lookup.contains($0) }
        } else {
            result = keys
        }
        // Sorted as (first 24 bytes as three big-endian words, length, position) records:
        // plain integer comparisons instead of comparing arrays. Equal words decide by
        // length only when both keys fit in them; longer keys compare their bytes.
        var order: [SortRecord] = []
        order.reserveCapacity(result.count)
        for (index, key) in result.enumerated() { order.append(SortRecord(key, index: index)) }
        order.sort { first, second in
            if first.words != second.words { return first.words < second.words }
            if first.length <= SortRecord.wordBytes && second.length <= SortRecord.wordBytes {
                return first.length < second.length
            }
            return PendingIndexKeys.precedes(result[first.index], result[second.index])
        }
        // A key added twice (or taken back and added again) is written once.
        var unique: [[UInt8]] = []
        unique.reserveCapacity(order.count)
        for record in order {
            let key = result[record.index]
            if let last = unique.last, last == key { continue }
            unique.append(key)
        }
        return unique
    }

    private struct SortRecord {
        static let wordBytes = 24
        let words: (UInt64, UInt64, UInt64)
        let length: Int
        let index: Int

        init(_ key: [UInt8], index: Int) {
            var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
            key.withUnsafeBytes { bytes in
                func word(_ start: Int) -> UInt64 {
                    var value: UInt64 = 0
                    for offset in start..<(start + 8) {
                        value <<= 8
                        if offset < bytes.count { value |= UInt64(bytes[offset]) }
                    }
                    return value
                }
                words = (word(0), word(8), word(16))
            }
            self.words = words
            self.length = key.count
            self.index = index
        }
    }

    /// Byte order (memcmp), the engine's key order.
    static func precedes(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                let common = min(a.count, b.count)
                if common > 0, let left = a.baseAddress, let right = b.baseAddress {
                    let order = memcmp(left, right, common)
                    if order != 0 { return order < 0 }
                }
                return a.count < b.count
            }
        }
    }
}
