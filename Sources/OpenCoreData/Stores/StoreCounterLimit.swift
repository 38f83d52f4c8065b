// The bound on counters a store reads from its file: primary keys and the next key, row
// versions, history sequences and purge bounds. The stores add to these (`+ 1` for the
// next version or record, a block of keys), so a forged value near Int64.max with a valid
// checksum would trap; checking each one where it is decoded keeps every later addition
// safe.

/// The largest counter value a store accepts from a file.
enum StoreCounterLimit {
    /// 2^62 - 1: far beyond any real store (a save a microsecond for 140,000 years), and
    /// far enough below `Int64.max` that the additions stores make cannot overflow. A
    /// larger value is damage or forgery: `NSFileReadCorruptFileError` (259).
    static let maximum: Int64 = Int64.max / 2

    /// Whether `value` is a counter a store can hold (`0...maximum`).
    static func accepts(_ value: Int64) -> Bool { value >= 0 && value <= maximum }
}
