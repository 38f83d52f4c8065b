// Reading single slots of an encoded row without decoding the rest: what a full scan
// needs to evaluate a predicate on a row it will most likely not return. Built only on
// the codec's small primitives (the header, one value's extent, one value's decoding),
// so a new row format changes `slotOffsets` and `skipValue` here and nothing else.
import Foundation

extension PageFileRowCodec {
    /// The byte offset of every slot's value in `bytes` up to slot `lastSlot`, found by
    /// walking the tags and lengths of the row's values through that slot's (so a damaged
    /// value the reader would meet is refused; SPEC.md §3.5 Q3a); `offsets` is reused
    /// between rows. With the default `lastSlot` the whole row is walked.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the bytes walked are not a valid row.
    static func slotOffsets(_ bytes: UnsafeRawBufferPointer, into offsets: inout [Int], through lastSlot: Int = .max)
        throws
    {
        offsets.removeAll(keepingCapacity: true)
        // Every value takes at least one byte: a row has at most `bytes.count` slots.
        let found = withUnsafeTemporaryAllocation(of: Int.self, capacity: max(bytes.count, 1)) { scratch in
            guard let base = scratch.baseAddress,
                let count = quickSlotOffsets(bytes, into: base, capacity: scratch.count, through: lastSlot)
            else { return false }
            offsets.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<count]))
            return true
        }
        if found { return }
        try checkedSlotOffsets(bytes, into: &offsets, through: lastSlot)
    }

    /// The walk that names the damage the quick walk stopped at.
    private static func checkedSlotOffsets(
        _ bytes: UnsafeRawBufferPointer, into offsets: inout [Int], through lastSlot: Int
    ) throws {
        offsets.removeAll(keepingCapacity: true)
        var reader = StoreByteReader(row: bytes)
        _ = try reader.varint()  // the row version
        while !reader.isAtEnd, offsets.count <= lastSlot {
            offsets.append(reader.offset)
            try skipValue(&reader)
        }
    }

    /// ``slotOffsets(_:into:through:)`` in one tight loop writing at most `capacity` offsets
    /// to `offsets`: the slot count, or nil at the first thing it does not expect (or past
    /// `capacity` slots), to let the checked walk report it. It is every scanned row's cost,
    /// which is why it stops after slot `lastSlot`: a scan reads no slot past its predicate's.
    @inline(__always)
    static func quickSlotOffsets(
        _ bytes: UnsafeRawBufferPointer, into offsets: UnsafeMutablePointer<Int>, capacity: Int,
        through lastSlot: Int = .max
    ) -> Int? {
        let end = bytes.count
        var offset = 0
        var count = 0
        guard quickVarint(bytes, &offset) != nil else { return nil }  // the row version
        while offset < end, count <= lastSlot {
            guard count < capacity else { return nil }
            offsets[count] = offset
            count += 1
            guard quickSkipValue(bytes, &offset) else { return nil }
        }
        return offset == end || count > lastSlot ? count : nil
    }

    /// Where slot `slot`'s value starts in `bytes`, the values before it walked (and so
    /// checked) as ``quickSlotOffsets(_:into:capacity:through:)`` walks them, with nothing
    /// written per slot: a scan testing one slot reads it straight from here, and checks its
    /// value's extent as it reads it. Nil when the row ends before that slot or at anything
    /// the quick walk does not expect (the caller then takes the walk that names it).
    @inline(__always)
    static func quickSlotOffset(_ bytes: UnsafeRawBufferPointer, of slot: Int) -> Int? {
        var offset = 0
        guard quickVarint(bytes, &offset) != nil else { return nil }  // the row version
        var skipped = 0
        while skipped < slot {
            guard offset < bytes.count, quickSkipValue(bytes, &offset) else { return nil }
            skipped += 1
        }
        return offset < bytes.count ? offset : nil
    }

    /// Moves `offset` past the tagged value at it (`offset` < `bytes.count`): false at a tag
    /// the quick walk does not expect or a value running past the end.
    @inline(__always)
    private static func quickSkipValue(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Bool {
        let end = bytes.count
        // An integer is skipped, not decoded: bytes with the high bit set, then one without
        // (at most nine, as `StoreByteReader.length` reads them; longer ones the checked walk judges).
        @inline(__always) func skipVarint(_ offset: inout Int) -> Bool {
            let limit = min(end, offset + 9)
            while offset < limit {
                let byte = bytes[offset]
                offset += 1
                if byte < 0x80 { return true }
            }
            return false
        }
        @inline(__always) func skip(_ length: Int, _ offset: inout Int) -> Bool {
            guard length <= end - offset else { return false }
            offset += length
            return true
        }
        let raw = bytes[offset]
        offset += 1
        if raw >= smallIntegerBase { return true }
        if raw >= shortStringBase { return skip(Int(raw - shortStringBase), &offset) }
        // By tag number (`Tag`): `Tag(rawValue:)` is a call per value here.
        switch raw {
        case 0, 4, 5, 14, 0x11: return true  // nil, false, true, external binary, external to-many
        case 1, 0x10: return skipVarint(&offset)  // integer, whole-second date
        case 2, 8: return skip(8, &offset)  // double, date
        case 3: return skip(4, &offset)  // float
        case 10: return skip(16, &offset)  // UUID
        case 6, 7, 9, 11:  // string, decimal, binary, URI
            guard let length = quickVarint(bytes, &offset) else { return false }
            return skip(length, &offset)
        case 12:  // reference
            guard let length = quickVarint(bytes, &offset), skip(length, &offset) else { return false }
            return quickVarint(bytes, &offset) != nil
        case 13:  // references
            guard let references = quickVarint(bytes, &offset), references <= end - offset else { return false }
            for _ in 0..<references {
                guard let length = quickVarint(bytes, &offset), skip(length, &offset),
                    quickVarint(bytes, &offset) != nil
                else { return false }
            }
            return true
        default: return false
        }
    }

    /// The varint at `offset` of `bytes`, moving past it; most of a row's (lengths, small
    /// keys) are one byte, read inline.
    @inline(__always)
    private static func quickVarint(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Int? {
        if offset < bytes.count, bytes[offset] < 0x80 {
            offset += 1
            return Int(bytes[offset - 1])
        }
        return StoreByteReader.length(in: bytes, at: &offset)
    }

    /// Moves `reader` past one tagged value.
    static func skipValue(_ reader: inout StoreByteReader) throws {
        let raw = try reader.byte()
        if raw >= smallIntegerBase { return }
        if raw >= shortStringBase { return try reader.skip(Int(raw - shortStringBase)) }
        guard let tag = Tag(rawValue: raw) else { throw reader.damaged("unknown value tag \(raw)") }
        switch tag {
        case .null, .booleanFalse, .booleanTrue, .externalBinary, .externalToMany: return
        case .integer, .wholeSecondDate: _ = try reader.varint()
        case .double, .date: try reader.skip(8)
        case .float: try reader.skip(4)
        case .uuid: try reader.skip(16)
        case .string, .decimal, .binary, .uri: try reader.skipLengthPrefixed()
        case .objectID: try skipReference(&reader)
        case .objectIDs:
            let count = try reader.count(atMost: reader.remaining / 2)
            for _ in 0..<count { try skipReference(&reader) }
        }
    }

    private static func skipReference(_ reader: inout StoreByteReader) throws {
        try reader.skipLengthPrefixed()
        _ = try reader.varint()
    }

    /// The UTF-8 bytes of the string stored at `offset`, or nil when that value is not a
    /// string or is damaged (for the caller's decoding to name the damage). A scan reads
    /// it on every row, so it reads the bytes in place, with no reader and nothing thrown.
    @inline(__always)
    static func stringBytes(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer? {
        guard offset >= 0, offset < bytes.count else { return nil }
        let raw = bytes[offset]
        var start = offset + 1
        let length: Int
        if raw >= shortStringBase, raw < smallIntegerBase {
            length = Int(raw - shortStringBase)
        } else if raw == Tag.string.rawValue, let prefixed = StoreByteReader.length(in: bytes, at: &start) {
            length = prefixed
        } else {
            return nil
        }
        guard length <= bytes.count - start else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
    }

    /// The value stored at `offset` of `bytes` (an offset from ``slotOffsets(_:into:)``).
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the value is damaged.
    func decodeValue(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, declaredEntity: NSEntityDescription?
    ) throws -> StoreValue {
        var reader = StoreByteReader(row: bytes, from: offset)
        return try decodeValue(&reader, declaredEntity: declaredEntity)
    }

    /// The to-one stored at `offset` of `bytes` as its destination's primary key
    /// (`.integer`), the value a reference index entry is made of, without making an
    /// object ID; another value (null) as ``decodeValue(_:at:declaredEntity:)`` reads it.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the value is damaged or names an entity
    ///   the model does not have.
    func decodeReferenceKey(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, declaredEntity: NSEntityDescription?
    ) throws -> StoreValue {
        // The common form: the tag, an empty entity name (the declared destination), the key.
        if offset + 2 < bytes.count, bytes[offset] == Tag.objectID.rawValue, bytes[offset + 1] == 0 {
            var reader = StoreByteReader(row: bytes, from: offset + 2)
            return .integer(try reader.signed())
        }
        let value = try decodeValue(bytes, at: offset, declaredEntity: declaredEntity)
        if case .objectID(let destination) = value { return .integer(destination.key) }
        return value
    }
}
