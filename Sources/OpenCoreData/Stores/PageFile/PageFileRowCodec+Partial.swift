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
        @inline(__always) func varint(_ offset: inout Int) -> Int? {
            // Most varints of a row (lengths, small keys) are one byte.
            if offset < end, bytes[offset] < 0x80 {
                offset += 1
                return Int(bytes[offset - 1])
            }
            return StoreByteReader.length(in: bytes, at: &offset)
        }
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
        guard varint(&offset) != nil else { return nil }  // the row version
        while offset < end, count <= lastSlot {
            guard count < capacity else { return nil }
            let raw = bytes[offset]
            offsets[count] = offset
            count += 1
            offset += 1
            if raw >= smallIntegerBase { continue }
            if raw >= shortStringBase {
                guard skip(Int(raw - shortStringBase), &offset) else { return nil }
                continue
            }
            // By tag number (`Tag`): `Tag(rawValue:)` is a call per value here.
            switch raw {
            case 0, 4, 5, 14, 0x11: continue  // nil, false, true, external binary, external to-many
            case 1, 0x10: guard skipVarint(&offset) else { return nil }  // integer, whole-second date
            case 2, 8: guard skip(8, &offset) else { return nil }  // double, date
            case 3: guard skip(4, &offset) else { return nil }  // float
            case 10: guard skip(16, &offset) else { return nil }  // UUID
            case 6, 7, 9, 11:  // string, decimal, binary, URI
                guard let length = varint(&offset), skip(length, &offset) else { return nil }
            case 12:  // reference
                guard let length = varint(&offset), skip(length, &offset), varint(&offset) != nil else { return nil }
            case 13:  // references
                guard let references = varint(&offset), references <= end - offset else { return nil }
                for _ in 0..<references {
                    guard let length = varint(&offset), skip(length, &offset), varint(&offset) != nil else {
                        return nil
                    }
                }
            default: return nil
            }
        }
        return offset == end || count > lastSlot ? count : nil
    }

    /// Where slot `slot`'s value starts in `bytes`, the values before it walked (and so
    /// checked) as ``quickSlotOffsets(_:into:capacity:through:)`` walks them: a scan testing
    /// one slot reads it straight from here, and checks its value's extent as it reads it.
    /// The values rows hold most (small integers, integers, short strings, nil, booleans)
    /// are skipped here with nothing written per slot; another tag takes the quick walk
    /// itself. Nil when the row ends before that slot or at anything the quick walk does
    /// not expect (the caller then takes the walk that names it).
    @inline(__always)
    static func quickSlotOffset(_ bytes: UnsafeRawBufferPointer, of slot: Int) -> Int? {
        let end = bytes.count
        var offset = 0
        // The row version: one byte for most rows.
        if end > 0, bytes[0] < 0x80 {
            offset = 1
        } else if StoreByteReader.length(in: bytes, at: &offset) == nil {
            return nil
        }
        var skipped = 0
        while skipped < slot {
            guard offset < end else { return nil }
            let raw = bytes[offset]
            offset &+= 1
            if raw >= smallIntegerBase || raw == 0 || raw == 4 || raw == 5 {
                // A small integer, nil, false, true: the tag alone.
            } else if raw >= shortStringBase {
                let length = Int(raw &- shortStringBase)
                guard length <= end &- offset else { return nil }
                offset &+= length
            } else if raw == 1 || raw == 0x10 {
                // An integer or whole-second date: up to nine varint bytes, as the quick walk
                // skips them; one load finds the last of up to 8 where the row holds 8 more.
                if end &- offset >= 8 {
                    let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    let lasts = ~word & 0x8080_8080_8080_8080
                    if lasts != 0 {
                        offset &+= lasts.trailingZeroBitCount &>> 3 &+ 1
                        skipped &+= 1
                        continue
                    }
                }
                let limit = min(end, offset &+ 9)
                while true {
                    guard offset < limit else { return nil }
                    let byte = bytes[offset]
                    offset &+= 1
                    if byte < 0x80 { break }
                }
            } else {
                return withUnsafeTemporaryAllocation(of: Int.self, capacity: slot &+ 1) { offsets in
                    guard let base = offsets.baseAddress,
                        let count = quickSlotOffsets(bytes, into: base, capacity: slot &+ 1, through: slot),
                        count > slot
                    else { return nil }
                    return base[slot]
                }
            }
            skipped &+= 1
        }
        return offset < end ? offset : nil
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
