// The transformers Foundation registers under its standard names (except the secure
// unarchiver, which is public): negate a boolean, test for nil, and keyed unarchiving
// that accepts any NSCoding class.
import Foundation

/// `value` with every level of Optional removed; nil for an empty Optional at any level
/// (an `Any?` can hold an empty `String?`).
func flattenedOptional(_ value: Any?) -> Any? {
    guard let value else { return nil }
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    return flattenedOptional(mirror.children.first?.value)
}

/// NSNegateBoolean: true for false or nil, false for true; its own reverse.
final class NegateBooleanTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSNumber.self }

    override class func allowsReverseTransformation() -> Bool { true }

    /// The negated boolean as an `NSNumber`; nil for a value that is not a boolean, a
    /// number or a string (Foundation raises an exception there).
    override func transformedValue(_ value: Any?) -> Any? {
        guard let value = flattenedOptional(value) else { return NSNumber(value: true) }
        switch value {
        case let number as NSNumber: return NSNumber(value: !number.boolValue)
        case let string as String: return NSNumber(value: !NSString(string: string).boolValue)
        default: return nil
        }
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        transformedValue(value)
    }
}

/// NSIsNil: true (as an `NSNumber`) when the value is nil. Not reversible.
final class IsNilTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSNumber.self }

    override class func allowsReverseTransformation() -> Bool { false }

    override func transformedValue(_ value: Any?) -> Any? {
        NSNumber(value: flattenedOptional(value) == nil)
    }
}

/// NSIsNotNil: true (as an `NSNumber`) when the value is not nil. Not reversible.
final class IsNotNilTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSNumber.self }

    override class func allowsReverseTransformation() -> Bool { false }

    override func transformedValue(_ value: Any?) -> Any? {
        NSNumber(value: flattenedOptional(value) != nil)
    }
}

/// NSKeyedUnarchiveFromData (and NSUnarchiveFromData): keyed-archive data into an object
/// of any NSCoding class, and back. Foundation classes are limited to those
/// `NSSecureUnarchiveFromDataTransformer` accepts by default (KeyedArchiveValidator).
final class KeyedUnarchiveFromDataTransformer: ValueTransformer, ThrowingValueTransformer {
    override class func allowsReverseTransformation() -> Bool { true }

    func transformedValueThrowing(_ value: Any?) throws -> Any? {
        guard let value = flattenedOptional(value) else { return nil }
        guard let data = value as? Data else {
            throw KeyedArchiveFormat.invalidValue("unarchiving expects Data, not a \(type(of: value))")
        }
        return try KeyedArchiveCoding.unarchive(data, allowedClasses: nil, secure: false)
    }

    func reverseTransformedValueThrowing(_ value: Any?) throws -> Any? {
        guard let value = flattenedOptional(value) else { return nil }
        return try KeyedArchiveCoding.archive(value, allowedClasses: nil, secure: false)
    }
}
