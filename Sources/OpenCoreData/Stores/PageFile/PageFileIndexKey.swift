// Order-preserving keys of the page-file store (SPEC.md §3.4): primary keys, and the
// index keys (values..., primary key) whose byte order is the values' order.
//
//   value      bytes
//   nil        0x00                                     (nil sorts first)
//   number     0x10, then the Float64 of the value, sign-flipped (order-preserving 64 bits),
//              in 7-bit groups from the top, each byte `group << 1 | more`, trailing zero
//              groups left out (integers, Booleans as 0/1, doubles, dates as
//              timeIntervalSinceReferenceDate): 18 takes 3 bytes, a random double 10
//   string     0x30, NFC UTF-8 with 0x00 written 0x00 0xFF, then 0x00 0x00 (binary collation)
//   primary    h, n bytes, h: n = the key's significant bytes (0-8), h = 0x80 + n for a
//              key >= 0 and 0x7F - n below; the bytes big-endian (two's complement)
//   sequence   8 bytes: the Int64 with its sign bit flipped, big-endian (history, next-key)
import Foundation

enum PageFileKey {
    static let nullTag: UInt8 = 0x00
    static let numberTag: UInt8 = 0x10
    static let stringTag: UInt8 = 0x30

    /// The row-tree key of primary key `key` (SPEC.md §3.4 K1): byte order is numeric order,
    /// and the length byte at both ends lets an index key's suffix be read from its end.
    static func primary(_ key: Int64) -> [UInt8] {
        let magnitude = key >= 0 ? UInt64(key) : ~UInt64(bitPattern: key)
        let count = (64 - magnitude.leadingZeroBitCount + 7) / 8
        let header = key >= 0 ? UInt8(0x80 + count) : UInt8(0x7F - count)
        // One allocation of the exact size (an array literal first, then a reserve, made two).
        let bits = UInt64(bitPattern: key)
        return [UInt8](unsafeUninitializedCapacity: count + 2) { buffer, initialized in
            buffer[0] = header
            for index in 0..<count {
                buffer[1 + index] = UInt8(truncatingIfNeeded: bits >> UInt64((count - 1 - index) * 8))
            }
            buffer[count + 1] = header
            initialized = count + 2
        }
    }

    /// Calls `body` with the row-tree key of `key` (the bytes of ``primary(_:)``) in a stack
    /// buffer: no array per row on the save path.
    static func withPrimary<Result>(_ key: Int64, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
        -> Result
    {
        let magnitude = key >= 0 ? UInt64(key) : ~UInt64(bitPattern: key)
        let count = (64 - magnitude.leadingZeroBitCount + 7) / 8
        let header = key >= 0 ? UInt8(0x80 + count) : UInt8(0x7F - count)
        let bits = UInt64(bitPattern: key)
        var buffer: (UInt64, UInt64) = (0, 0)
        return try withUnsafeMutableBytes(of: &buffer) { raw in
            raw[0] = header
            for index in 0..<count {
                raw[1 + index] = UInt8(truncatingIfNeeded: bits >> UInt64((count - 1 - index) * 8))
            }
            raw[count + 1] = header
            return try body(UnsafeRawBufferPointer(rebasing: raw[0..<(count + 2)]))
        }
    }

    /// Appends the row-tree key of `key` to `bytes`.
    static func appendPrimary(_ key: Int64, to bytes: inout [UInt8]) {
        withPrimary(key) { bytes.append(contentsOf: $0) }
    }

    /// The byte length of the primary key that ends `bytes`, or nil when it is not one.
    static func primaryLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let header = bytes.last else { return nil }
        let count = header >= 0x80 ? Int(header - 0x80) : Int(0x7F - header)
        guard count <= 8, bytes.count >= count + 2, bytes[bytes.count - count - 2] == header else { return nil }
        return count + 2
    }

    /// The primary key that ends `bytes` (a row key or an index key), or nil when damaged.
    static func primaryKey(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard let length = primaryLength(bytes) else { return nil }
        return primaryKey(bytes, length: length)
    }

