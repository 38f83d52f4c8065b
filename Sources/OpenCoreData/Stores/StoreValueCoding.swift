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

/// Appends little-endian integers, varints and length-prefixed bytes.
struct StoreByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Unsigned LEB128.
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func varint(_ value: Int) { varint(UInt64(max(value, 0))) }

    /// Zigzag then LEB128, so small negative numbers stay short.
    mutating func signed(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func fixed32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func lengthPrefixed(_ content: some Collection<UInt8>) {
        varint(content.count)
        bytes.append(contentsOf: content)
    }

    mutating func string(_ value: String) { lengthPrefixed(Array(value.utf8)) }

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
            string(number.description)
        case .date(let date):
            byte(8)
            fixed64(date.timeIntervalSinceReferenceDate.bitPattern)
        case .binary(let data):
            byte(9)
            lengthPrefixed(data)
        case .uuid(let uuid):
            byte(10)
            withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
        case .uri(let url):
            byte(11)
            string(url.absoluteString)
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

/// Reads what ``StoreByteWriter`` wrote, checking every bound; errors name `what`.
struct StoreByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    /// Describes the bytes in error messages ("history record 7").
    let what: String
    /// The Cocoa error code of a damaged-bytes error.
    let errorCode: Int

    init(_ bytes: [UInt8], from offset: Int = 0, what: String, errorCode: Int = NSCoreDataError) {
        self.bytes = bytes
        self.offset = offset
        self.what = what
        self.errorCode = errorCode
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    func damaged(_ problem: String) -> NSError {
        CoreDataError.make(errorCode, "\(what) is damaged: \(problem) (at byte \(offset))")
    }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw damaged("it ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            if shift == 63 && next > 1 { throw damaged("a varint overflows 64 bits") }
            result |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw damaged("a varint is too long") }
        }
    }

    /// A varint used as a count or index: at most `limit`.
    mutating func count(atMost limit: Int) throws -> Int {
        let value = try varint()
        guard value <= UInt64(max(limit, 0)) else { throw damaged("a count of \(value) exceeds its bound \(limit)") }
        return Int(value)
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func fixed64() throws -> UInt64 {
        let slice = try take(8)
        var value: UInt64 = 0
        for (index, byte) in slice.enumerated() { value |= UInt64(byte) << UInt64(index * 8) }
        return value
    }

    mutating func fixed32() throws -> UInt32 {
        let slice = try take(4)
        var value: UInt32 = 0
        for (index, byte) in slice.enumerated() { value |= UInt32(byte) << UInt32(index * 8) }
        return value
    }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw damaged("\(count) bytes expected, \(remaining) left") }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func lengthPrefixed() throws -> ArraySlice<UInt8> {
        try take(try count(atMost: remaining))
    }

    mutating func string() throws -> String {
        let slice = try lengthPrefixed()
        guard let text = String(validating: slice, as: UTF8.self) else { throw damaged("a string is not UTF-8") }
        return text
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
        case 7:
            let text = try string()
            guard let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw damaged("'\(text)' is not a decimal number")
            }
            return .decimal(number)
        case 8: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64())))
        case 9: return .binary(Data(try lengthPrefixed()))
        case 10:
            let raw = Array(try take(16))
            let uuid = UUID(
                uuid: (
                    raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11],
                    raw[12], raw[13], raw[14], raw[15]
                ))
            return .uuid(uuid)
        case 11:
            let text = try string()
            guard let url = URL(string: text) else { throw damaged("'\(text)' is not a URL") }
            return .uri(url)
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
