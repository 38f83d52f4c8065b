// Transformable attribute values between objects and stores. Stores hold a transformable
// value as bytes (`StoreValue.binary`); the attribute's transformer (TransformableValueCoding:
// the named one, or secure keyed archiving of property-list values) runs when a value
// becomes a store value (save, a child context, conflict checks) and when stored bytes
// become an object's value (fault firing, fetch).
//
// Failures never trap:
//   - a value the transformer rejects, or turns into something other than Data, is a
//     save error naming the entity and attribute (the transformer's code: 1550, or
//     134060 when no transformer is registered under the name);
//   - stored bytes the transformer cannot read fail the fetch that loads them (4864,
//     naming the attribute). Read by a path that cannot throw (a fault fired by a
//     property access), the value reads as nil, readValue(forKey:) throws the error,
//     and the bytes stay in the object untouched, so saving the object writes them back
//     as they were: no data is lost to a value that could not be read.
import Foundation

/// Stored transformable bytes its transformer could not turn back into a value.
struct UndecodableTransformableValue: CustomStringConvertible {
    /// The stored bytes, written back unchanged if the object is saved.
    let data: Data
    /// Why they could not be read.
    let error: NSError

    var description: String { "\(data.count) stored bytes that do not decode (\(error.code))" }
}

extension NSAttributeDescription {
    /// The entity and attribute, as messages name them.
    var qualifiedName: String { "\(entity?.name ?? "entity").\(name)" }

    /// The stored form of a transformable attribute's `value`: its transformer's bytes.
    ///
    /// - Throws: the transformer's error, naming this attribute.
    func transformableStoreValue(_ value: Any) throws -> StoreValue {
        if let undecodable = value as? UndecodableTransformableValue { return .binary(undecodable.data) }
        do {
            guard let data = try TransformableValueCoding.encode(value, transformerName: valueTransformerName) else {
                return .null
            }
            return .binary(data)
        } catch let error as NSError {
            throw CoreDataError.make(
                error.code,
                "the transformable attribute \(qualifiedName) cannot be stored: \(error.localizedDescription)",
                userInfo: [NSValidationKeyErrorKey: name, NSUnderlyingErrorKey: error])
        }
    }

    /// The value stored as `data`, decoded by this attribute's transformer.
    ///
    /// - Throws: `NSCoderReadCorruptError` (4864) or `NSCoreDataError` naming this attribute.
    func decodedTransformableValue(_ data: Data) throws -> Any? {
        do {
            return try TransformableValueCoding.decode(data, transformerName: valueTransformerName)
        } catch let error as NSError {
            throw CoreDataError.make(
                error.code,
                "the stored value of the transformable attribute \(qualifiedName) cannot be read: "
                    + error.localizedDescription,
                userInfo: [NSValidationKeyErrorKey: name, NSUnderlyingErrorKey: error])
        }
    }

    /// The value stored as `data`, or an ``UndecodableTransformableValue`` holding them
    /// when they do not decode (for paths that cannot throw).
    func transformableValue(_ data: Data) -> Any? {
        do {
            return try decodedTransformableValue(data)
        } catch {
            return UndecodableTransformableValue(data: data, error: error as NSError)
        }
    }
}

extension NSManagedObjectContext {
    /// Decodes the transformable values of the rows `candidates` will load from, so a
    /// fetch fails on stored bytes its transformers cannot read.
    ///
    /// - Throws: the first decoding error, naming the attribute.
    func checkTransformableValues(_ candidates: [FetchCandidate]) throws {
        for candidate in candidates {
            // A row in the slot form holds no transformable's bytes: they keep it in stored form.
            guard let row = candidate.row, row.slots == nil else { continue }
            let layout = row.objectID.entity.layout
            for slot in layout.transformableSlots where slot < row.values.count {
                guard case .binary(let data) = row.values[slot], let attribute = layout.attributeBySlot[slot] else {
                    continue
                }
                if candidate.object.map({ !$0.isFault }) == true { continue }
                _ = try attribute.decodedTransformableValue(data)
            }
        }
    }
}
