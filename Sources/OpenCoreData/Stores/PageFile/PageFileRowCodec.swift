// The byte form of one stored row (SPEC.md §3.2). Self-describing: every slot carries
// a type tag, so a row decodes without the model and a damaged row is detected.
//
//   SIZE  FIELD        (row format 2; the format is the store's, in its metadata record)
//     v   row version (unsigned LEB128; optimistic locking)
//     .   one tagged value per slot, to the end of the row (values are self-delimiting,
//         so the slot count is the number of values):
//                   0 null                  8 date: Float64 LE bits of timeIntervalSinceReferenceDate
//                   1 integer: zigzag LEB128 9 binary: length, bytes
//                   2 double: 8 bytes LE     10 UUID: 16 bytes
//                   3 float: 4 bytes LE      11 URI: length, absoluteString UTF-8
//                   4 false   5 true         12 object ID: entity reference, zigzag key
//                   6 string: length, UTF-8  13 object IDs: count, then (entity reference, zigzag key)...
//                   7 decimal: length, description UTF-8
//                                           14 external binary: none (the value is in the blob tree)
//                0x10 date of whole seconds: zigzag LEB128
//                0x11 to-many kept outside the row (join or inverse tree, SPEC.md §3.2 R1)
//           0x40-0x7F string of 0-63 UTF-8 bytes: the length is the tag's low 6 bits
//           0x80-0xFF integer 0-127: the tag's low 7 bits
//   An entity reference is a length and the entity's name; length 0 means the
//   relationship's (or attribute's) declared destination entity.
import Foundation

/// Encodes and decodes rows of the page-file store.
struct PageFileRowCodec {
    /// The current row format version, recorded once per store (its metadata format),
    /// not per row: rows of format 1 began with a byte 1 and an 8-byte version.
    static let formatVersion: UInt8 = 2

    enum Tag: UInt8 {
        case null = 0
        case integer, double, float, booleanFalse, booleanTrue, string, decimal, date, binary, uuid, uri
        case objectID, objectIDs
        /// A binary value kept in the blob tree (SPEC.md §3.8); decodes as `.unresolved`.
        case externalBinary = 14
        /// A date whose `timeIntervalSinceReferenceDate` is a whole number of seconds.
        case wholeSecondDate = 0x10
        /// A to-many relationship whose destinations live in a join or inverse tree.
        case externalToMany = 0x11
    }

    /// Tags from here up to `smallIntegerBase` are strings whose length is in the tag.
    static let shortStringBase: UInt8 = 0x40
    /// Tags from here up are the integers 0...127 held in the tag.
    static let smallIntegerBase: UInt8 = 0x80

    /// Resolves entity names of stored object IDs; the store builds IDs with it.
    let entityNamed: (String) -> NSEntityDescription?
    let makeObjectID: (NSEntityDescription, Int64) -> NSManagedObjectID
    /// Whether to-many relationships decode as empty and to-one references as the
    /// destination's key (`.integer`): checking a file without its model.
    var skipsReferences = false

    // MARK: Encoding

