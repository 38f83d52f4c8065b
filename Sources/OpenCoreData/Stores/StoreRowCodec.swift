// A row's bytes (SPEC.md §3.2 "Row encoding"): its version and one tagged value per
// property slot (StoreValueCoding.swift). The key and entity are not part of the
// row: the enclosing format stores them (a tree key, a binary store row header).
//
//   FIELD        ENCODING
//   version      zigzag varint
//   slot count   varint N (must equal the entity's property count when decoded)
//   values       N tagged values, slot order
import Foundation

/// Encodes and decodes the values of store rows.
enum StoreRowCodec {
    /// Appends the version and values of `row`; `entityNumber` numbers the entities of
    /// its object IDs.
    static func encode(_ row: StoreRow, into writer: inout StoreByteWriter, entityNumber: (NSEntityDescription) -> Int)
    {
        writer.signed(row.version)
        writer.varint(row.values.count)
        for value in row.values { writer.value(value, entityNumber: entityNumber) }
    }

    /// Reads the row of `objectID` written by ``encode(_:into:entityNumber:)``.
    ///
    /// - Throws: the reader's damaged-bytes error when the bytes are malformed or the slot
    ///   count differs from the entity's property count.
    static func decode(
        _ objectID: NSManagedObjectID, from reader: inout StoreByteReader,
        objectID makeID: (Int, Int64) throws -> NSManagedObjectID
    ) throws -> StoreRow {
        let version = try reader.signed()
        let expected = objectID.entity.layout.properties.count
        let count = try reader.count(atMost: reader.remaining)
        guard count == expected else {
            throw reader.damaged(
                "a row of \(objectID.entity.name ?? "an entity") has \(count) values, the entity has \(expected) properties"
            )
        }
        var values: [StoreValue] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try reader.value(objectID: makeID)) }
        return StoreRow(objectID: objectID, version: version, values: values)
    }
}
