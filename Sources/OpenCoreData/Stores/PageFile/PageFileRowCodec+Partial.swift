// Reading single slots of an encoded row without decoding the rest: what a full scan
// needs to evaluate a predicate on a row it will most likely not return. Built only on
// the codec's small primitives (the header, one value's extent, one value's decoding),
// so a new row format changes `slotOffsets` and `skipValue` here and nothing else.
import Foundation

extension PageFileRowCodec {
    /// The byte offset of every slot's value in `bytes`, found by walking the tags and
    /// lengths of the whole row (so a row whose structure is damaged is refused even when
    /// the predicate reads only one slot); `offsets` is reused between rows.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the bytes are not a valid row.
    static func slotOffsets(_ bytes: UnsafeRawBufferPointer, into offsets: inout [Int]) throws {
        offsets.removeAll(keepingCapacity: true)
        if quickSlotOffsets(bytes, into: &offsets) { return }
        // Damaged (or unusual): walk again with the checked reader, which names the damage.
        offsets.removeAll(keepingCapacity: true)
        var reader = ByteReader(bytes: bytes)
        _ = try reader.varint()  // the row version
        while !reader.isAtEnd {
            offsets.append(reader.offset)
            try skipValue(&reader)
        }
    }

    /// ``slotOffsets(_:into:)`` in one tight loop; false, at the first thing it does not
    /// expect, to let the checked walk report it. It is every scanned row's cost.
    private static func quickSlotOffsets(_ bytes: UnsafeRawBufferPointer, into offsets: inout [Int]) -> Bool {
        let end = bytes.count
        var offset = 0
        @inline(__always) func varint(_ offset: inout Int) -> Int? {
            var value = 0
            var shift = 0
            while offset < end, shift < 63 {
                let byte = bytes[offset]
                offset += 1
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value >= 0 ? value : nil }
                shift += 7
            }
            return nil
        }
        @inline(__always) func skip(_ length: Int, _ offset: inout Int) -> Bool {
            guard length <= end - offset else { return false }
            offset += length
            return true
        }
        guard varint(&offset) != nil else { return false }  // the row version
        while offset < end {
            let raw = bytes[offset]
            offsets.append(offset)
            offset += 1
            if raw >= smallIntegerBase { continue }
            if raw >= shortStringBase {
                guard skip(Int(raw - shortStringBase), &offset) else { return false }
                continue
            }
            guard let tag = Tag(rawValue: raw) else { return false }
            switch tag {
            case .null, .booleanFalse, .booleanTrue, .externalBinary, .externalToMany: continue
            case .integer, .wholeSecondDate: guard varint(&offset) != nil else { return false }
            case .double, .date: guard skip(8, &offset) else { return false }
            case .float: guard skip(4, &offset) else { return false }
            case .uuid: guard skip(16, &offset) else { return false }
            case .string, .decimal, .binary, .uri:
                guard let length = varint(&offset), skip(length, &offset) else { return false }
            case .objectID:
                guard let length = varint(&offset), skip(length, &offset), varint(&offset) != nil else { return false }
            case .objectIDs:
                guard let references = varint(&offset), references <= end - offset else { return false }
                for _ in 0..<references {
                    guard let length = varint(&offset), skip(length, &offset), varint(&offset) != nil else {
                        return false
                    }
                }
            }
        }
        return offset == end
    }

    /// Moves `reader` past one tagged value.
    static func skipValue(_ reader: inout ByteReader) throws {
        let raw = try reader.byte()
        if raw >= smallIntegerBase { return }
        if raw >= shortStringBase { return try reader.skip(Int(raw - shortStringBase)) }
        guard let tag = Tag(rawValue: raw) else { throw reader.corrupt("unknown value tag \(raw)") }
        switch tag {
        case .null, .booleanFalse, .booleanTrue, .externalBinary, .externalToMany: return
        case .integer, .wholeSecondDate: _ = try reader.varint()
        case .double, .date: try reader.skip(8)
        case .float: try reader.skip(4)
        case .uuid: try reader.skip(16)
        case .string, .decimal, .binary, .uri: try reader.skipLengthPrefixed()
        case .objectID: try skipReference(&reader)
        case .objectIDs:
            let count = try reader.varint()
            guard count <= UInt64(reader.remaining) else {
                throw reader.corrupt("object ID count \(count) exceeds the row")
            }
            for _ in 0..<Int(count) { try skipReference(&reader) }
        }
    }

    private static func skipReference(_ reader: inout ByteReader) throws {
        try reader.skipLengthPrefixed()
        _ = try reader.varint()
    }

    /// The UTF-8 bytes of the string stored at `offset`, or nil when that value is not a string.
    static func stringBytes(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws -> UnsafeRawBufferPointer? {
        var reader = ByteReader(bytes: bytes)
        reader.offset = offset
        let raw = try reader.byte()
        let length: UInt64
        if raw >= shortStringBase, raw < smallIntegerBase {
            length = UInt64(raw - shortStringBase)
        } else if raw == Tag.string.rawValue {
            length = try reader.varint()
        } else {
            return nil
        }
        guard length <= UInt64(reader.remaining) else { throw reader.corrupt("length \(length) exceeds the row") }
        return UnsafeRawBufferPointer(rebasing: bytes[reader.offset..<(reader.offset + Int(length))])
    }

    /// The value stored at `offset` of `bytes` (an offset from ``slotOffsets(_:into:)``).
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the value is damaged.
    func decodeValue(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, declaredEntity: NSEntityDescription?
    ) throws -> StoreValue {
        var reader = ByteReader(bytes: bytes)
        reader.offset = offset
        return try decodeValue(&reader, declaredEntity: declaredEntity)
    }
}

extension ByteReader {
    /// The string whose UTF-8 is `raw`, or nil when `raw` is not valid UTF-8.
    ///
    /// `String(validating:as:)` runs unspecialized on Linux (generic metadata lookups on every
    /// call, about half the cost of decoding a row); decoding with repair and comparing the
    /// bytes back is exact — a repaired string differs from its input at the first invalid
    /// byte — and stays on the standard library's fast path.
    static func validatedString(_ raw: UnsafeRawBufferPointer) -> String? {
        guard let base = raw.baseAddress, !raw.isEmpty else { return "" }
        let units = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
        var string = String(decoding: units, as: UTF8.self)
        let valid = string.withUTF8 { decoded in
            guard let start = decoded.baseAddress, decoded.count == units.count else { return false }
            return memcmp(start, base, units.count) == 0
        }
        return valid ? string : nil
    }

    mutating func skip(_ count: Int) throws {
        guard count >= 0, count <= remaining else { throw corrupt("length \(count) exceeds the row") }
        offset += count
    }

    mutating func skipLengthPrefixed() throws {
        let length = try varint()
        guard length <= UInt64(remaining) else { throw corrupt("length \(length) exceeds the row") }
        offset += Int(length)
    }
}
