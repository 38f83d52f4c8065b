// Key order (SPEC.md §2.2): keys compare as unsigned bytes, a prefix first (memcmp
// order). Every search of a node, with or without its search table, is one of the two
// bisections below over positions whose keys ascend.
#if canImport(Glibc)
    import Glibc
#endif

/// A key being searched for, taken apart once: each comparison on the way down reads
/// its address and length directly.
struct SearchKey {
    /// The first byte; nil only for an empty key.
    let base: UnsafeRawPointer?
    let count: Int

    @inline(__always) init(_ bytes: UnsafeRawBufferPointer) {
        base = bytes.baseAddress
        count = bytes.count
    }

    /// The first 8 bytes as a big-endian integer, zero-padded: ordering prefixes orders
    /// keys, except that equal prefixes need a full comparison.
    @inline(__always) var prefix: UInt64 {
        // A key with bytes has an address, so the unwraps below cannot fail.
        if count >= 8 { return UInt64(bigEndian: base.unsafelyUnwrapped.loadUnaligned(as: UInt64.self)) }
        var value: UInt64 = 0
        for index in 0..<count {
            value |=
                UInt64(base.unsafelyUnwrapped.load(fromByteOffset: index, as: UInt8.self)) << (56 - 8 * UInt64(index))
        }
        return value
    }
}

/// Byte-wise comparison of the `leftCount` bytes at `left` with `right`: negative when
/// the left key sorts first, 0 when equal.
@inline(__always)
func compareKeys(_ left: UnsafeRawPointer, _ leftCount: Int, _ right: SearchKey) -> Int {
    let common = min(leftCount, right.count)
    if common > 0 {
        let result = memcmp(left, right.base.unsafelyUnwrapped, common)
        if result != 0 { return Int(result) }
    }
    return leftCount - right.count
}

/// Byte-wise comparison of two keys: negative when `left` sorts first, 0 when equal.
@inline(__always)
func compareKeys(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
    guard let leftBase = left.baseAddress else { return right.isEmpty ? 0 : -1 }
    return compareKeys(leftBase, left.count, SearchKey(right))
}

/// The first position in `low..<high` whose key is not below the probe, and whether it
/// equals the probe; `order(position)` compares that position's key with the probe.
@inline(__always)
func lowerBound(_ low: Int, _ high: Int, _ order: (Int) -> Int) -> (index: Int, found: Bool) {
    var low = low
    var high = high
    while low < high {
        let middle = (low + high) >> 1
        let result = order(middle)
        if result < 0 {
            low = middle + 1
        } else if result > 0 {
            high = middle
        } else {
            return (middle, true)
        }
    }
    return (low, false)
}

/// The first position in `low..<high` whose key is above the probe: for a branch, the
/// number of separators at or below the key, which is the child it lives under.
@inline(__always)
func upperBound(_ low: Int, _ high: Int, _ order: (Int) -> Int) -> Int {
    var low = low
    var high = high
    while low < high {
        let middle = (low + high) >> 1
        if order(middle) <= 0 {
            low = middle + 1
        } else {
            high = middle
        }
    }
    return low
}
