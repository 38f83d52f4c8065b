// Attribute values in their canonical Swift type, and their stored form.
//
// Each attribute type reads as one Swift type (see NSAttributeType). Writes accept
// what Core Data accepts through NSNumber: any integer or floating-point value that
// the attribute's type represents exactly, NSNumber, NSString, NSDate, NSData.
import Foundation

/// Outcome of fitting a value to an attribute.
enum Coerced {
    case value(Any?)
    case mismatch
}

extension NSAttributeType {
    /// `value` in this type's canonical Swift type, or `.mismatch`.
    func coerce(_ value: Any?) -> Coerced {
        guard let value else { return .value(nil) }
        switch self {
        case .integer16AttributeType:
            if let exact = value as? Int16 { return .value(exact) }
            return Self.integer(value).flatMap { Int16(exactly: $0) }.map { .value($0) } ?? .mismatch
        case .integer32AttributeType:
            if let exact = value as? Int32 { return .value(exact) }
            return Self.integer(value).flatMap { Int32(exactly: $0) }.map { .value($0) } ?? .mismatch
        case .integer64AttributeType:
            if let exact = value as? Int64 { return .value(exact) }
            return Self.integer(value).map { .value($0) } ?? .mismatch
        case .doubleAttributeType:
            if let exact = value as? Double { return .value(exact) }
            return Self.floatingPoint(value).map { .value($0) } ?? .mismatch
        case .floatAttributeType:
            if let exact = value as? Float { return .value(exact) }
            return Self.floatingPoint(value).map { .value(Float($0)) } ?? .mismatch
        case .decimalAttributeType:
            if let exact = value as? Decimal { return .value(exact) }
            if let integer = Self.integer(value) { return .value(Decimal(integer)) }
            if let double = Self.floatingPoint(value) { return .value(Decimal(double)) }
            return .mismatch
        case .booleanAttributeType:
            if let exact = value as? Bool { return .value(exact) }
            if let integer = Self.integer(value), integer == 0 || integer == 1 { return .value(integer == 1) }
            return .mismatch
        case .stringAttributeType:
            if let exact = value as? String { return .value(exact) }
            if let string = value as? NSString { return .value(string as String) }
            return .mismatch
        case .dateAttributeType:
            if let exact = value as? Date { return .value(exact) }
            if let date = value as? NSDate { return .value(date as Date) }
            return .mismatch
        case .binaryDataAttributeType:
            if let exact = value as? Data { return .value(exact) }
            if let data = value as? NSData { return .value(data as Data) }
            return .mismatch
        case .UUIDAttributeType:
            if let exact = value as? UUID { return .value(exact) }
            if let uuid = value as? NSUUID { return .value(uuid as UUID) }
            return .mismatch
        case .URIAttributeType:
            if let exact = value as? URL { return .value(exact) }
            if let url = value as? NSURL { return .value(url as URL) }
            return .mismatch
        case .objectIDAttributeType:
            return value is NSManagedObjectID ? .value(value) : .mismatch
        case .transformableAttributeType, .undefinedAttributeType:
            return .value(value)
        case .compositeAttributeType:
            // The elements are checked against the attribute's elements when stored.
            return value is [String: Any] || value is NSDictionary ? .value(value) : .mismatch
        }
    }

    /// The Swift type values of this attribute type have, when there is exactly one.
    var canonicalType: Any.Type? {
        switch self {
        case .integer16AttributeType: Int16.self
        case .integer32AttributeType: Int32.self
        case .integer64AttributeType: Int64.self
        case .decimalAttributeType: Decimal.self
        case .doubleAttributeType: Double.self
        case .floatAttributeType: Float.self
        case .stringAttributeType: String.self
        case .booleanAttributeType: Bool.self
        case .dateAttributeType: Date.self
        case .binaryDataAttributeType: Data.self
        case .UUIDAttributeType: UUID.self
        case .URIAttributeType: URL.self
        case .objectIDAttributeType, .transformableAttributeType, .undefinedAttributeType, .compositeAttributeType: nil
        }
    }

    /// The Swift type name this attribute type reads as, for error messages.
    var swiftTypeName: String {
        switch self {
        case .integer16AttributeType: "Int16"
        case .integer32AttributeType: "Int32"
        case .integer64AttributeType: "Int64"
        case .decimalAttributeType: "Decimal"
        case .doubleAttributeType: "Double"
        case .floatAttributeType: "Float"
        case .stringAttributeType: "String"
        case .booleanAttributeType: "Bool"
        case .dateAttributeType: "Date"
        case .binaryDataAttributeType: "Data"
        case .UUIDAttributeType: "UUID"
        case .URIAttributeType: "URL"
        case .objectIDAttributeType: "NSManagedObjectID"
        case .transformableAttributeType, .undefinedAttributeType: "Any"
        case .compositeAttributeType: "[String: Any]"
        }
    }

    private static func integer(_ value: Any) -> Int64? {
        switch value {
        case let number as Int: return Int64(number)
        case let number as Int64: return number
        case let number as Int32: return Int64(number)
        case let number as Int16: return Int64(number)
        case let number as Int8: return Int64(number)
        case let number as UInt: return Int64(exactly: number)
        case let number as UInt64: return Int64(exactly: number)
        case let number as UInt32: return Int64(number)
        case let number as UInt16: return Int64(number)
        case let number as UInt8: return Int64(number)
        case let number as Double: return Int64(exactly: number)
        case let number as Float: return Int64(exactly: number)
        case let number as NSNumber:
            let double = number.doubleValue
            return Int64(exactly: double) ?? (double.isNaN ? nil : number.int64Value)
        default: return nil
        }
    }

    private static func floatingPoint(_ value: Any) -> Double? {
        switch value {
        case let number as Double: return number
        case let number as Float: return Double(number)
        case let number as NSNumber: return number.doubleValue
        default: return integer(value).map(Double.init)
        }
    }
}

