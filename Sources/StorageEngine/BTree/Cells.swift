// Leaf and branch cells (SPEC.md §2.2): the records a slotted page's slot array points at,
// packed at the end of the page.
//
//   leaf cell
//   offset  size  field
//        0     2  key length k
//        2     1  flags (bit 0: the value is in overflow pages; the other bits are 0)
//        3     4  value length (the whole value, inline or not)
//        7     k  key
//      7+k     .  payload: the value inline (value length bytes), or the u64 first
//                 overflow page (8 bytes)
//
//   branch cell
//   offset  size  field
//        0     8  child page: keys >= this cell's key, and below the next cell's, live there
//        8     2  key length k
//       10     k  key (the separator)
//
// `LeafCell` and `BranchCell` read one cell in place and build one. They do not check
// bounds: a page read from disk was validated (P1) before any cell of it is read, and
// the engine builds every other cell itself.

/// A leaf cell, read in place.
struct LeafCell {
    static let keyLengthOffset = 0
    static let flagsOffset = 2
    static let valueLengthOffset = 3
    /// The bytes before the key.
    static let headerSize = 7
    /// The flags bit of a value kept in overflow pages.
    static let overflowFlag: UInt8 = 1
    /// The payload of an overflowed value: its first overflow page.
    static let overflowReferenceSize = 8

    /// The cell's first byte.
    let base: UnsafeRawPointer

    @inline(__always) init(_ base: UnsafeRawPointer) { self.base = base }

    @inline(__always) var keyLength: Int { base.u16(at: Self.keyLengthOffset) }
    @inline(__always) var flags: UInt8 { base.u8(at: Self.flagsOffset) }
    @inline(__always) var isOverflow: Bool { flags & Self.overflowFlag != 0 }
    /// The whole value's length, inline or not.
    @inline(__always) var valueLength: Int { base.u32(at: Self.valueLengthOffset) }
    @inline(__always) var keyStart: UnsafeRawPointer { base + Self.headerSize }
    @inline(__always) var key: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: keyStart, count: keyLength) }
    /// The inline value, or the overflow reference.
    @inline(__always) var payload: UnsafeRawPointer { base + Self.headerSize + keyLength }
    /// The value when it is inline (not ``isOverflow``).
    @inline(__always) var inlineValue: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: payload, count: valueLength)
    }
    /// The first overflow page when ``isOverflow``.
    @inline(__always) var overflowPage: UInt64 { payload.u64(at: 0) }
    /// The cell's bytes, header to payload end.
    @inline(__always) var size: Int {
        Self.headerSize + keyLength + (isOverflow ? Self.overflowReferenceSize : valueLength)
    }
    @inline(__always) var image: CellImage { CellImage(base: base, count: size) }

    /// The size of a cell for `keyLength` and `valueLength`, its value inline or not.
    @inline(__always) static func size(keyLength: Int, valueLength: Int, isOverflow: Bool) -> Int {
        headerSize + keyLength + (isOverflow ? overflowReferenceSize : valueLength)
    }

    /// Writes a cell at `destination`: the value inline, or `overflowPage` as its reference.
    /// Returns the cell's size.
    @inline(__always) @discardableResult
    static func write(
        _ destination: UnsafeMutableRawPointer, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
        overflowPage: UInt64?
    ) -> Int {
        destination.setU16(at: keyLengthOffset, key.count)
        destination.setU8(at: flagsOffset, overflowPage == nil ? 0 : overflowFlag)
        destination.setU32(at: valueLengthOffset, value.count)
        if let keyBase = key.baseAddress { (destination + headerSize).copyMemory(from: keyBase, byteCount: key.count) }
        let payload = destination + headerSize + key.count
        if let overflowPage {
            payload.setU64(at: 0, overflowPage)
        } else if let valueBase = value.baseAddress {
            payload.copyMemory(from: valueBase, byteCount: value.count)
        }
        return size(keyLength: key.count, valueLength: value.count, isOverflow: overflowPage != nil)
    }
}

/// A branch cell, read in place.
struct BranchCell {
    static let childOffset = 0
    static let keyLengthOffset = 8
    /// The bytes before the key.
    static let headerSize = 10

    /// The cell's first byte.
    let base: UnsafeRawPointer

    @inline(__always) init(_ base: UnsafeRawPointer) { self.base = base }

    @inline(__always) var child: UInt64 { base.u64(at: Self.childOffset) }
    @inline(__always) var keyLength: Int { base.u16(at: Self.keyLengthOffset) }
    @inline(__always) var keyStart: UnsafeRawPointer { base + Self.headerSize }
    @inline(__always) var key: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: keyStart, count: keyLength) }
    @inline(__always) var size: Int { Self.headerSize + keyLength }
    @inline(__always) var image: CellImage { CellImage(base: base, count: size) }

    /// Writes a cell at `destination`; returns its size.
    @inline(__always) @discardableResult
    static func write(_ destination: UnsafeMutableRawPointer, child: UInt64, key: UnsafeRawBufferPointer) -> Int {
        destination.setU64(at: childOffset, child)
        destination.setU16(at: keyLengthOffset, key.count)
        if let keyBase = key.baseAddress { (destination + headerSize).copyMemory(from: keyBase, byteCount: key.count) }
        return headerSize + key.count
    }
}

/// A complete cell's bytes, on a page or built in scratch space: what moves between pages
/// when they split, merge or compact.
struct CellImage {
    let base: UnsafeRawPointer
    let count: Int
}
