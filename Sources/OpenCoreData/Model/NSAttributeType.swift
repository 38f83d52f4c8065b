// The kinds of attribute a model can declare and the rules that govern deletion,
// with Core Data's names and raw values so ported code and model files line up.
import Foundation

/// The type of an attribute's value.
///
/// Each case reads and writes one Swift type: integers as `Int16`/`Int32`/`Int64`,
/// `.decimalAttributeType` as `Decimal`, `.doubleAttributeType` as `Double`,
/// `.floatAttributeType` as `Float`, strings as `String`, booleans as `Bool`, dates as
/// `Date`, binary data as `Data`, `.UUIDAttributeType` as `UUID`, `.URIAttributeType` as
/// `URL`, `.objectIDAttributeType` as `NSManagedObjectID`, `.compositeAttributeType` as
/// `[String: Any]` keyed by element name. A transformable attribute holds any value; its
/// value transformer turns it into `Data` for the store.
public enum NSAttributeType: UInt, Sendable, CaseIterable {
    /// No type yet.
    case undefinedAttributeType = 0
    /// A 16-bit signed integer (`Int16`).
    case integer16AttributeType = 100
    /// A 32-bit signed integer (`Int32`).
    case integer32AttributeType = 200
    /// A 64-bit signed integer (`Int64`).
    case integer64AttributeType = 300
    /// A decimal number (`Decimal`).
    case decimalAttributeType = 400
    /// A double-precision number (`Double`).
    case doubleAttributeType = 500
    /// A single-precision number (`Float`).
    case floatAttributeType = 600
    /// A string (`String`).
    case stringAttributeType = 700
    /// A Boolean (`Bool`).
    case booleanAttributeType = 800
    /// A date (`Date`).
    case dateAttributeType = 900
    /// Bytes (`Data`).
    case binaryDataAttributeType = 1000
    /// A universally unique identifier (`UUID`).
    case UUIDAttributeType = 1100
    /// A URL (`URL`).
    case URIAttributeType = 1200
    /// Any value, stored through a value transformer.
    case transformableAttributeType = 1800
    /// The ID of another managed object (`NSManagedObjectID`).
    case objectIDAttributeType = 2000
    /// A composite value (`[String: Any]` keyed by element name): the type of an
    /// ``NSCompositeAttributeDescription``.
    case compositeAttributeType = 2100
}

/// What happens to a relationship's destinations when its source object is deleted.
public enum NSDeleteRule: UInt, Sendable, CaseIterable {
    /// Nothing: the destinations keep pointing at the deleted object (you maintain them).
    case noActionDeleteRule = 0
    /// The destinations' inverse relationship no longer contains the deleted object.
    case nullifyDeleteRule = 1
    /// The destinations are deleted too.
    case cascadeDeleteRule = 2
    /// The deletion fails validation (error 1600) while any destination remains.
    case denyDeleteRule = 3
}
