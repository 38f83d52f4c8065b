// A binary property list ("bplist00") writer that can write UIDs, which
// PropertyListSerialization cannot be handed from Swift; keyed archives need them.
//
//   OFFSET          SIZE   DESCRIPTION
//   0                  8   "bplist00"
//   8                  *   objects, each a marker byte and its payload:
//                            0x08 false, 0x09 true
//                            0x1n integer of 2^n bytes, big-endian (8 bytes signed;
//                                 16 bytes for values above Int64.max)
//                            0x23 double, 8 bytes big-endian
//                            0x4n data, 0x5n ASCII string, 0x6n UTF-16BE string,
//                            0xAn array, 0xDn dictionary (n = count, or 0xF and an
//                                 integer object holding the count); arrays hold
//                                 object references, dictionaries all keys then all values
//                            0x8n UID of n+1 bytes, big-endian
//   T                  *   offset table: each object's offset, offsetSize bytes each
//   end - 32          32   trailer: 6 zero bytes, offsetSize, referenceSize,
//                          object count (8), top object index (8), T (8)
//
// Equal strings are written once (every object of a keyed archive repeats "$class").
import Foundation

/// A property list value, UIDs included.
indirect enum PropertyListNode {
    case string(String)
    case integer(Int64)
    case unsignedInteger(UInt64)
    case real(Double)
    case boolean(Bool)
    case data(Data)
    case uid(UInt32)
    case array([PropertyListNode])
    case dictionary([(key: String, value: PropertyListNode)])
}

/// Writes a `PropertyListNode` as a binary property list.
enum BinaryPropertyListWriter {
    /// The binary property list of `root`.
    static func data(for root: PropertyListNode) -> Data {
        // References are sized by the object count, known only once every object has its
        // index: flatten with symbolic references, then write them at the final size.
        var flat: [FlatObject] = []
        var strings: [String: Int] = [:]
        let top = flatten(root, into: &flat, strings: &strings)
        let referenceSize = flat.count <= 0xFF ? 1 : (flat.count <= 0xFFFF ? 2 : 4)
        return assemble(flat.map { $0.bytes(referenceSize: referenceSize) }, top: top, referenceSize: referenceSize)
    }

    /// An object with its references still symbolic.
    private enum FlatObject {
        case leaf([UInt8])
        case array([Int])
        case dictionary(keys: [Int], values: [Int])

        func bytes(referenceSize: Int) -> [UInt8] {
            switch self {
            case .leaf(let bytes):
                return bytes
            case .array(let references):
                var bytes = header(0xA0, count: references.count)
                for reference in references { bytes += bigEndian(UInt64(reference), size: referenceSize) }
                return bytes
            case .dictionary(let keys, let values):
                var bytes = header(0xD0, count: keys.count)
                for reference in keys + values { bytes += bigEndian(UInt64(reference), size: referenceSize) }
                return bytes
            }
        }
    }

    /// Appends `node` (children first) and returns its index.
    private static func flatten(_ node: PropertyListNode, into flat: inout [FlatObject], strings: inout [String: Int])
        -> Int
    {
        switch node {
        case .array(let elements):
            let references = elements.map { flatten($0, into: &flat, strings: &strings) }
            flat.append(.array(references))
        case .dictionary(let entries):
            let keys = entries.map { flatten(.string($0.key), into: &flat, strings: &strings) }
            let values = entries.map { flatten($0.value, into: &flat, strings: &strings) }
            flat.append(.dictionary(keys: keys, values: values))
        case .string(let string):
            if let index = strings[string] { return index }
            flat.append(.leaf(Self.stringBytes(string)))
            strings[string] = flat.count - 1
        default:
            flat.append(.leaf(Self.leafBytes(node)))
        }
        return flat.count - 1
    }

    private static func leafBytes(_ node: PropertyListNode) -> [UInt8] {
        switch node {
        case .boolean(let flag): return [flag ? 0x09 : 0x08]
        case .integer(let number): return integerBytes(number)
        case .unsignedInteger(let number):
            if number <= UInt64(Int64.max) { return integerBytes(Int64(number)) }
            return [0x14] + [UInt8](repeating: 0, count: 8) + bigEndian(number, size: 8)
        case .real(let number): return [0x23] + bigEndian(number.bitPattern, size: 8)
        case .data(let data): return header(0x40, count: data.count) + [UInt8](data)
        case .uid(let value):
            let size = value <= 0xFF ? 1 : (value <= 0xFFFF ? 2 : 4)
            return [0x80 | UInt8(size - 1)] + bigEndian(UInt64(value), size: size)
        case .string(let string): return stringBytes(string)
        case .array, .dictionary: preconditionFailure("containers are flattened, not leaves")
        }
    }

    private static func integerBytes(_ number: Int64) -> [UInt8] {
        if number < 0 { return [0x13] + bigEndian(UInt64(bitPattern: number), size: 8) }
        if number <= 0xFF { return [0x10] + bigEndian(UInt64(number), size: 1) }
        if number <= 0xFFFF { return [0x11] + bigEndian(UInt64(number), size: 2) }
        if number <= 0xFFFF_FFFF { return [0x12] + bigEndian(UInt64(number), size: 4) }
        return [0x13] + bigEndian(UInt64(number), size: 8)
    }

    private static func stringBytes(_ string: String) -> [UInt8] {
        if string.utf8.allSatisfy({ $0 < 0x80 }) {
            return header(0x50, count: string.utf8.count) + Array(string.utf8)
        }
        let units = Array(string.utf16)
        var bytes = header(0x60, count: units.count)
        bytes.reserveCapacity(bytes.count + units.count * 2)
        for unit in units { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        return bytes
    }

    /// A marker with its count: in the low nibble, or 0xF and an integer object.
    private static func header(_ marker: UInt8, count: Int) -> [UInt8] {
        if count < 0xF { return [marker | UInt8(count)] }
        return [marker | 0x0F] + integerBytes(Int64(count))
    }

    private static func assemble(_ objects: [[UInt8]], top: Int, referenceSize: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        let offsetSize = tableOffset <= 0xFF ? 1 : (tableOffset <= 0xFFFF ? 2 : (tableOffset <= 0xFFFF_FFFF ? 4 : 8))
        for offset in offsets { bytes += bigEndian(UInt64(offset), size: offsetSize) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        bytes += bigEndian(UInt64(objects.count), size: 8)
        bytes += bigEndian(UInt64(top), size: 8)
        bytes += bigEndian(UInt64(tableOffset), size: 8)
        return Data(bytes)
    }
}

/// The low `size` bytes of `value`, most significant first.
private func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
    (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) }
}
