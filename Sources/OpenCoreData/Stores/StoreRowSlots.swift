// A fetched row decoded once, straight into the values a managed object holds.
//
// The general path decodes a stored row into StoreValues and the context then converts
// each into the object's SlotValue (StoredValueConversion.swift): two arrays, every
// string copied and released once more, per fetched object. The default store decodes
// the rows a context fills objects from straight into SlotValues instead
// (PageFileRowCodec+Slots.swift), and the context adopts them as the object's values.
//
// The slot form holds only what the general conversion gives for a row of the forms it
// takes, no source object substituted:
//
//   attribute   .null, .string, .date, .bool, .uuid (from those stored forms, any type),
//               .int16 / .int32 / .int64 (from an integer of that attribute type that
//               fits it exactly), .double (a double of a double attribute), .data (the
//               bytes of a binary data attribute)
//   to-one      .null, or .unresolved naming the one destination
//   to-many     .unresolved (a list, or none when the store computes it on demand), or
//               the empty set (array when ordered) for a stored null
//   other       .null
//
// Each case comes from exactly one stored form, so the stored values are made back
// exactly when a reader of `StoreRow.values` asks for them. A row of any other form
// (transformables, Decimal, Float, URI, a blob kept apart, a value of an unexpected
// type) is decoded by the general path; so is every row of the other stores.
import Foundation

/// A row's values in the form a managed object holds them (see the file comment).
///
/// Sendable although `SlotValue` holds classes: the attribute cases hold values, and a
/// relationship's `UnresolvedRelationship` made here has no edits, which nothing changes
/// in place (PendingToManyEdits.swift edits a copy of such a value), so sharing it is
/// sharing an immutable value.
struct StoreRowSlots: @unchecked Sendable {
    /// One value per slot of the row's entity.
    var values: SlotValues

    /// The stored values these slot values were decoded from, one per slot of `layout`.
    func storeValues(layout: EntityLayout) -> [StoreValue] {
        var result: [StoreValue] = []
        result.reserveCapacity(values.count)
        for slot in values.indices { result.append(storeValue(atSlot: slot, layout: layout)) }
        return result
    }

    /// The stored value slot `slot` was decoded from.
    func storeValue(atSlot slot: Int, layout: EntityLayout) -> StoreValue {
        guard slot < values.storage.count else { return .null }
        switch values.storage[slot] {
        case .null: return .null
        case .string(let value): return .string(value)
        case .date(let value): return .date(value)
        case .bool(let value): return .boolean(value)
        case .uuid(let value): return .uuid(value)
        case .int16(let value): return .integer(Int64(value))
        case .int32(let value): return .integer(Int64(value))
        case .int64(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .data(let value): return .binary(value)
        case .unresolved(let relationship):
            if let destination = relationship.destination { return .objectID(destination) }
            return relationship.objectIDs.map { .objectIDs($0) } ?? .unresolved
        case .objects, .orderedObjects:
            // Only an empty relationship, stored as null, reads this way here.
            return .null
        case .object(let object):
            // Not made by the decoder; kept exact should a row ever hold one.
            return .objectID(object.objectID)
        case .other(let box):
            return layout.attributeBySlot[slot].flatMap { try? $0.storeValue(box.value) } ?? .null
        }
    }
}

extension StoreRow {
    /// The stored value of slot `slot`: read from the slot form without making the others.
    func storeValue(atSlot slot: Int) -> StoreValue {
        if let slots { return slots.storeValue(atSlot: slot, layout: objectID.entity.layout) }
        let values = self.values
        return slot < values.count ? values[slot] : .null
    }
}

extension EntityLayout {
    /// The object values of `row`: its slot form as it is (taken out of `row`, so changing
    /// one slot copies nothing), else its stored values converted; a to-one `source` names
    /// holds that object, already resolved.
    func objectValues(taking row: inout StoreRow, source: ToOneSource? = nil) -> SlotValues {
        // Moved out, not copied and then cleared: no retain and release of the values, and
        // the slot a source fills is changed in place.
        guard var values = row.slots.take()?.values else {
            return objectValues(fromStored: row.values, source: source)
        }
        if let source, source.slot < values.storage.count,
            case .unresolved(let relationship) = values.storage[source.slot],
            let destination = relationship.destination,
            let object = source.destination(naming: destination)
        {
            values.storage[source.slot] = .object(object)
        }
        return values
    }
}