    /// The primary key of `length` bytes (its ``primaryLength(_:)``) ending `bytes`: a loop
    /// over indices, which a scan runs per row (iterating a slice of the buffer cost more
    /// than the rest of the key's check).
    @inline(__always)
    private static func primaryKey(_ bytes: UnsafeRawBufferPointer, length: Int) -> Int64 {
        let end = bytes.count - 1
        var value: UInt64 = bytes[end] >= 0x80 ? 0 : ~0
        var index = bytes.count - length + 1
        while index < end {
            value = value << 8 | UInt64(bytes[index])
            index += 1
        }
        return Int64(bitPattern: value)
    }

    /// The primary key of a row-tree key: nil unless `bytes` is exactly one.
    static func rowKey(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard let length = primaryLength(bytes), length == bytes.count else { return nil }
        return primaryKey(bytes, length: length)
    }

    /// Whether `bytes` is exactly one row-tree key (what a scan or a count checks of each
    /// row's key): ``primaryLength(_:)`` equal to the key's length, read inline from the
    /// key's two ends (through that call it cost a scan ~35 instructions a row).
    @inline(__always)
    static func isRowKey(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let length = bytes.count
        guard length >= 2, length <= 10, let base = bytes.baseAddress else { return false }
        let header = base.load(fromByteOffset: length &- 1, as: UInt8.self)
        let count = header >= 0x80 ? Int(header &- 0x80) : Int(0x7F &- header)
        return count &+ 2 == length && base.load(as: UInt8.self) == header
    }

    /// The fixed 8-byte key of a sequence number (history records, the next-key record).
    static func sequence(_ value: Int64) -> [UInt8] {
        let flipped = UInt64(bitPattern: value) ^ (1 << 63)
        return (0..<8).map { UInt8(truncatingIfNeeded: flipped >> UInt64(56 - $0 * 8)) }
    }

    /// The sequence number of 8 bytes written by `sequence(_:)`, or nil for another length.
    static func sequenceNumber(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count == 8 else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        return Int64(bitPattern: value ^ (1 << 63))
    }

    /// Whether index keys can order values of `type` (others are not indexed for ranges).
    static func isOrderable(_ type: NSAttributeType) -> Bool {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType, .booleanAttributeType, .dateAttributeType, .stringAttributeType:
            return true
        default:
            return false
        }
    }

    /// Appends the index form of a stored value; false when the value has no index form.
    @discardableResult
    static func append(_ value: StoreValue, to bytes: inout [UInt8]) -> Bool {
        switch value {
        case .null: bytes.append(nullTag)
        case .integer(let number): appendNumber(Double(number), to: &bytes)
        case .double(let number): appendNumber(number, to: &bytes)
        case .float(let number): appendNumber(Double(number), to: &bytes)
        case .boolean(let flag): appendNumber(flag ? 1 : 0, to: &bytes)
        case .date(let date): appendNumber(date.timeIntervalSinceReferenceDate, to: &bytes)
        case .string(let string): appendString(string, terminated: true, to: &bytes)
        default: return false
        }
        return true
    }

    static func appendNumber(_ number: Double, to bytes: inout [UInt8]) {
        bytes.append(numberTag)
        // -0.0 and 0.0 are equal values: one key.
        let bits = (number == 0 ? 0.0 : number).bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        // Ten 7-bit groups from the top (the last holds 1 bit). Trailing groups that are all
        // zeros (numbers >= 0) or all ones (negative numbers, whose order bits are
        // complemented) are left out, so whole numbers and dates stay short. The low bit of
        // each byte says whether the form ends there: 0 = ends for numbers >= 0, 1 = ends
        // for negative ones, so an ended form sorts as if its omitted groups were present.
        let negative = ordered >> 63 == 0
        let significant = negative ? ~ordered : ordered
        var groups = 10
        while groups > 1, groupOf(significant, groups - 1) == 0 { groups -= 1 }
        for group in 0..<groups {
            let last: UInt8 = group == groups - 1 ? 1 : 0
            let value = groupOf(significant, group)
            bytes.append(negative ? (0x7F - value) << 1 | last : value << 1 | (1 - last))
        }
    }

    private static func groupOf(_ bits: UInt64, _ group: Int) -> UInt8 {
        // Group g holds bits 63-7g ... 57-7g; the last group (g = 9) holds bit 0 in its top bit.
        let shift = 57 - 7 * group
        let shifted = shift >= 0 ? bits >> UInt64(shift) : bits << UInt64(-shift)
        return UInt8(truncatingIfNeeded: shifted) & 0x7F
    }

    /// The number of a key's number element (SPEC.md §3.4 K2) and the element's byte
    /// length including the tag; nil when the bytes are not a number element.
    static func number(at bytes: UnsafeRawBufferPointer) -> (value: Double, length: Int)? {
        guard bytes.first == numberTag, bytes.count > 1 else { return nil }
        let negative = bytes[1] < 0x80
        var significant: UInt64 = 0
        var index = 1
        while true {
            let group = index - 1
            guard index < bytes.count, group < 10 else { return nil }
            let byte = bytes[index]
            let value = UInt64(negative ? 0x7F - (byte >> 1) : byte >> 1)
            let shift = 57 - 7 * group
            significant |= shift >= 0 ? value << UInt64(shift) : value >> UInt64(-shift)
            index += 1
            if byte & 1 == (negative ? 1 : 0) { break }
        }
        let ordered = negative ? ~significant : significant
        let bits = ordered & (1 << 63) != 0 ? ordered & ~(1 << 63) : ~ordered
        return (Double(bitPattern: bits), index)
    }

    /// The byte length of the first element of an ordinary index key (nil, number or
    /// string), or nil when it is another kind or damaged.
    static func firstElementLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        switch bytes.first {
        case nullTag: return 1
        case numberTag: return number(at: bytes)?.length
        default: return nil
        }
    }

    /// Strings longer than this many UTF-8 bytes are cut in index keys (SPEC.md §3.4 K3).
    static let maximumStringBytes = 240

    /// Whether `string` is cut in index keys (such a key orders only its first bytes).
    static func isTruncated(_ string: String) -> Bool {
        string.precomposedStringWithCanonicalMapping.utf8.count > maximumStringBytes
    }

    static func appendString(_ string: String, terminated: Bool, to bytes: inout [UInt8]) {
        bytes.append(stringTag)
        let utf8 = Array(string.precomposedStringWithCanonicalMapping.utf8)
        for byte in utf8.prefix(maximumStringBytes) {
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
        }
        guard terminated else { return }
        // A cut string ends in 0x01: after every shorter string with the same first bytes.
        bytes.append(contentsOf: utf8.count > maximumStringBytes ? [1] : [0, 0])
    }

    /// The smallest key above every key that starts with `prefix` (nil: no such key).
    static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }
}

