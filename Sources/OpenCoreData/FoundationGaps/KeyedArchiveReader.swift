// Reads a checked keyed archive that holds only standard classes, without
// NSKeyedUnarchiver (whose decoders trust the archive); KeyedArchiveClassCheck has
// checked the classes. Values come back as Swift
// values: String, NSNumber (for numbers and booleans: it casts to Int, Double, Bool...),
// Data, Date, URL, UUID, NSNull, [Any], [AnyHashable: Any] and Set<AnyHashable>.
import Foundation

/// Decodes the values of a `KeyedArchiveTable` that holds only standard classes.
struct KeyedArchiveReader {
    private let table: KeyedArchiveTable

    /// The root value of `table`.
    ///
    /// - Throws: `NSCoderReadCorruptError` for a value that does not decode.
    static func rootValue(of table: KeyedArchiveTable) throws -> Any {
        try KeyedArchiveReader(table: table).value(at: table.root)
    }

    private func value(at index: Int) throws -> Any {
        switch table.entries[index] {
        case .string(let string): return string
        case .number(let number): return number
        case .data(let data): return data
        case .null, .classDescription:
            throw KeyedArchiveFormat.corrupt("entry \(index) is not a value")
        case .object(let className, let fields):
            return try decodeObject(className, fields, at: index)
        }
    }

    private func decodeObject(_ className: String, _ fields: [String: Any], at index: Int) throws -> Any {
        switch className {
        case "NSArray", "NSMutableArray":
            return try table.references(fields, "NS.objects").map(value(at:))
        case "NSSet", "NSMutableSet":
            return Set(try table.references(fields, "NS.objects").map { try hashable(value(at: $0), in: index) })
        case "NSDictionary", "NSMutableDictionary":
            let keys = try table.references(fields, "NS.keys").map { try hashable(value(at: $0), in: index) }
            let values = try table.references(fields, "NS.objects").map(value(at:))
            return Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last })
        case "NSString", "NSMutableString":
            return fields["NS.string"] as? String ?? ""
        case "NSDate":
            return Date(timeIntervalSinceReferenceDate: (fields["NS.time"] as? NSNumber)?.doubleValue ?? 0)
        case "NSData", "NSMutableData":
            return fields["NS.data"] as? Data ?? Data()
        case "NSUUID":
            guard let bytes = fields["NS.uuidbytes"] as? Data, bytes.count == 16 else {
                throw KeyedArchiveFormat.corrupt("NSUUID object \(index) has no 16 bytes")
            }
            return UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
        case "NSURL":
            return try url(fields, at: index)
        case "NSNull":
            return NSNull()
        default:
            throw KeyedArchiveFormat.corrupt("object \(index) is a \(className), which this reader does not decode")
        }
    }

    private func url(_ fields: [String: Any], at index: Int) throws -> URL {
        var base: URL?
        if let baseIndex = table.reference(fields, "NS.base"), case .object(_, let baseFields) = table.entries[baseIndex] {
            base = try url(baseFields, at: baseIndex)
        }
        let relative: String?
        switch table.reference(fields, "NS.relative").map({ table.entries[$0] }) {
        case .string(let string)?: relative = string
        case .object(_, let stringFields)?: relative = stringFields["NS.string"] as? String
        default: relative = nil
        }
        guard let relative, let url = URL(string: relative, relativeTo: base) else {
            throw KeyedArchiveFormat.corrupt("NSURL object \(index) does not hold a valid URL")
        }
        return url
    }

    private func hashable(_ value: Any, in index: Int) throws -> AnyHashable {
        guard let key = value as? AnyHashable, !(value is [Any]), !(value is [AnyHashable: Any]) else {
            throw KeyedArchiveFormat.corrupt(
                "object \(index) uses a \(type(of: value)) as a dictionary key or set member, which Swift cannot hash")
        }
        return key
    }
}
