// Store metadata as bytes (SPEC.md §4 "Metadata"): a dictionary of property-list
// values — strings, numbers, Booleans, data, dates, arrays and dictionaries — with
// keys sorted so equal metadata gives equal bytes.
//
//   TAG  VALUE       PAYLOAD
//    0   string      varint byte length, UTF-8
//    1   integer     zigzag varint
//    2   double      8 bytes, IEEE-754 bits, little-endian
//    3   false       -
//    4   true        -
//    5   data        varint byte length, bytes
//    6   date        8 bytes: seconds since 1970, IEEE-754 double
//    7   array       varint count, values
//    8   dictionary  varint count, count × (varint length + UTF-8 key, value), keys sorted
import Foundation

/// Encodes and decodes store metadata dictionaries.
enum StoreMetadataCoding {
    /// Nesting deeper than this is refused (a hostile file cannot recurse without bound).
    static let maximumDepth = 32

    /// Appends `metadata` as a dictionary value.
    ///
    /// - Throws: `NSPersistentStoreSaveError` naming a key whose value is not a property-list type.
    static func encode(_ metadata: [String: Any], into writer: inout StoreByteWriter) throws {
        try encodeValue(metadata, path: "metadata", depth: 0, into: &writer)
    }

    private static func encodeValue(_ value: Any, path: String, depth: Int, into writer: inout StoreByteWriter) throws {
        guard depth < maximumDepth else {
            throw CoreDataError.make(NSPersistentStoreSaveError, "\(path) nests deeper than \(maximumDepth) levels")
        }
        switch value {
        case let text as String:
            writer.byte(0)
            writer.string(text)
        case let flag as Bool where type(of: value) == Bool.self:
            writer.byte(flag ? 4 : 3)
        case let number as NSNumber where !(value is Int) && !(value is Double):
            let kind = String(cString: number.objCType)
            if kind == "c" || kind == "B" {
                writer.byte(number.boolValue ? 4 : 3)
            } else if kind == "d" || kind == "f" {
                writer.byte(2)
                writer.fixed64(number.doubleValue.bitPattern)
            } else {
                writer.byte(1)
                writer.signed(number.int64Value)
            }
        case let number as any BinaryInteger:
            guard let exact = Int64(exactly: number) else {
                throw CoreDataError.make(NSPersistentStoreSaveError, "\(path): the integer \(number) exceeds 64 bits")
            }
            writer.byte(1)
            writer.signed(exact)
        case let number as Double:
            writer.byte(2)
            writer.fixed64(number.bitPattern)
        case let number as Float:
            writer.byte(2)
            writer.fixed64(Double(number).bitPattern)
        case let data as Data:
            writer.byte(5)
            writer.lengthPrefixed(data)
        case let date as Date:
            writer.byte(6)
            writer.fixed64(date.timeIntervalSince1970.bitPattern)
        case let array as [Any]:
            writer.byte(7)
            writer.varint(array.count)
            for (index, element) in array.enumerated() {
                try encodeValue(element, path: "\(path)[\(index)]", depth: depth + 1, into: &writer)
            }
        case let dictionary as [String: Any]:
            writer.byte(8)
            writer.varint(dictionary.count)
            for key in dictionary.keys.sorted() {
                writer.string(key)
                // The key comes from the sorted keys of the same dictionary.
                try encodeValue(dictionary[key] as Any, path: "\(path)[\(key)]", depth: depth + 1, into: &writer)
            }
        default:
            throw CoreDataError.make(
                NSPersistentStoreSaveError,
                "\(path) holds a \(type(of: value)), which store metadata cannot save "
                    + "(use strings, numbers, Booleans, data, dates, arrays and dictionaries)")
        }
    }

    /// Reads a metadata dictionary written by ``encode(_:into:)``.
    ///
    /// - Throws: the reader's damaged-bytes error.
    static func decode(from reader: inout StoreByteReader) throws -> [String: Any] {
        guard let dictionary = try decodeValue(from: &reader, depth: 0) as? [String: Any] else {
            throw reader.damaged("the metadata is not a dictionary")
        }
        return dictionary
    }

    private static func decodeValue(from reader: inout StoreByteReader, depth: Int) throws -> Any {
        guard depth < maximumDepth else { throw reader.damaged("metadata nests deeper than \(maximumDepth) levels") }
        let tag = try reader.byte()
        switch tag {
        case 0: return try reader.string()
        case 1: return Int(truncatingIfNeeded: try reader.signed())
        case 2: return Double(bitPattern: try reader.fixed64())
        case 3: return false
        case 4: return true
        case 5: return Data(try reader.lengthPrefixed())
        case 6: return Date(timeIntervalSince1970: Double(bitPattern: try reader.fixed64()))
        case 7:
            let count = try reader.count(atMost: reader.remaining)
            var array: [Any] = []
            array.reserveCapacity(count)
            for _ in 0..<count { array.append(try decodeValue(from: &reader, depth: depth + 1)) }
            return array
        case 8:
            // Each entry takes at least a key length byte and a tag byte.
            let count = try reader.count(atMost: reader.remaining / 2)
            var dictionary: [String: Any] = [:]
            dictionary.reserveCapacity(count)
            for _ in 0..<count {
                let key = try reader.string()
                dictionary[key] = try decodeValue(from: &reader, depth: depth + 1)
            }
            return dictionary
        default:
            throw reader.damaged("unknown metadata value tag \(tag)")
        }
    }
}