    /// The row bytes of `values`. An `.unresolved` relationship slot is written as a to-many
    /// kept outside the row (tag 0x11) when `externalToMany`, otherwise as null; an
    /// `.unresolved` attribute slot as a value kept in the blob tree (tag 14).
    static func encode(values: [StoreValue], version: Int64, layout: EntityLayout, externalToMany: Bool = false)
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        // Room for typical rows (short strings, numbers) without regrowing.
        bytes.reserveCapacity(16 + values.count * 12)
        appendVarint(&bytes, UInt64(bitPattern: version))
        for (slot, value) in values.enumerated() {
            let transient = slot < layout.transientBySlot.count && layout.transientBySlot[slot]
            let relationship = slot < layout.relationshipBySlot.count ? layout.relationshipBySlot[slot] : nil
            if case .unresolved = value, !transient {
                if externalToMany, relationship != nil {
                    bytes.append(Tag.externalToMany.rawValue)
                    continue
                }
                if slot < layout.attributeBySlot.count, layout.attributeBySlot[slot] != nil {
                    // An attribute left unresolved is one whose value stays in the blob tree.
                    bytes.append(Tag.externalBinary.rawValue)
                    continue
                }
            }
            let declared = relationship?.destinationEntity
            appendValue(&bytes, transient ? .null : value, declaredEntity: declared)
        }
        return bytes
    }

    static func appendValue(_ bytes: inout [UInt8], _ value: StoreValue, declaredEntity: NSEntityDescription?) {
        switch value {
        case .null, .unresolved: bytes.append(Tag.null.rawValue)
        case .integer(let number):
            if number >= 0, number < 128 {
                bytes.append(smallIntegerBase | UInt8(number))
                return
            }
            bytes.append(Tag.integer.rawValue)
            appendVarint(&bytes, zigzag(number))
        case .double(let number):
            bytes.append(Tag.double.rawValue)
            appendUInt64(&bytes, number.bitPattern)
        case .float(let number):
            bytes.append(Tag.float.rawValue)
            let bits = number.bitPattern
            for shift in stride(from: 0, to: 32, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(shift)))
            }
        case .boolean(let flag): bytes.append(flag ? Tag.booleanTrue.rawValue : Tag.booleanFalse.rawValue)
        case .string(let string):
            // Straight from the string's UTF-8 (no intermediate array).
            let count = string.utf8.count
            if count < Int(smallIntegerBase - shortStringBase) {
                bytes.append(shortStringBase | UInt8(count))
                bytes.append(contentsOf: string.utf8)
                return
            }
            bytes.append(Tag.string.rawValue)
            appendVarint(&bytes, UInt64(count))
            bytes.append(contentsOf: string.utf8)
        case .decimal(let decimal):
            bytes.append(Tag.decimal.rawValue)
            appendBytes(&bytes, Array(decimal.description.utf8))
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            // Exactly representable whole seconds round-trip through an integer.
            if seconds.rounded(.towardZero) == seconds, seconds.magnitude < 9_007_199_254_740_992,
                seconds != 0 || seconds.sign == .plus
            {
                bytes.append(Tag.wholeSecondDate.rawValue)
                appendVarint(&bytes, zigzag(Int64(seconds)))
                return
            }
            bytes.append(Tag.date.rawValue)
            appendUInt64(&bytes, seconds.bitPattern)
        case .binary(let data):
            bytes.append(Tag.binary.rawValue)
            appendBytes(&bytes, Array(data))
        case .uuid(let uuid):
            bytes.append(Tag.uuid.rawValue)
            withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
        case .uri(let url):
            bytes.append(Tag.uri.rawValue)
            appendBytes(&bytes, Array(url.absoluteString.utf8))
        case .objectID(let id):
            bytes.append(Tag.objectID.rawValue)
            appendReference(&bytes, id, declaredEntity: declaredEntity)
        case .objectIDs(let ids):
            bytes.append(Tag.objectIDs.rawValue)
            appendVarint(&bytes, UInt64(ids.count))
            for id in ids { appendReference(&bytes, id, declaredEntity: declaredEntity) }
        }
    }

    private static func appendReference(
        _ bytes: inout [UInt8], _ id: NSManagedObjectID, declaredEntity: NSEntityDescription?
    ) {
        if let declaredEntity, id.entity === declaredEntity {
            bytes.append(0)
        } else {
            appendBytes(&bytes, Array((id.entity.name ?? "").utf8))
        }
        appendVarint(&bytes, zigzag(id.key))
    }

    static func appendUInt64(_ bytes: inout [UInt8], _ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func appendVarint(_ bytes: inout [UInt8], _ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    static func appendBytes(_ bytes: inout [UInt8], _ payload: [UInt8]) {
        appendVarint(&bytes, UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1))) }

    // MARK: Decoding

    /// The row version and values of `bytes` for an object of `entity`.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the bytes are not a valid row.
    func decode(
        _ bytes: UnsafeRawBufferPointer, entity: NSEntityDescription?,
        declaredEntities: [NSEntityDescription?]? = nil
    ) throws -> (version: Int64, values: [StoreValue]) {
        var reader = ByteReader(bytes: bytes)
        let version = Int64(bitPattern: try reader.varint())
        let layout = entity?.layout
        var values: [StoreValue] = []
        values.reserveCapacity(layout?.properties.count ?? 8)
        var slot = 0
        while !reader.isAtEnd {
            defer { slot += 1 }
            var declared = layout.flatMap {
                slot < $0.relationshipBySlot.count ? $0.relationshipBySlot[slot]?.destinationEntity : nil
            }
            if let declaredEntities { declared = slot < declaredEntities.count ? declaredEntities[slot] : nil }
            values.append(try decodeValue(&reader, declaredEntity: declared))
        }
        guard let layout else { return (version, values) }
        // More values than the entity has properties: bytes past the row's end (migration
        // rewrites every row when the model changes).
        guard values.count <= layout.properties.count else {
            throw reader.corrupt("\(values.count) values for \(layout.properties.count) properties")
        }
        // A row written before the entity gained properties reads them as null.
        while values.count < layout.properties.count { values.append(.null) }
        return (version, values)
    }

    func decodeValue(_ reader: inout ByteReader, declaredEntity: NSEntityDescription?) throws -> StoreValue {
        let raw = try reader.byte()
        if raw >= PageFileRowCodec.smallIntegerBase { return .integer(Int64(raw - PageFileRowCodec.smallIntegerBase)) }
        if raw >= PageFileRowCodec.shortStringBase {
            return .string(try reader.string(length: Int(raw - PageFileRowCodec.shortStringBase)))
        }
        guard let tag = Tag(rawValue: raw) else { throw reader.corrupt("unknown value tag \(raw)") }
        switch tag {
        case .null: return .null
        case .integer: return .integer(PageFileRowCodec.unzigzag(try reader.varint()))
        case .double: return .double(Double(bitPattern: try reader.uint64()))
        case .float: return .float(Float(bitPattern: try reader.uint32()))
        case .booleanFalse: return .boolean(false)
        case .booleanTrue: return .boolean(true)
        case .string: return .string(try reader.string())
        case .decimal:
            let text = try reader.string()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw reader.corrupt("'\(text)' is not a decimal number")
            }
            return .decimal(decimal)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.uint64())))
        case .wholeSecondDate:
            return .date(Date(timeIntervalSinceReferenceDate: Double(PageFileRowCodec.unzigzag(try reader.varint()))))
        case .externalToMany:
            // Checked without the model, a to-many kept outside reads as empty (as held ones
            // do), so only blob references stay `.unresolved`.
            return skipsReferences ? .objectIDs([]) : .unresolved
        case .binary: return .binary(Data(try reader.lengthPrefixed()))
        case .uuid:
            let raw = try reader.take(16)
            let uuid = raw.withUnsafeBytes { buffer in
                UUID(
                    uuid: (
                        buffer[0], buffer[1], buffer[2], buffer[3], buffer[4], buffer[5], buffer[6], buffer[7],
                        buffer[8], buffer[9], buffer[10], buffer[11], buffer[12], buffer[13], buffer[14], buffer[15]
                    ))
            }
            return .uuid(uuid)
        case .uri:
            let text = try reader.string()
            guard let url = URL(string: text) else { throw reader.corrupt("'\(text)' is not a URL") }
            return .uri(url)
        case .objectID:
            if skipsReferences {
                // Checked without the model: the destination's key stands for the reference.
                _ = try reader.string()
                return .integer(PageFileRowCodec.unzigzag(try reader.varint()))
            }
            return try reference(&reader, declaredEntity: declaredEntity).map { .objectID($0) } ?? .null
        case .objectIDs:
            let count = try reader.varint()
            guard count <= UInt64(reader.remaining) else {
                throw reader.corrupt("object ID count \(count) exceeds the row")
            }
            var ids: [NSManagedObjectID] = []
            ids.reserveCapacity(skipsReferences ? 0 : Int(count))
            for _ in 0..<Int(count) {
                if let id = try reference(&reader, declaredEntity: declaredEntity) { ids.append(id) }
            }
            return .objectIDs(ids)
        case .externalBinary: return .unresolved
        }
    }

    private func reference(_ reader: inout ByteReader, declaredEntity: NSEntityDescription?) throws
        -> NSManagedObjectID?
    {
        let name = try reader.string()
        if skipsReferences {
            _ = try reader.varint()
            return nil
        }
        let entity: NSEntityDescription?
        if name.isEmpty { entity = declaredEntity } else { entity = entityNamed(name) }
        guard let entity else {
            throw reader.corrupt("an object reference names entity '\(name)', which the model does not have")
        }
        return makeObjectID(entity, PageFileRowCodec.unzigzag(try reader.varint()))
    }
}

