// Decoding a row straight into the values a managed object holds (StoreRowSlots.swift):
// one pass over the row's tagged values (the table in PageFileRowCodec.swift), each
// slot's case chosen by its tag and the slot's conversion, no StoreValue made.
//
// The pass takes only the stored forms the slot form covers. Any other form, and any
// damage, gives up the pass: the general decode then decodes the row, so a row that
// does not fit comes out exactly as before and a damaged row throws the general
// decode's error (PageFileRowSlotDecodeTests holds both paths' objects equal).
import Foundation

extension PageFileRowCodec {
    /// The row `bytes` of `entity` under the ID `objectID` gives: decoded straight into the
    /// slot form when `intoSlots` and the row's values all take it, else into stored values.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the bytes are not a valid row.
    func row(
        _ bytes: UnsafeRawBufferPointer, entity: NSEntityDescription, intoSlots: Bool,
        objectID: () -> NSManagedObjectID
    ) throws -> StoreRow {
        if intoSlots, let decoded = try? decodeSlots(bytes, layout: entity.layout) {
            return StoreRow(objectID: objectID(), version: decoded.version, slots: decoded.slots)
        }
        let decoded = try decode(bytes, entity: entity)
        return StoreRow(objectID: objectID(), version: decoded.version, values: decoded.values)
    }

    /// The version and slot form of `bytes` for an object of `layout`'s entity; nil when a
    /// value is of a form the slot form does not take (the caller decodes the row
    /// generally). Throws for damage the general decode reports in its own words.
    func decodeSlots(_ bytes: UnsafeRawBufferPointer, layout: EntityLayout) throws
        -> (version: Int64, slots: StoreRowSlots)?
    {
        guard !skipsReferences else { return nil }
        var reader = StoreByteReader(row: bytes)
        let storedVersion = try reader.varint()
        guard storedVersion <= UInt64(StoreCounterLimit.maximum) else { return nil }
        // Read once per row, not per slot: the layout's tables are properties of a class.
        let conversions = layout.storedValueConversions
        var values: [SlotValue] = []
        // Grown here, not built in place: `Array(unsafeUninitializedCapacity:)` allocates
        // through the standard library's unspecialized path, 666 instructions a row against
        // 336 for this (object-contains-scan).
        values.reserveCapacity(conversions.count)
        while !reader.isAtEnd {
            let slot = values.count
            // More values than the entity has properties: the general decode reports it.
            guard slot < conversions.count else { return nil }
            let raw = try reader.byte()
            let value: SlotValue?
            switch conversions[slot] {
            case .attribute where raw >= PageFileRowCodec.shortStringBase && raw < PageFileRowCodec.smallIntegerBase:
                // A short string (names, most of a row's text) is read here, not through a
                // call returning an optional value: as `attributeSlot` reads it.
                value = .string(try reader.shortString(length: Int(raw - PageFileRowCodec.shortStringBase)))
            case .attribute(let type): value = try attributeSlot(raw, type: type, &reader)
            case .toOne: value = try toOneSlot(raw, declaredEntity: layout, slot: slot, &reader)
            case .toMany(let ordered):
                value = try toManySlot(raw, ordered: ordered, layout: layout, slot: slot, &reader)
            case .none: value = raw == Tag.null.rawValue ? .null : nil
            }
            guard let value else { return nil }
            values.append(value)
        }
        // A row written before the entity gained properties reads them as stored nulls do.
        while values.count < conversions.count {
            switch conversions[values.count] {
            case .toMany(let ordered): values.append(ordered ? .orderedObjects([]) : .objects([]))
            case .attribute, .toOne, .none: values.append(.null)
            }
        }
        return (Int64(storedVersion), StoreRowSlots(values: SlotValues(slots: values)))
    }

