// Stored rows to slot values, on the path every fetched object takes when it loads.
//
// The general conversion (NSManagedObject.objectValues(from:)) looks up each slot's
// property and reads the attribute's type through its class for every value of every
// object. A layout decides once, per slot, what the slot holds and of which type, so
// filling a fetched object is one switch per slot. The result is the general
// conversion's, value for value and type for type (StoredValueConversionTests holds
// the two together); rare stored forms go through the general attribute conversion.
import Foundation

/// How one slot's stored value becomes the object's value (decided once per layout).
enum StoredValueConversion {
    /// An attribute of the given type (only the type: a trivial payload costs no
    /// reference counting per slot; the rare stored forms look the attribute up).
    case attribute(NSAttributeType)
    /// A to-one relationship.
    case toOne
    /// A to-many relationship; ordered ones read as arrays when empty.
    case toMany(ordered: Bool)
    /// Neither an attribute nor a relationship: always nil.
    case none

    /// The conversion for `property`.
    init(_ property: NSPropertyDescription) {
        if let attribute = property as? NSAttributeDescription {
            self = .attribute(attribute.attributeType)
        } else if let relationship = property as? NSRelationshipDescription {
            self = relationship.isToMany ? .toMany(ordered: relationship.isOrdered) : .toOne
        } else {
            self = .none
        }
    }
}

extension EntityLayout {
    /// The object values of `stored`, one per slot (a missing stored value reads as null);
    /// a to-one `source` names holds that object, already resolved.
    func objectValues(fromStored stored: [StoreValue], source: ToOneSource? = nil) -> SlotValues {
        var result: [SlotValue] = []
        result.reserveCapacity(storedValueConversions.count)
        for slot in storedValueConversions.indices {
            let value = slot < stored.count ? stored[slot] : .null
            switch storedValueConversions[slot] {
            case .attribute(let type):
                switch value {
                case .string(let string): result.append(.string(string))
                case .date(let date): result.append(.date(date))
                case .null: result.append(.null)
                case .boolean(let flag): result.append(.bool(flag))
                case .integer(let number) where type == .integer16AttributeType:
                    result.append(.int16(Int16(truncatingIfNeeded: number)))
                case .integer(let number) where type == .integer32AttributeType:
                    result.append(.int32(Int32(truncatingIfNeeded: number)))
                case .integer(let number) where type == .integer64AttributeType: result.append(.int64(number))
                case .integer(let number) where type == .booleanAttributeType: result.append(.bool(number != 0))
                case .double(let number) where type == .doubleAttributeType: result.append(.double(number))
                default:
                    result.append(
                        SlotValue(slot < attributeBySlot.count ? attributeBySlot[slot]?.attributeValue(value) : nil))
                }
            case .toOne:
                if let source, source.slot == slot, let destination = source.destination(named: value) {
                    result.append(.object(destination))
                } else {
                    result.append(Self.relationshipValue(value, empty: .null))
                }
            case .toMany(let ordered):
                result.append(Self.relationshipValue(value, empty: ordered ? .orderedObjects([]) : .objects([])))
            case .none:
                result.append(.null)
            }
        }
        return SlotValues(slots: result)
    }

    /// A relationship's value: destinations still to resolve, or `empty` when it has none.
    private static func relationshipValue(_ value: StoreValue, empty: SlotValue) -> SlotValue {
        switch value {
        case .objectID(let id): return .unresolved(UnresolvedRelationship(destination: id))
        case .objectIDs(let ids): return .unresolved(UnresolvedRelationship(objectIDs: ids))
        case .unresolved: return .unresolved(UnresolvedRelationship(objectIDs: nil))
        default: return empty
        }
    }
}
