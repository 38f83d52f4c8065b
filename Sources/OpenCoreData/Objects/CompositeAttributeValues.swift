// Composite attribute values: in memory a dictionary keyed by element name, in a store
// one binary value (tag 9) holding the elements (SPEC.md §3.2 R1b):
//
//   varint  count of elements present (nil elements are left out)
//   count × (length-prefixed UTF-8 element name, tagged value of SPEC.md §3.7)
//
// in the order of `elements`; a nested composite element is a tag-9 value holding its own
// encoding. Equal values have equal bytes (uniqueness constraints rely on it). Reading
// checks every length and refuses a repeated element or a value of the wrong type; an
// element the model no longer has is skipped, so removing an element needs no rewrite.
import Foundation

extension NSCompositeAttributeDescription {
    /// `value` with each element coerced to its type: a dictionary with element names only.
    ///
    /// - Throws: `NSManagedObjectValidationError` naming the element that does not fit.
    func coercedComposite(_ value: Any) throws -> [String: Any] {
        let dictionary: [String: Any]
        if let plain = value as? [String: Any] {
            dictionary = plain
        } else if let bridged = value as? NSDictionary {
            var converted: [String: Any] = [:]
            for (key, element) in bridged {
                guard let name = key as? String else { throw mismatch("has a key \(key) that is not a String") }
                converted[name] = element
            }
            dictionary = converted
        } else {
            throw mismatch("holds a \(type(of: value)), not a dictionary keyed by element name")
        }
        var result: [String: Any] = [:]
        for (key, element) in dictionary {
            guard let description = elements.first(where: { $0.name == key }) else {
                throw mismatch(
                    "has no element '\(key)' (its elements: \(elements.map(\.name).joined(separator: ", ")))")
            }
            if element is NSNull { continue }
            if let nested = description as? NSCompositeAttributeDescription {
                result[key] = try nested.coercedComposite(element)
                continue
            }
            guard case .value(let coerced?) = description.attributeType.coerce(element) else {
                throw mismatch(
                    "element '\(key)' holds a \(type(of: element)); its type is \(description.attributeType.swiftTypeName)"
                )
            }
            result[key] = coerced
        }
        return result
    }

    private func mismatch(_ problem: String) -> NSError {
        CoreDataError.make(
            NSManagedObjectValidationError, "the composite attribute \(qualifiedName) \(problem)",
            userInfo: [NSValidationKeyErrorKey: name])
    }

    /// The stored form of a composite `value`.
    ///
    /// - Throws: `NSManagedObjectValidationError` naming the element that does not fit.
    func compositeStoreValue(_ value: Any) throws -> StoreValue {
        let dictionary = try coercedComposite(value)
        var present: [(String, StoreValue)] = []
        for element in elements {
            guard let elementValue = dictionary[element.name] else { continue }
            let stored = try element.storeValue(elementValue)
            if stored != .null { present.append((element.name, stored)) }
        }
        var writer = StoreByteWriter()
        writer.varint(present.count)
        for (name, stored) in present {
            writer.string(name)
            writer.value(stored) { _ in 0 }
        }
        return .binary(Data(writer.bytes))
    }

    /// The dictionary stored as `data`.
    ///
    /// - Throws: `NSFileReadCorruptFileError` (259) for bytes that are no composite value of this attribute.
    func compositeValue(from data: Data) throws -> [String: Any] {
        try data.withUnsafeBytes { raw in
            var reader = StoreByteReader(
                raw, what: "the composite value of \(qualifiedName)", errorCode: NSFileReadCorruptFileError)
            // Elements a later model removed may still be stored: at most one entry per
            // byte pair, so the count is bounded by the bytes, not by today's elements.
            let count = try reader.count(atMost: reader.remaining / 2)
            var result: [String: Any] = [:]
            var names: Set<String> = []
            for _ in 0..<count {
                let name = try reader.string()
                guard names.insert(name).inserted else { throw reader.damaged("the element '\(name)' twice") }
                let objectIDError = reader.damaged("an object ID in a composite value")
                let stored = try reader.value { _, _ in throw objectIDError }
                // An element the model no longer has (removed by a migration) is left out.
                guard let element = elements.first(where: { $0.name == name }) else { continue }
                let value: Any?
                if let nested = element as? NSCompositeAttributeDescription, case .binary(let bytes) = stored {
                    value = try nested.compositeValue(from: bytes)
                } else {
                    value = element.attributeValue(stored)
                }
                guard let value, case .value = element.attributeType.coerce(value) else {
                    throw reader.damaged("element '\(name)' holds a value of another type")
                }
                result[name] = value
            }
            guard reader.isAtEnd else { throw reader.damaged("bytes after the last element") }
            return result
        }
    }
}
