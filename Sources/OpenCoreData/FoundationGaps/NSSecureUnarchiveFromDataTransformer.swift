// NSSecureUnarchiveFromDataTransformer: keyed archives read with secure coding, the
// transformer Core Data recommends for transformable attributes (and uses here when an
// attribute names none, with the default classes).
import Foundation

/// Transforms keyed-archive data into an object of an allowed class
/// (`transformedValue(_:)`) and an object into keyed-archive data
/// (`reverseTransformedValue(_:)`), with secure coding: Foundation's
/// `NSSecureUnarchiveFromDataTransformer`.
///
/// The default classes are NSArray, NSDictionary, NSSet, NSString, NSNumber, NSDate,
/// NSData, NSURL, NSUUID and NSNull, and the Swift values that bridge to them (`[String]`,
/// `[String: Any]`, `Date`, `URL`, ...). Subclass it to allow your own `NSSecureCoding`
/// classes (top-level classes: Linux finds classes by name only at the top level):
///
/// ```swift
/// final class Coordinate: NSObject, NSSecureCoding { ... }
///
/// final class CoordinateTransformer: NSSecureUnarchiveFromDataTransformer {
///     static let name = NSValueTransformerName(rawValue: "CoordinateTransformer")
///     override static var allowedTopLevelClasses: [AnyClass] { [Coordinate.self, NSArray.self] }
/// }
/// ValueTransformer.setValueTransformer(CoordinateTransformer(), forName: CoordinateTransformer.name)
/// ```
///
/// Damaged bytes, a class outside the allowed ones or a value that cannot be archived
/// give nil here and an error naming the problem from the `ThrowingValueTransformer`
/// methods; they never stop the program. Core Data (and `TransformableValueCoding`) uses
/// this transformer in reverse: `reverseTransformedValue(_:)` makes the stored data.
open class NSSecureUnarchiveFromDataTransformer: ValueTransformer, ThrowingValueTransformer {
    /// The classes an archive's root object (and the members of its arrays, dictionaries
    /// and sets) may belong to, subclasses included.
    open class var allowedTopLevelClasses: [AnyClass] {
        [
            NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self,
            NSURL.self, NSUUID.self, NSNull.self,
        ]
    }

    /// True: archiving is the reverse of unarchiving.
    open override class func allowsReverseTransformation() -> Bool { true }

    /// The object unarchived from `value` (keyed-archive `Data`); nil for nil.
    ///
    /// - Throws: `NSCoderReadCorruptError` for bytes that are not a keyed archive or hold
    ///   a class outside `allowedTopLevelClasses`; `NSCoderInvalidValueError` when `value`
    ///   is not `Data`.
    open func transformedValueThrowing(_ value: Any?) throws -> Any? {
        guard let value = flattenedOptional(value) else { return nil }
        guard let data = value as? Data else {
            throw KeyedArchiveFormat.invalidValue("unarchiving expects Data, not a \(type(of: value))")
        }
        return try KeyedArchiveCoding.unarchive(
            data, allowedClasses: type(of: self).allowedTopLevelClasses, secure: true)
    }

    /// The keyed-archive `Data` of `value`; nil for nil.
    ///
    /// - Throws: `NSCoderInvalidValueError` for a value that cannot be archived or is not
    ///   of an allowed class.
    open func reverseTransformedValueThrowing(_ value: Any?) throws -> Any? {
        guard let value = flattenedOptional(value) else { return nil }
        return try KeyedArchiveCoding.archive(
            value, allowedClasses: type(of: self).allowedTopLevelClasses, secure: true)
    }
}