    /// An attribute's value of tag `raw` in the slot form, or nil for a form it does not take.
    @inline(__always)
    private func attributeSlot(_ raw: UInt8, type: NSAttributeType, _ reader: inout StoreByteReader) throws
        -> SlotValue?
    {
        if raw >= PageFileRowCodec.smallIntegerBase {
            return Self.integerSlot(Int64(raw - PageFileRowCodec.smallIntegerBase), type: type)
        }
        if raw >= PageFileRowCodec.shortStringBase {
            return .string(try reader.string(length: Int(raw - PageFileRowCodec.shortStringBase)))
        }
        guard let tag = Tag(rawValue: raw) else { return nil }
        switch tag {
        case .null: return .null
        case .integer: return Self.integerSlot(try reader.signed(), type: type)
        case .string: return .string(try reader.string())
        case .booleanFalse: return .bool(false)
        case .booleanTrue: return .bool(true)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed64())))
        case .wholeSecondDate: return .date(Date(timeIntervalSinceReferenceDate: Double(try reader.signed())))
        case .double:
            guard type == .doubleAttributeType else { return nil }
            return .double(Double(bitPattern: try reader.fixed64()))
        case .uuid: return .uuid(try reader.uuid())
        case .binary:
            guard type == .binaryDataAttributeType else { return nil }
            return .data(Data(try reader.lengthPrefixed()))
        case .float, .decimal, .uri, .objectID, .objectIDs, .externalBinary, .externalToMany: return nil
        }
    }

    /// An integer of an integer attribute of `type` that holds it exactly; nil otherwise.
    @inline(__always)
    private static func integerSlot(_ number: Int64, type: NSAttributeType) -> SlotValue? {
        switch type {
        case .integer64AttributeType: return .int64(number)
        case .integer32AttributeType: return Int32(exactly: number).map { .int32($0) }
        case .integer16AttributeType: return Int16(exactly: number).map { .int16($0) }
        default: return nil
        }
    }

    private func toOneSlot(
        _ raw: UInt8, declaredEntity layout: EntityLayout, slot: Int, _ reader: inout StoreByteReader
    )
        throws -> SlotValue?
    {
        if raw == Tag.null.rawValue { return .null }
        guard raw == Tag.objectID.rawValue else { return nil }
        if let named = namedToOne, let id = named.destination, reader.offset < reader.bytes.count,
            reader.bytes[reader.offset] == 0
        {
            // A batch of faults' rows name the one object the batch was made for (a company's
            // employees, their company): a reference to the declared destination with its key
            // is that object, found by the layout's destination identity (no locked read of
            // the destination entity, no ID made) — 617 instructions per row of
            // object-traverse-100k. Any other reference takes the general path below.
            var peek = reader
            peek.offset += 1
            let key = try peek.signed()
            if key == id.key, slot < layout.destinationIdentityBySlot.count,
                layout.destinationIdentityBySlot[slot] == ObjectIdentifier(id.entity)
            {
                reader = peek
                return .unresolved(named)
            }
        }
        if namedToOne == nil, let interning, reader.offset < reader.bytes.count,
            reader.bytes[reader.offset] == 0
        {
            // A reference to the declared destination (no entity name): the rows of a fetch
            // naming one object share its value, found by slot and key alone.
            reader.offset += 1
            let key = try reader.signed()
            if let shared = interning.pointee.declaredToOne(layout: layout, slot: slot, key: key) {
                return .unresolved(shared)
            }
            // No declared entity is damage the general decode reports.
            guard let declared = layout.relationshipBySlot[slot]?.destinationEntity else { return nil }
            let made = toOne(naming: interning.pointee.objectID(declared, key, make: makeObjectID))
            interning.pointee.rememberDeclaredToOne(made, layout: layout, slot: slot, key: key)
            return .unresolved(made)
        }
        let declared = layout.relationshipBySlot[slot]?.destinationEntity
        guard let id = try reference(&reader, declaredEntity: declared) else { return nil }
        return .unresolved(toOne(naming: id))
    }

    /// The stored to-one value naming `id`. The rows of one fetch or batch of faults that
    /// name the same destination (200 people of one company) share one: such a value is
    /// never changed in place (StoreRowSlots.swift), and an allocation per row, freed
    /// again when the object resolves the to-one or is reset, was one in four of a
    /// materialised object's allocations.
    @inline(__always)
    private func toOne(naming id: NSManagedObjectID) -> UnresolvedRelationship {
        if let named = namedToOne, named.destination === id { return named }
        if let interning { return interning.pointee.toOne(naming: id) }
        return UnresolvedRelationship(destination: id)
    }

    private func toManySlot(
        _ raw: UInt8, ordered: Bool, layout: EntityLayout, slot: Int, _ reader: inout StoreByteReader
    ) throws -> SlotValue? {
        if raw == Tag.null.rawValue { return ordered ? .orderedObjects([]) : .objects([]) }
        if raw == Tag.externalToMany.rawValue { return .unresolved(UnresolvedRelationship(objectIDs: nil)) }
        guard raw == Tag.objectIDs.rawValue else { return nil }
        let declared = layout.relationshipBySlot[slot]?.destinationEntity
        // Each reference takes at least two bytes.
        let count = try reader.count(atMost: reader.remaining / 2)
        var ids: [NSManagedObjectID] = []
        ids.reserveCapacity(count)
        for _ in 0..<count {
            guard let id = try reference(&reader, declaredEntity: declared) else { return nil }
            ids.append(id)
        }
        return .unresolved(UnresolvedRelationship(objectIDs: ids))
    }
}