/// One secondary index of an entity: its tree, its fields (attributes or composite
/// elements), and whether it is unique.
struct PageFileIndex: StoreUniquenessConstraint {
    /// The index's name in the catalog (`index.<Entity>.<name>`).
    let treeName: String
    let name: String
    let fields: [StoreKeyField]
    let attributeTypes: [NSAttributeType]
    /// A unique index maps the values to the primary key; others map (values, key) to nothing.
    let isUnique: Bool
    /// A reference index (`rel.<Entity>.<to-one>`) maps (destination key, key) to nothing:
    /// the inverse to-many of the to-one in `fields[0]` reads it (SPEC.md §3.2 R1).
    var isReference = false
    /// The index's position among every index of its catalog: the writer keeps its
    /// pending entries by it, not by tree name.
    var ordinal = 0
    /// The longest values part of an index key; longer ones are cut and hashed.
    static let maximumValueBytes = 880

    /// The slots the index's key reads (a composite element's is its composite's slot).
    var slots: [Int] { fields.map(\.slot) }

    /// The index's line in the catalog record (SPEC.md §3.1): tree, kind, fields.
    var recordLine: String {
        "\(treeName)\t\(isReference ? "reference" : isUnique ? "unique" : "index")\t"
            + fields.map(\.recordText).joined(separator: ",")
    }

    /// Whether every element orders (ranges and sorts can use it), not only equality.
    var isOrdered: Bool { !isReference && attributeTypes.allSatisfy(PageFileKey.isOrderable) }

    /// The index entry key of a row's `values`, or nil when the index holds no entry for it
    /// (a unique index skips rows with a nil in the key, as SQL does).
    func key(for values: [StoreValue], primaryKey: Int64) -> [UInt8]? {
        var key = StoreByteWriter()
        key.bytes.reserveCapacity(32)
        guard appendEntryValues(of: values, to: &key) else { return nil }
        if !isUnique { PageFileKey.appendPrimary(primaryKey, to: &key.bytes) }
        return key.bytes
    }