/// A bounds-checked reader over bytes read from the file: every read past the end throws.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    func corrupt(_ message: String) -> NSError {
        CoreDataError.make(NSFileReadCorruptFileError, "damaged row in the store: \(message) (at byte \(offset))")
    }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw corrupt("unexpected end of row") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint64() throws -> UInt64 {
        guard remaining >= 8 else { throw corrupt("unexpected end of row") }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(index * 8) }
        offset += 8
        return value
    }

    mutating func uint32() throws -> UInt32 {
        guard remaining >= 4 else { throw corrupt("unexpected end of row") }
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << UInt32(index * 8) }
        offset += 4
        return value
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw corrupt("integer longer than 10 bytes") }
            value |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return value }
            shift += 7
        }
    }

    mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= remaining else { throw corrupt("length \(count) exceeds the row") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func lengthPrefixed() throws -> [UInt8] {
        let length = try varint()
        guard length <= UInt64(remaining) else { throw corrupt("length \(length) exceeds the row") }
        return try take(Int(length))
    }

    mutating func string() throws -> String {
        let length = try varint()
        guard length <= UInt64(remaining) else { throw corrupt("length \(length) exceeds the row") }
        return try string(length: Int(length))
    }

    /// The next `length` bytes as a string (a short string's length is in its tag).
    mutating func string(length: Int) throws -> String {
        guard length >= 0, length <= remaining else { throw corrupt("length \(length) exceeds the row") }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
        offset += length
        guard let string = ByteReader.validatedString(raw) else { throw corrupt("invalid UTF-8 in a string") }
        return string
    }
}