extension NSAttributeDescription {
    /// The stored form of `value` (already canonical for this attribute).
    ///
    /// - Throws: `NSManagedObjectValidationError` for a transformable value its transformer rejects.
    func storeValue(_ value: Any?) throws -> StoreValue {
        guard let value else { return .null }
        // One cast for the attribute's own type first: values are canonical after coercion.
        switch attributeType {
        case .integer16AttributeType: if let number = value as? Int16 { return .integer(Int64(number)) }
        case .integer32AttributeType: if let number = value as? Int32 { return .integer(Int64(number)) }
        case .integer64AttributeType: if let number = value as? Int64 { return .integer(number) }
        case .doubleAttributeType: if let number = value as? Double { return .double(number) }
        case .floatAttributeType: if let number = value as? Float { return .float(number) }
        case .booleanAttributeType: if let flag = value as? Bool { return .boolean(flag) }
        case .stringAttributeType: if let string = value as? String { return .string(string) }
        case .decimalAttributeType: if let decimal = value as? Decimal { return .decimal(decimal) }
        case .dateAttributeType: if let date = value as? Date { return .date(date) }
        case .binaryDataAttributeType: if let data = value as? Data { return .binary(data) }
        case .transformableAttributeType: return try transformableStoreValue(value)
        case .compositeAttributeType:
            guard let composite = self as? NSCompositeAttributeDescription else { break }
            return try composite.compositeStoreValue(value)
        case .UUIDAttributeType: if let uuid = value as? UUID { return .uuid(uuid) }
        case .URIAttributeType: if let url = value as? URL { return .uri(url) }
        case .objectIDAttributeType: if let id = value as? NSManagedObjectID { return .objectID(id) }
        case .undefinedAttributeType: break
        }
        if attributeType != .transformableAttributeType, attributeType != .undefinedAttributeType,
            case .value(let coerced?) = attributeType.coerce(value),
            ObjectIdentifier(type(of: coerced)) != ObjectIdentifier(type(of: value))
        {
            return try storeValue(coerced)
        }
        throw CoreDataError.make(
            NSManagedObjectValidationError,
            "attribute '\(name)' holds a \(Swift.type(of: value)), which cannot be stored as "
                + "\(attributeType.swiftTypeName)",
            userInfo: [NSValidationKeyErrorKey: name])
    }

    /// The canonical Swift value of the stored `value`.
    func attributeValue(_ value: StoreValue) -> Any? {
        switch value {
        case .null, .unresolved, .objectIDs: return nil
        case .integer(let number):
            switch attributeType {
            case .integer16AttributeType: return Int16(truncatingIfNeeded: number)
            case .integer32AttributeType: return Int32(truncatingIfNeeded: number)
            case .booleanAttributeType: return number != 0
            case .doubleAttributeType: return Double(number)
            case .floatAttributeType: return Float(number)
            case .decimalAttributeType: return Decimal(number)
            default: return number
            }
        case .double(let number): return attributeType == .floatAttributeType ? Float(number) : number
        case .float(let number): return attributeType == .doubleAttributeType ? Double(number) : number
        case .boolean(let flag): return flag
        case .string(let string): return string
        case .decimal(let decimal): return decimal
        case .date(let date): return date
        case .binary(let data):
            switch attributeType {
            case .transformableAttributeType: return transformableValue(data)
            case .compositeAttributeType:
                // Damaged bytes read as nil here; the store's checks report them.
                return (self as? NSCompositeAttributeDescription).flatMap { try? $0.compositeValue(from: data) }
            default: return data
            }
        case .uuid(let uuid): return uuid
        case .uri(let url): return url
        case .objectID(let objectID): return objectID
        }
    }
}

extension StoreValue {
    /// The stored form of `value`, already known to be of `type`'s canonical Swift type.
    /// The existential is opened once and its type compared by identity, so no cast has
    /// to unwrap an `Any` (the cost of `value as! T` on the save path).
    init?(canonical value: Any, of type: NSAttributeType) {
        guard type.canonicalType != nil, let stored = openedCanonicalStoreValue(value) else { return nil }
        self = stored
    }
}

/// `value` opened (a free function: the compiler of this toolchain crashes on
/// `_openExistential` with a closure or a static method reference).
private func openedCanonicalStoreValue(_ value: Any) -> StoreValue? {
    _openExistential(value, do: canonicalStoreValue)
}

/// `value`'s type and, when that is a canonical attribute type, its stored form: one
/// opening of the existential serves both the identity check and the conversion (a batch
/// insert's value of its attribute's own type), with no dynamic type lookup apart.
func canonicalStoreValueAndType(_ value: Any) -> (type: ObjectIdentifier, stored: StoreValue?) {
    _openExistential(value, do: typedCanonicalStoreValue)
}

private func typedCanonicalStoreValue<Value>(_ value: Value) -> (type: ObjectIdentifier, stored: StoreValue?) {
    (ObjectIdentifier(Value.self), canonicalStoreValue(value))
}

/// The stored form of a value of a canonical type, chosen by `Value` alone (each
/// canonical type belongs to one attribute type); nil for any other type.
private func canonicalStoreValue<Value>(_ value: Value) -> StoreValue? {
    if let typed = typedAttributeSlotValue(value) { return typed.attributeStoreValue }
    // Each reinterpretation below follows a check that `Value` is exactly that type.
    if Value.self == Float.self { return .float(unsafeBitCast(value, to: Float.self)) }
    if Value.self == Decimal.self { return .decimal(unsafeBitCast(value, to: Decimal.self)) }
    if Value.self == URL.self { return .uri(unsafeBitCast(value, to: URL.self)) }
    return nil
}
