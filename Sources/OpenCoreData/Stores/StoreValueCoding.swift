// Bytes for store values: the tagged values of history tombstones (SPEC.md §3.7), with
// the tag numbers and payloads of the row encoding (§3.2) plus tag 14.
//
//   TAG  VALUE            PAYLOAD
//    0   null             -
//    1   integer          zigzag LEB128 varint
//    2   double           8 bytes, IEEE-754 bits, little-endian
//    3   float            4 bytes, IEEE-754 bits, little-endian
//    4   boolean false    -
//    5   boolean true     -
//    6   string           varint byte length, UTF-8
//    7   decimal          varint byte length, UTF-8 of its description ("3.14")
//    8   date             8 bytes: seconds since 2001-01-01 (reference date) as a double, little-endian
//    9   binary           varint byte length, bytes
//   10   uuid             16 bytes
//   11   uri              varint byte length, UTF-8 of the absolute string
//   12   objectID         varint entity number, zigzag varint key
//   13   objectIDs        varint count, then count × (varint entity number, zigzag varint key)
//   14   unresolved       -
//
// Entity numbers index a table the enclosing format defines (the history record's
// string table, the binary store's entity table). Every length and count is checked
// against the bytes left before anything is allocated.
import Foundation

extension StoreByteWriter {
    /// A decimal's payload: its description, length-prefixed ("3.14").
    mutating func decimal(_ value: Decimal) { string(value.description) }

    /// A UUID's payload: its 16 bytes.
    mutating func uuid(_ value: UUID) { withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) } }

    /// A URI's payload: its absolute string, length-prefixed.
    mutating func url(_ value: URL) { string(value.absoluteString) }

    /// Appends `value` with its tag; `entityNumber` numbers the entity of an object ID.
    mutating func value(_ value: StoreValue, entityNumber: (NSEntityDescription) -> Int) {
        switch value {
        case .null: byte(0)
        case .integer(let number):
            byte(1)
            signed(number)
        case .double(let number):
            byte(2)
            fixed64(number.bitPattern)
        case .float(let number):
            byte(3)
            fixed32(number.bitPattern)
        case .boolean(let flag): byte(flag ? 5 : 4)
        case .string(let text):
            byte(6)
            string(text)
        case .decimal(let number):
            byte(7)
            decimal(number)
        case .date(let date):
            byte(8)
            fixed64(date.timeIntervalSinceReferenceDate.bitPattern)
        case .binary(let data):
            byte(9)
            lengthPrefixed(data)
        case .uuid(let value):
            byte(10)
            uuid(value)
        case .uri(let value):
            byte(11)
            url(value)
        case .objectID(let id):
            byte(12)
            varint(entityNumber(id.entity))
            signed(id.key)
        case .objectIDs(let ids):
            byte(13)
            varint(ids.count)
            for id in ids {
                varint(entityNumber(id.entity))
                signed(id.key)
            }
        case .unresolved: byte(14)
        }
    }
}

extension StoreByteReader {
    mutating func decimal() throws -> Decimal {
        let text = try string()
        guard let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw damaged("'\(text)' is not a decimal number")
        }
        return number
    }

    mutating func uuid() throws -> UUID {
        let raw = try take(16)
        return UUID(
            uuid: (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11],
                raw[12], raw[13], raw[14], raw[15]
            ))
    }

    mutating func url() throws -> URL {
        let text = try string()
        guard let url = URL(string: text) else { throw damaged("'\(text)' is not a URL") }
        return url
    }

    /// A tagged value; `objectID` makes the ID of (entity number, key).
    mutating func value(objectID: (Int, Int64) throws -> NSManagedObjectID) throws -> StoreValue {
        let tag = try byte()
        switch tag {
        case 0: return .null
        case 1: return .integer(try signed())
        case 2: return .double(Double(bitPattern: try fixed64()))
        case 3: return .float(Float(bitPattern: try fixed32()))
        case 4: return .boolean(false)
        case 5: return .boolean(true)
        case 6: return .string(try string())
        case 7: return .decimal(try decimal())
        case 8: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64())))
        case 9: return .binary(Data(try lengthPrefixed()))
        case 10: return .uuid(try uuid())
        case 11: return .uri(try url())
        case 12:
            let entity = try count(atMost: Int(Int32.max))
            return .objectID(try objectID(entity, try signed()))
        case 13:
            // Each ID takes at least two bytes.
            let total = try count(atMost: remaining / 2)
            var ids: [NSManagedObjectID] = []
            ids.reserveCapacity(total)
            for _ in 0..<total {
                let entity = try count(atMost: Int(Int32.max))
                ids.append(try objectID(entity, try signed()))
            }
            return .objectIDs(ids)
        case 14: return .unresolved
        default: throw damaged("unknown value tag \(tag)")
        }
    }
}