    /// Appends the part of a row's entry key before its primary key (all of a unique
    /// entry's key) to `key`; false, with `key` perhaps partly written, when the index
    /// holds no entry for the row.
    func appendEntryValues(of values: [StoreValue], to key: inout StoreByteWriter) -> Bool {
        Self.appendEntryValues(of: values, to: &key, fields: fields, isUnique: isUnique, isReference: isReference)
    }

    /// ``appendEntryValues(of:to:)`` of an index of `fields`, `isUnique` and `isReference`:
    /// a caller holding the index only through a pointer (a deletion's walk over an entity's
    /// indexes) passes these, one array, rather than a copy of the whole index (two names
    /// and two arrays retained and released, ~250 instructions per entry).
    static func appendEntryValues(
        of values: [StoreValue], to key: inout StoreByteWriter, fields: [StoreKeyField], isUnique: Bool,
        isReference: Bool
    ) -> Bool {
        if isReference {
            guard let slot = fields.first?.slot, slot < values.count else { return false }
            switch values[slot] {
            case .objectID(let destination): PageFileKey.appendPrimary(destination.key, to: &key.bytes)
            // A row checked without its model reads references as their keys.
            case .integer(let destination): PageFileKey.appendPrimary(destination, to: &key.bytes)
            default: return false
            }
            return true
        }
        let start = key.bytes.count
        if isUnique {
            // Exact bytes: equality only, and no two distinct numbers share a key.
            guard StoreUniqueKey.appendKey(of: values, fields: fields, to: &key) else { return false }
        } else {
            for field in fields {
                let value = field.value(in: values)
                if !PageFileKey.append(value, to: &key.bytes) {
                    // Equality-only element: the value's exact row encoding, behind a tag above 0x30.
                    key.byte(0x40)
                    StoreUniqueKey.appendExact(value, to: &key)
                }
            }
        }
        let length = key.bytes.count - start
        if length > PageFileIndex.maximumValueBytes {
            // Too long for an engine key: a prefix and a 64-bit FNV-1a hash of the whole (SPEC.md §3.4 K4).
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in key.bytes[start...] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            key.bytes.removeLast(length - (PageFileIndex.maximumValueBytes - 8))
            for shift in stride(from: 56, through: 0, by: -8) {
                key.byte(UInt8(truncatingIfNeeded: hash >> UInt64(shift)))
            }
        }
        return true
    }

    /// The indexes of `entity`: `isIndexed` attributes, `indexes` (compound) and
    /// `uniquenessConstraints`, inherited ones included.
    static func indexes(of entity: NSEntityDescription) -> [PageFileIndex] {
        let layout = entity.layout
        let entityName = entity.name ?? "entity"
        var result: [PageFileIndex] = []
        var seen: Set<String> = []
        func add(_ name: String, fields: [StoreKeyField], types: [NSAttributeType], unique: Bool) {
            let signature = (unique ? "u:" : "i:") + fields.map(\.recordText).joined(separator: ",")
            guard seen.insert(signature).inserted else { return }
            let kind = unique ? "unique" : "index"
            result.append(
                PageFileIndex(
                    treeName: "\(kind).\(entityName).\(name)", name: name, fields: fields, attributeTypes: types,
                    isUnique: unique))
        }
        func add(_ name: String, _ names: [String]) {
            guard let resolved = layout.keyFields(named: names) else { return }
            add(name, fields: resolved.fields, types: resolved.attributeTypes, unique: false)
        }
        for ancestor in StoreUniqueKey.lineage(of: entity) {
            for constraint in StoreUniqueKey.declared(by: ancestor, in: layout) {
                add(constraint.name, fields: constraint.fields, types: constraint.attributeTypes, unique: true)
            }
            for index in ancestor.indexes {
                add(index.name, index.elements.compactMap { $0.property.map(entity.keyPath(ofIndexed:)) })
            }
            for property in ancestor.properties where property.isIndexed && property is NSAttributeDescription {
                add(property.name, [property.name])
            }
        }
        for case let relationship as NSRelationshipDescription in layout.properties
        where PageFileToMany.needsReferenceIndex(relationship) {
            guard let slot = layout.slotsByName[relationship.name] else { continue }
            var index = PageFileIndex(
                treeName: "rel.\(entityName).\(relationship.name)", name: relationship.name,
                fields: [StoreKeyField(slot: slot)],
                attributeTypes: [], isUnique: false)
            index.isReference = true
            result.append(index)
        }
        return result
    }
}
