// CodableValueTransformer: a transformer for a Codable type, the Swift way to keep a
// struct in a transformable attribute (Linux has no NSSecureCoding for structs).
import Foundation

/// Transforms a `Codable` value into `Data` (JSON, or a binary property list) and back.
///
/// ```swift
/// struct Address: Codable { var street: String; var city: String }
///
/// ValueTransformer.setValueTransformer(
///     CodableValueTransformer<Address>(), forName: NSValueTransformerName("AddressTransformer"))
/// // In the model: a transformable attribute with valueTransformerName "AddressTransformer".
/// ```
///
/// JSON is written with sorted keys, so equal values give equal bytes. A value of another
/// type, or bytes that do not decode, give nil here and an error naming the problem from
/// the `ThrowingValueTransformer` methods.
public final class CodableValueTransformer<Value: Codable>: ValueTransformer, ThrowingValueTransformer {
    /// The encoding of the data.
    public enum Format: Sendable {
        /// JSON with sorted keys (`JSONEncoder`).
        case json
        /// A binary property list (`PropertyListEncoder`).
        case propertyList
    }

    /// The encoding of the data.
    public let format: Format

    /// A transformer writing `format`.
    public init(format: Format = .json) {
        self.format = format
        super.init()
    }

    /// Registers a transformer for `Value` under `name`.
    public static func register(forName name: NSValueTransformerName, format: Format = .json) {
        ValueTransformer.setValueTransformer(CodableValueTransformer(format: format), forName: name)
    }

    /// `NSData`: the transformed values are data.
    public override class func transformedValueClass() -> AnyClass { NSData.self }

    /// True: data decodes back into the value.
    public override class func allowsReverseTransformation() -> Bool { true }

    /// The encoded data of a `Value`; nil for nil.
    ///
    /// - Throws: `NSCoderInvalidValueError` when `value` is not a `Value` or does not
    ///   encode.
    public func transformedValueThrowing(_ value: Any?) throws -> Any? {
        guard let typed = try input(value, as: Value.self, .coderInvalidValue, "a \(Value.self)") else { return nil }
        do {
            switch format {
            case .json:
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                return try encoder.encode(typed)
            case .propertyList:
                let encoder = PropertyListEncoder()
                encoder.outputFormat = .binary
                return try encoder.encode(typed)
            }
        } catch {
            throw problem(.coderInvalidValue, "the value does not encode (\(error))")
        }
    }

    /// The `Value` decoded from data; nil for nil.
    ///
    /// - Throws: `NSCoderReadCorruptError` when `value` is not `Data` or does not decode.
    public func reverseTransformedValueThrowing(_ value: Any?) throws -> Any? {
        guard let data = try input(value, as: Data.self, .coderReadCorrupt, "Data") else { return nil }
        do {
            switch format {
            case .json: return try JSONDecoder().decode(Value.self, from: data)
            case .propertyList: return try PropertyListDecoder().decode(Value.self, from: data)
            }
        } catch {
            throw problem(.coderReadCorrupt, "the \(data.count) bytes do not decode (\(error))")
        }
    }

    /// `value` as an `Input`; nil for nil.
    ///
    /// - Throws: `code` naming what was `expected` when `value` is not an `Input`.
    private func input<Input>(
        _ value: Any?, as _: Input.Type, _ code: CocoaError.Code, _ expected: String
    ) throws -> Input? {
        guard let value = flattenedOptional(value) else { return nil }
        guard let typed = value as? Input else {
            throw problem(code, "expects \(expected), not a \(type(of: value))")
        }
        return typed
    }

    private func problem(_ code: CocoaError.Code, _ message: String) -> NSError {
        CoreDataError.make(code.rawValue, "CodableValueTransformer<\(Value.self)>: \(message)")
    }
}
