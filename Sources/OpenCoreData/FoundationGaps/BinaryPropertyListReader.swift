// A bounds-checked reader of binary property lists ("bplist00"; layout in
// BinaryPropertyListWriter.swift), for keyed archives read from stores.
// swift-corelibs-foundation's PropertyListSerialization crashes in Swift's dynamic cast
// while bridging some damaged lists (a set where a dictionary was), so stored bytes are
// parsed here and never handed to it unchecked. Rules:
//   (1) header "bplist00"; trailer sizes 1, 2, 4 or 8; object count at least 1; the top
//       object and every offset inside the file; the offset table between the objects
//       and the trailer;
//   (2) every length and count is checked against the bytes left before it is used;
//   (3) only what keyed archives use is read: booleans, integers (1 to 16 bytes, the
//       16-byte form only below 2^64), reals, data, ASCII and UTF-16 strings, UIDs up to
//       2^32 - 1, arrays, and dictionaries with string keys;
//   (4) nesting is at most 32 deep (a reference cycle is refused by it), and a list that
//       expands, through shared references, to more nodes than 8 per byte is refused.
import Foundation

enum BinaryPropertyListReader {
    private static let maximumNesting = 32

    /// The property list in `data`.
    ///
    /// - Throws: `NSCoderReadCorruptError` naming the first rule the bytes break.
    static func parse(_ data: Data) throws -> PropertyListNode {
        var parser = try Parser([UInt8](data))
        return try parser.object(parser.topObject, depth: 0)
    }

    private struct Parser {
        let bytes: [UInt8]
        let offsets: [Int]
        let referenceSize: Int
        let topObject: Int
        let objectsEnd: Int
        var budget: Int

        init(_ bytes: [UInt8]) throws {
            self.bytes = bytes
            guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
                throw corrupt("the bytes are not a binary property list")
            }
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(referenceSize) else {
                throw corrupt("the trailer's integer sizes are invalid")
            }
            let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
            let top = Self.unsigned(bytes, at: trailer + 16, size: 8)
            let tableOffset = Self.unsigned(bytes, at: trailer + 24, size: 8)
            guard count >= 1, count <= UInt64(trailer), top < count, tableOffset >= 9, tableOffset <= UInt64(trailer),
                count * UInt64(offsetSize) <= UInt64(trailer) - tableOffset
            else { throw corrupt("the trailer's object count, top object or offset table is out of range") }
            objectsEnd = Int(tableOffset)
            offsets = try (0..<Int(count)).map { index in
                let offset = Self.unsigned(bytes, at: Int(tableOffset) + index * offsetSize, size: offsetSize)
                guard offset >= 8, offset < tableOffset else {
                    throw corrupt("object \(index) lies outside the objects")
                }
                return Int(offset)
            }
            topObject = Int(top)
            budget = bytes.count * 8 + 64
        }

        mutating func object(_ index: Int, depth: Int) throws -> PropertyListNode {
            guard depth <= BinaryPropertyListReader.maximumNesting else {
                throw corrupt("the property list nests more than \(BinaryPropertyListReader.maximumNesting) deep")
            }
            budget -= 1
            guard budget >= 0 else { throw corrupt("the property list's shared references expand beyond its size") }
            var position = offsets[index]
            let marker = bytes[position]
            position += 1
            let low = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0 where marker == 0x08 || marker == 0x09:
                return .boolean(marker == 0x09)
            case 0x1:
                return try integer(size: 1 << low, at: position)
            case 0x2 where low == 2 || low == 3:
                try require(1 << low, at: position)
                let bits = Self.unsigned(bytes, at: position, size: 1 << low)
                return .real(low == 2 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits))
            case 0x4:
                let (length, start) = try count(low, at: position)
                try require(length, at: start)
                return .data(Data(bytes[start..<start + length]))
            case 0x5:
                let (length, start) = try count(low, at: position)
                try require(length, at: start)
                return .string(
                    String(String.UnicodeScalarView(bytes[start..<start + length].map { Unicode.Scalar($0) })))
            case 0x6:
                let (length, start) = try count(low, at: position)
                try require(length * 2, at: start)
                let units = (0..<length).map { UInt16(bytes[start + $0 * 2]) << 8 | UInt16(bytes[start + $0 * 2 + 1]) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8 where [1, 2, 4].contains(low + 1):
                try require(low + 1, at: position)
                return .uid(UInt32(Self.unsigned(bytes, at: position, size: low + 1)))
            case 0xA:
                let references = try self.references(low, at: position, groups: 1)
                return .array(try references.map { try object($0, depth: depth + 1) })
            case 0xD:
                let references = try self.references(low, at: position, groups: 2)
                let half = references.count / 2
                var entries: [(key: String, value: PropertyListNode)] = []
                entries.reserveCapacity(half)
                for entry in 0..<half {
                    guard case .string(let key) = try object(references[entry], depth: depth + 1) else {
                        throw corrupt("a dictionary key is not a string")
                    }
                    entries.append((key, try object(references[half + entry], depth: depth + 1)))
                }
                return .dictionary(entries)
            default:
                throw corrupt(
                    "object \(index) has marker 0x\(String(marker, radix: 16)), which keyed archives do not use")
            }
        }

        private func integer(size: Int, at position: Int) throws -> PropertyListNode {
            guard [1, 2, 4, 8, 16].contains(size) else { throw corrupt("an integer has \(size) bytes") }
            try require(size, at: position)
            if size == 16 {
                guard Self.unsigned(bytes, at: position, size: 8) == 0 else {
                    throw corrupt("a 16-byte integer does not fit 64 bits")
                }
                return .unsignedInteger(Self.unsigned(bytes, at: position + 8, size: 8))
            }
            let value = Self.unsigned(bytes, at: position, size: size)
            return size == 8 ? .integer(Int64(bitPattern: value)) : .integer(Int64(value))
        }

        /// A length from the marker's low nibble, or from the integer object after it.
        private func count(_ low: Int, at position: Int) throws -> (count: Int, start: Int) {
            guard low == 0x0F else { return (low, position) }
            try require(1, at: position)
            let marker = bytes[position]
            let size = 1 << Int(marker & 0x0F)
            guard marker >> 4 == 0x1, size <= 8 else { throw corrupt("a length is not an integer") }
            try require(size, at: position + 1)
            let value = Self.unsigned(bytes, at: position + 1, size: size)
            guard value <= UInt64(objectsEnd) else { throw corrupt("a length exceeds the file") }
            return (Int(value), position + 1 + size)
        }

        private func references(_ low: Int, at position: Int, groups: Int) throws -> [Int] {
            let (count, start) = try self.count(low, at: position)
            try require(count * groups * referenceSize, at: start)
            return try (0..<count * groups).map { item in
                let reference = Self.unsigned(bytes, at: start + item * referenceSize, size: referenceSize)
                guard reference < UInt64(offsets.count) else { throw corrupt("a reference is out of range") }
                return Int(reference)
            }
        }

        /// Rule 2: `length` bytes from `position` lie before the offset table.
        private func require(_ length: Int, at position: Int) throws {
            guard length >= 0, position <= objectsEnd, length <= objectsEnd - position else {
                throw corrupt("an object runs past the end of the objects")
            }
        }

        static func unsigned(_ bytes: [UInt8], at position: Int, size: Int) -> UInt64 {
            bytes[position..<position + size].reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    private static func corrupt(_ message: String) -> NSError {
        KeyedArchiveFormat.corrupt("binary property list: \(message)")
    }
}
