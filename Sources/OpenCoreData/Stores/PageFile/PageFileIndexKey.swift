// Order-preserving keys of the page-file store (SPEC.md §3.4): primary keys, and the
// index keys (values..., primary key) whose byte order is the values' order.
//
//   value      bytes
//   nil        0x00                                     (nil sorts first)
//   number     0x10, 8 bytes: Float64 of the value, sign-flipped big-endian
//              (integers, Booleans as 0/1, doubles, dates as timeIntervalSinceReferenceDate)
//   string     0x30, NFC UTF-8 with 0x00 written 0x00 0xFF, then 0x00 0x00 (binary collation)
//   primary    8 bytes: the Int64 key with its sign bit flipped, big-endian
import Foundation

enum PageFileKey {
    static let nullTag: UInt8 = 0x00
    static let numberTag: UInt8 = 0x10
    static let stringTag: UInt8 = 0x30

    /// The row-tree key of primary key `key`: byte order is numeric order.
    static func primary(_ key: Int64) -> [UInt8] {
        let flipped = UInt64(bitPattern: key) ^ (1 << 63)
        return (0..<8).map { UInt8(truncatingIfNeeded: flipped >> UInt64(56 - $0 * 8)) }
    }

    /// Calls `body` with the row-tree key of `key` in a stack buffer (no array).
    static func withPrimary<Result>(_ key: Int64, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
        -> Result
    {
        let ordered = (UInt64(bitPattern: key) ^ (1 << 63)).bigEndian
        return try withUnsafeBytes(of: ordered) { try body($0) }
    }

    /// Appends the row-tree key of `key` to `bytes`.
    static func appendPrimary(_ key: Int64, to bytes: inout [UInt8]) {
        withPrimary(key) { bytes.append(contentsOf: $0) }
    }

    /// The primary key of the last 8 bytes of `bytes`, or nil when shorter.
    static func primaryKey(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count >= 8 else { return nil }
        var value: UInt64 = 0
        for byte in bytes[(bytes.count - 8)...] { value = value << 8 | UInt64(byte) }
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
        withUnsafeBytes(of: ordered.bigEndian) { bytes.append(contentsOf: $0) }
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

/// One secondary index of an entity: its tree, its attribute slots, and whether it is unique.
struct PageFileIndex {
    /// The index's name in the catalog (`index.<Entity>.<name>`).
    let treeName: String
    let name: String
    let slots: [Int]
    let attributeTypes: [NSAttributeType]
    /// A unique index maps the values to the primary key; others map (values, key) to nothing.
    let isUnique: Bool
    /// The longest values part of an index key; longer ones are cut and hashed.
    static let maximumValueBytes = 880

    /// Whether every element orders (ranges and sorts can use it), not only equality.
    var isOrdered: Bool { attributeTypes.allSatisfy(PageFileKey.isOrderable) }

    /// The index entry key of a row's `values`, or nil when the index holds no entry for it
    /// (a unique index skips rows with a nil in the key, as SQL does).
    func key(for values: [StoreValue], primaryKey: Int64) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for slot in slots {
            let value = slot < values.count ? values[slot] : .null
            if isUnique {
                // Exact bytes: equality only, and no two distinct numbers share a key.
                if case .null = value { return nil }
                var normalized = value
                if case .string(let string) = value {
                    normalized = .string(string.precomposedStringWithCanonicalMapping)
                }
                var encoded: [UInt8] = []
                PageFileRowCodec.appendValue(&encoded, normalized, declaredEntity: nil)
                PageFileRowCodec.appendBytes(&bytes, encoded)
                continue
            }
            if !PageFileKey.append(value, to: &bytes) {
                // Equality-only element: the value's exact row encoding, behind a tag above 0x30.
                bytes.append(0x40)
                var encoded: [UInt8] = []
                PageFileRowCodec.appendValue(&encoded, value, declaredEntity: nil)
                PageFileRowCodec.appendBytes(&bytes, encoded)
            }
        }
        if bytes.count > PageFileIndex.maximumValueBytes {
            // Too long for an engine key: a prefix and a 64-bit FNV-1a hash of the whole (SPEC.md §3.4 K4).
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            bytes.removeLast(bytes.count - (PageFileIndex.maximumValueBytes - 8))
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: hash >> UInt64(shift)))
            }
        }
        if !isUnique { PageFileKey.appendPrimary(primaryKey, to: &bytes) }
        return bytes
    }

    /// The indexes of `entity`: `isIndexed` attributes, `indexes` (compound) and
    /// `uniquenessConstraints`, inherited ones included.
    static func indexes(of entity: NSEntityDescription) -> [PageFileIndex] {
        let layout = entity.layout
        let entityName = entity.name ?? "entity"
        var result: [PageFileIndex] = []
        var seen: Set<String> = []
        func add(_ name: String, _ names: [String], unique: Bool) {
            var slots: [Int] = []
            var types: [NSAttributeType] = []
            for propertyName in names {
                guard let slot = layout.slotsByName[propertyName], let attribute = layout.attributeBySlot[slot] else {
                    return
                }
                slots.append(slot)
                types.append(attribute.attributeType)
            }
            guard !slots.isEmpty else { return }
            let signature = (unique ? "u:" : "i:") + slots.map(String.init).joined(separator: ",")
            guard seen.insert(signature).inserted else { return }
            let kind = unique ? "unique" : "index"
            result.append(
                PageFileIndex(
                    treeName: "\(kind).\(entityName).\(name)", name: name, slots: slots, attributeTypes: types,
                    isUnique: unique))
        }
        var chain: [NSEntityDescription] = []
        var current: NSEntityDescription? = entity
        while let candidate = current {
            chain.insert(candidate, at: 0)
            current = candidate.superentity
        }
        for ancestor in chain {
            for constraint in ancestor.uniquenessConstraints {
                let names = constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                add(names.joined(separator: "+"), names, unique: true)
            }
            for index in ancestor.indexes {
                add(index.name, index.elements.compactMap(\.propertyName), unique: false)
            }
            for property in ancestor.properties where property.isIndexed && property is NSAttributeDescription {
                add(property.name, [property.name], unique: false)
            }
        }
        return result
    }
}
