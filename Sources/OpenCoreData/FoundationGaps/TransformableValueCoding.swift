// How a transformable attribute's value becomes bytes in a store and back, as Core Data
// does it:
//   - no transformer name (nil or empty): the value is a keyed archive made with secure
//     coding and NSSecureUnarchiveFromDataTransformer's default classes (property-list
//     values, URLs, UUIDs, NSNull);
//   - a name: the transformer registered under it. An unarchiving transformer
//     (NSSecureUnarchiveFromDataTransformer and its subclasses, NSKeyedUnarchiveFromData,
//     NSUnarchiveFromData) turns data into values, so it runs in reverse to store;
//     any other transformer must turn the value into Data with transformedValue(_:) and
//     allow reverse transformation to read it back;
//   - nil is stored as nil; the transformer is not asked.
// Failures are errors naming the transformer and the problem, never a trap:
//   NSManagedObjectValidationError (1550)  the value does not become data
//   NSCoreDataError (134060)               no transformer under the name, or one that
//                                          cannot read back (no reverse transformation)
//   NSCoderReadCorruptError (4864)          the stored bytes do not become a value
// A transformer conforming to ThrowingValueTransformer reports its own reason, kept under
// NSUnderlyingErrorKey.
import Foundation

/// The encoding of transformable attribute values that stores use.
///
/// ```swift
/// let data = try TransformableValueCoding.encode(["Swift", "Core Data"], transformerName: nil)
/// let skills = try TransformableValueCoding.decode(data, transformerName: nil) as? [String]
/// ```
public enum TransformableValueCoding {
    /// The bytes to store for `value`, or nil for nil.
    ///
    /// - Parameters:
    ///   - value: The attribute's value.
    ///   - transformerName: The attribute's `valueTransformerName` (nil or empty: the
    ///     default secure archiving).
    /// - Throws: `NSManagedObjectValidationError` when the value does not become data,
    ///   `NSCoreDataError` when no transformer is registered under the name.
    public static func encode(_ value: Any?, transformerName: String?) throws -> Data? {
        guard let value = flattenedOptional(value) else { return nil }
        let (transformer, label) = try resolve(transformerName)
        let transformed = try run(
            transformer, reverse: isUnarchiving(transformer), on: value, label: label,
            code: NSManagedObjectValidationError)
        guard let transformed else {
            throw CoreDataError.make(
                NSManagedObjectValidationError, "\(label) returned nil for a \(type(of: value)), so it cannot be stored"
            )
        }
        guard let data = transformed as? Data else {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "\(label) turned a \(type(of: value)) into a \(type(of: transformed)), not Data, so it cannot be stored"
            )
        }
        return data
    }

    /// The value stored as `data`, or nil for nil.
    ///
    /// - Parameters:
    ///   - data: The stored bytes.
    ///   - transformerName: The attribute's `valueTransformerName` (nil or empty: the
    ///     default secure archiving).
    /// - Throws: `NSCoderReadCorruptError` when the bytes do not become a value,
    ///   `NSCoreDataError` when no transformer is registered under the name or it does
    ///   not allow reverse transformation.
    public static func decode(_ data: Data?, transformerName: String?) throws -> Any? {
        guard let data else { return nil }
        let (transformer, label) = try resolve(transformerName)
        let code = CocoaError.Code.coderReadCorrupt.rawValue
        let unarchiving = isUnarchiving(transformer)
        guard unarchiving || type(of: transformer).allowsReverseTransformation() else {
            throw CoreDataError.make(
                NSCoreDataError, "\(label) does not allow reverse transformation, so stored data cannot be read")
        }
        let value = try run(transformer, reverse: !unarchiving, on: data, label: label, code: code)
        guard let value = flattenedOptional(value) else {
            throw CoreDataError.make(code, "\(label) could not turn the stored \(data.count) bytes back into a value")
        }
        return value
    }

    /// The transformer for `name` and how messages call it.
    private static func resolve(_ name: String?) throws -> (ValueTransformer, String) {
        guard let name, !name.isEmpty else {
            return (NSSecureUnarchiveFromDataTransformer(), "the default transformer (secure keyed archiving)")
        }
        guard let transformer = ValueTransformer(forName: NSValueTransformerName(rawValue: name)) else {
            throw CoreDataError.make(
                NSCoreDataError,
                "no ValueTransformer is registered under the name '\(name)': register it with "
                    + "ValueTransformer.setValueTransformer(_:forName:) before using the store")
        }
        return (transformer, "ValueTransformer '\(name)' (\(type(of: transformer)))")
    }

    /// True for transformers that turn data into values, which Core Data runs in reverse.
    private static func isUnarchiving(_ transformer: ValueTransformer) -> Bool {
        transformer is NSSecureUnarchiveFromDataTransformer || transformer is KeyedUnarchiveFromDataTransformer
    }

    /// The transformer's output for `input`, forward or in reverse; a thrown error is
    /// wrapped as `code` naming the transformer.
    private static func run(
        _ transformer: ValueTransformer, reverse: Bool, on input: Any, label: String, code: Int
    ) throws -> Any? {
        guard let throwing = transformer as? ThrowingValueTransformer else {
            return reverse ? transformer.reverseTransformedValue(input) : transformer.transformedValue(input)
        }
        do {
            return try reverse
                ? throwing.reverseTransformedValueThrowing(input) : throwing.transformedValueThrowing(input)
        } catch {
            throw CoreDataError.make(
                code, "\(label) failed on a \(type(of: input)): \((error as NSError).localizedDescription)",
                userInfo: [NSUnderlyingErrorKey: error])
        }
    }
}
