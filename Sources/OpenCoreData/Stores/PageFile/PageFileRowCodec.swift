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
    /// The interning of the fetch whose rows this codec decodes, on that fetch's stack
    /// (PageFileInternedObjectIDs.swift); nil makes an ID per reference.
    var interning: UnsafeMutablePointer<PageFileReferenceInterning>?
    /// The stored to-one value the rows of one batch of faults share for the one
    /// destination the batch names (PageFileRowCodec+Slots.swift); nil makes one per row.
    var namedToOne: UnresolvedRelationship?

    /// `body`'s result, given a copy of this codec that makes one ID per referenced object
    /// while `body` runs: for the rows of one fetch. The copy must not outlive `body`.
    func interningReferences<Result>(_ body: (PageFileRowCodec) throws -> Result) rethrows -> Result {
        var interning = PageFileReferenceInterning()
        return try withUnsafeMutablePointer(to: &interning) { pointer in
            var codec = self
            codec.interning = pointer
            return try body(codec)
        }
    }

    // MARK: Encoding

    /// The row bytes of `values`. An `.unresolved` relationship slot is written as a to-many
    /// kept outside the row (tag 0x11) when `externalToMany`, otherwise as null; an
    /// `.unresolved` attribute slot as a value kept in the blob tree (tag 14).
    static func encode(values: [StoreValue], version: Int64, layout: EntityLayout, externalToMany: Bool = false)
        -> [UInt8]
    {
        var writer = StoreByteWriter()
        // Room for typical rows (short strings, numbers) without regrowing.
        writer.bytes.reserveCapacity(16 + values.count * 12)
        encode(values: values, version: version, layout: layout, externalToMany: externalToMany, into: &writer)
        return writer.bytes
    }

    /// Appends the row bytes of `values` to `writer`, as ``encode(values:version:layout:externalToMany:)``
    /// returns them: a batch insert encodes every row into one reused buffer.
    static func encode(
        values: [StoreValue], version: Int64, layout: EntityLayout, externalToMany: Bool,
        into writer: inout StoreByteWriter
    ) {
        writer.varint(UInt64(bitPattern: version))
        // Read once per row, not per slot: the layout's tables are properties of a class.
        let transients = layout.transientBySlot
        let relationships = layout.relationshipBySlot
        for slot in values.indices {
            let value = values[slot]
            let transient = slot < transients.count && transients[slot]
            let relationship = slot < relationships.count ? relationships[slot] : nil
            if case .unresolved = value, !transient {
                if externalToMany, relationship != nil {
                    writer.byte(Tag.externalToMany.rawValue)
                    continue
                }
                if slot < layout.attributeBySlot.count, layout.attributeBySlot[slot] != nil {
                    // An attribute left unresolved is one whose value stays in the blob tree.
                    writer.byte(Tag.externalBinary.rawValue)
                    continue
                }
            }
            // The destination entity only names references (a locked handle read per slot otherwise).
            var declaredEntity: NSEntityDescription?
            if let relationship, !transient {
                switch value {
                case .objectID, .objectIDs: declaredEntity = relationship.destinationEntity
                default: break
                }
            }
            appendValue(transient ? .null : value, declaredEntity: declaredEntity, to: &writer)
        }
    }

    /// Appends one tagged value in its row form.
    static func appendValue(_ value: StoreValue, declaredEntity: NSEntityDescription?, to writer: inout StoreByteWriter)
    {
        writer.tagged(value, compact: true, declaredEntity: declaredEntity, reference: appendReference)
    }

    /// An object ID's payload in a row: its entity's name (empty for `declaredEntity`), then its key.
    private static func appendReference(
        _ writer: inout StoreByteWriter, _ id: NSManagedObjectID, _ declaredEntity: NSEntityDescription?
    ) {
        if let declaredEntity, id.entity === declaredEntity {
            writer.byte(0)
        } else {
            writer.string(id.entity.name ?? "")
        }
        writer.signed(id.key)
    }

    // MARK: Decoding

    /// The row version and values of `bytes` for an object of `entity`.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the bytes are not a valid row.
    func decode(
        _ bytes: UnsafeRawBufferPointer, entity: NSEntityDescription?,
        declaredEntities: [NSEntityDescription?]? = nil
    ) throws -> (version: Int64, values: [StoreValue]) {
        var reader = StoreByteReader(row: bytes)
        let version = try Self.version(&reader)
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
            throw reader.damaged("\(values.count) values for \(layout.properties.count) properties")
        }
        // A row written before the entity gained properties reads them as null.
        while values.count < layout.properties.count { values.append(.null) }
        return (version, values)
    }

    /// The row version at the start of a row's bytes, `reader` moved past it.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a version that is not a varint or is out of range.
    static func version(_ reader: inout StoreByteReader) throws -> Int64 {
        let storedVersion = try reader.varint()
        // Saves add one to it (SPEC.md §3.2): a forged version near Int64.max must not trap.
        guard storedVersion <= UInt64(StoreCounterLimit.maximum) else {
            throw reader.damaged("its version \(storedVersion) is out of range (at most \(StoreCounterLimit.maximum))")
        }
        return Int64(storedVersion)
    }

    func decodeValue(_ reader: inout StoreByteReader, declaredEntity: NSEntityDescription?) throws -> StoreValue {
        let raw = try reader.byte()
        if raw >= PageFileRowCodec.smallIntegerBase { return .integer(Int64(raw - PageFileRowCodec.smallIntegerBase)) }
        if raw >= PageFileRowCodec.shortStringBase {
            return .string(try reader.string(length: Int(raw - PageFileRowCodec.shortStringBase)))
        }
        guard let tag = Tag(rawValue: raw) else { throw reader.damaged("unknown value tag \(raw)") }
        switch tag {
        case .null: return .null
        case .integer: return .integer(try reader.signed())
        case .double: return .double(Double(bitPattern: try reader.fixed64()))
        case .float: return .float(Float(bitPattern: try reader.fixed32()))
        case .booleanFalse: return .boolean(false)
        case .booleanTrue: return .boolean(true)
        case .string: return .string(try reader.string())
        case .decimal: return .decimal(try reader.decimal())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed64())))
        case .wholeSecondDate:
            return .date(Date(timeIntervalSinceReferenceDate: Double(try reader.signed())))
        case .externalToMany:
            // Checked without the model, a to-many kept outside reads as empty (as held ones
            // do), so only blob references stay `.unresolved`.
            return skipsReferences ? .objectIDs([]) : .unresolved
        case .binary: return .binary(Data(try reader.lengthPrefixed()))
        case .uuid: return .uuid(try reader.uuid())
        case .uri: return .uri(try reader.url())
        case .objectID:
            if skipsReferences {
                // Checked without the model: the destination's key stands for the reference.
                _ = try reader.string()
                return .integer(try reader.signed())
            }
            return try reference(&reader, declaredEntity: declaredEntity).map { .objectID($0) } ?? .null
        case .objectIDs:
            // Each reference takes at least two bytes.
            let count = try reader.count(atMost: reader.remaining / 2)
            var ids: [NSManagedObjectID] = []
            ids.reserveCapacity(skipsReferences ? 0 : count)
            for _ in 0..<count {
                if let id = try reference(&reader, declaredEntity: declaredEntity) { ids.append(id) }
            }
            return .objectIDs(ids)
        case .externalBinary: return .unresolved
        }
    }

    func reference(_ reader: inout StoreByteReader, declaredEntity: NSEntityDescription?) throws
        -> NSManagedObjectID?
    {
        // A reference to the declared destination's entity names none (length 0): no string made.
        let nameLength = try reader.count(atMost: reader.remaining)
        let name = nameLength == 0 ? "" : try reader.string(length: nameLength)
        if skipsReferences {
            _ = try reader.varint()
            return nil
        }
        let entity: NSEntityDescription?
        if name.isEmpty { entity = declaredEntity } else { entity = entityNamed(name) }
        guard let entity else {
            throw reader.damaged("an object reference names entity '\(name)', which the model does not have")
        }
        let key = try reader.signed()
        if let interning { return interning.pointee.objectID(entity, key, make: makeObjectID) }
        return makeObjectID(entity, key)
    }
}
