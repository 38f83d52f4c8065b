// Where each slot of the row a scan is on begins: one walk of the row's tags and lengths
// (which is also its structure check, SPEC.md §3.5 Q3a) writes the offsets into memory
// the scan reuses from row to row. A scan pays this walk on every row, so it writes
// through a pointer: no array uniqueness or capacity check, and no exclusivity check,
// per slot; and it stops after the last slot the scan's predicate reads.
import Foundation

/// The slot offsets of one row at a time, for one scan (not shared between threads).
final class PageFileRowSlots {
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var count = 0

    /// Room for `capacity` slots to start with (it grows for longer rows).
    init(capacity: Int = 32) {
        self.capacity = max(capacity, 1)
        storage = UnsafeMutablePointer<Int>.allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// The offsets found by the last ``walk(_:)``, one per slot the row holds; valid until
    /// the next walk.
    var offsets: UnsafeBufferPointer<Int> { UnsafeBufferPointer(start: storage, count: count) }

    /// Finds the slots of the row `bytes` up to slot `lastSlot` (every slot by default),
    /// checking the structure of the values it walks.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the bytes walked are not a valid row.
    @inline(__always)
    func walk(_ bytes: UnsafeRawBufferPointer, through lastSlot: Int = .max) throws {
        if let found = PageFileRowCodec.quickSlotOffsets(bytes, into: storage, capacity: capacity, through: lastSlot) {
            count = found
            return
        }
        try walkSlowly(bytes, through: lastSlot)
    }

    /// A row with more slots than there is room for, or a damaged one (the checked walk
    /// names the damage).
    private func walkSlowly(_ bytes: UnsafeRawBufferPointer, through lastSlot: Int) throws {
        var found: [Int] = []
        try PageFileRowCodec.slotOffsets(bytes, into: &found, through: lastSlot)
        if found.count > capacity {
            storage.deallocate()
            capacity = found.count
            storage = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        }
        for (index, offset) in found.enumerated() { storage[index] = offset }
        count = found.count
    }
}
