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
        tagged(value, compact: false, declaredEntity: nil) { writer, id, _ in
            writer.varint(entityNumber(id.entity))
            writer.signed(id.key)
        }
    }

    /// Appends `value` with its tag (the tag numbers and payloads of SPEC.md §3.2).
    /// `compact` (rows and index keys) writes small integers, short strings and whole-second
    /// dates in their short forms and `.unresolved` as null; without it (history
    /// tombstones) `.unresolved` is tag 14. `reference` appends an object ID's payload,
    /// given `declaredEntity` (passed through, not captured: rows write one per value).
    mutating func tagged(
        _ value: StoreValue, compact: Bool, declaredEntity: NSEntityDescription?,
        reference: (_ writer: inout StoreByteWriter, _ id: NSManagedObjectID, _ declared: NSEntityDescription?) -> Void
    ) {
        typealias Tag = PageFileRowCodec.Tag
        switch value {
        case .null: byte(Tag.null.rawValue)
        case .unresolved: byte(compact ? Tag.null.rawValue : Tag.externalBinary.rawValue)
        case .integer(let number):
            if compact, number >= 0, number < 128 {
                byte(PageFileRowCodec.smallIntegerBase | UInt8(number))
            } else {
                byte(Tag.integer.rawValue)
                signed(number)
            }
        case .double(let number):
            byte(Tag.double.rawValue)
            fixed64(number.bitPattern)
        case .float(let number):
            byte(Tag.float.rawValue)
            fixed32(number.bitPattern)
        case .boolean(let flag): byte(flag ? Tag.booleanTrue.rawValue : Tag.booleanFalse.rawValue)
        case .string(let text):
            let count = text.utf8.count
            if compact, count < Int(PageFileRowCodec.smallIntegerBase - PageFileRowCodec.shortStringBase) {
                byte(PageFileRowCodec.shortStringBase | UInt8(count))
                utf8(text)
            } else {
                byte(Tag.string.rawValue)
                string(text)
            }
        case .decimal(let number):
            byte(Tag.decimal.rawValue)
            decimal(number)
        case .date(let date): self.date(date, compact: compact)
        case .binary(let data):
            byte(Tag.binary.rawValue)
            lengthPrefixed(data)
        case .uuid(let value):
            byte(Tag.uuid.rawValue)
            uuid(value)
        case .uri(let value):
            byte(Tag.uri.rawValue)
            url(value)
        case .objectID(let id):
            byte(Tag.objectID.rawValue)
            reference(&self, id, declaredEntity)
        case .objectIDs(let ids):
            byte(Tag.objectIDs.rawValue)
            varint(ids.count)
            for id in ids { reference(&self, id, declaredEntity) }
        }
    }

    /// A date with its tag: `compact`, a whole number of seconds that an integer holds
    /// exactly takes tag 0x10 and a zigzag varint.
    private mutating func date(_ date: Date, compact: Bool) {
        let seconds = date.timeIntervalSinceReferenceDate
        if compact, seconds.rounded(.towardZero) == seconds, seconds.magnitude < 9_007_199_254_740_992,
            seconds != 0 || seconds.sign == .plus
        {
            byte(PageFileRowCodec.Tag.wholeSecondDate.rawValue)
            signed(Int64(seconds))
        } else {
            byte(PageFileRowCodec.Tag.date.rawValue)
            fixed64(seconds.bitPattern)
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
