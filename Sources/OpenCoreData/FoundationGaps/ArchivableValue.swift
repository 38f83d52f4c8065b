// What a keyed archive can hold, checked before anything is archived: Foundation's
// archiver stops the process on a value it cannot encode (a Swift struct, a Decimal), so
// a value is converted here first and refused with an error naming its type.
//
// Property-list values and their Foundation counterparts (strings, numbers, booleans,
// data, dates, URLs, UUIDs, NSNull, arrays, dictionaries and sets of them) become
// ArchivableValues; your own NSCoding classes are encoded here, by their
// encode(with:) into a KeyedArchiveEncoder. KeyedArchiveWriter writes the result. nil
// inside a collection becomes NSNull, as Swift's bridging makes it. Dictionary entries
// and set elements are sorted, so equal values archive to equal bytes.
import Foundation

/// A value checked for archiving.
indirect enum ArchivableValue {
    case null
    case string(String)
    case number(NSNumber)
    case data(Data)
    case date(Date)
    case url(URL)
    case uuid(UUID)
    case array([ArchivableValue])
    case set([ArchivableValue])
    case dictionary([(key: ArchivableValue, value: ArchivableValue)])
    /// An instance of one of your NSCoding classes: its class name, the names of its
    /// class and superclasses, and the fields its encode(with:) wrote.
    case codedObject(className: String, classChain: [String], fields: [(key: String, value: CodedField)])

    /// `value`, checked: every value the decoder checks against the allowed classes (the
    /// root and the members of arrays, dictionaries and sets) must be a kind of one of
    /// `allowed` (nil: any class), and with `secure`, your classes must support secure
    /// coding.
    ///
    /// - Throws: `NSCoderInvalidValueError` naming the value that cannot be archived.
    static func make(
        _ value: Any, allowed: [AnyClass]?, secure: Bool, depth: Int = 1, path: Set<ObjectIdentifier> = []
    ) throws -> ArchivableValue {
        guard depth <= KeyedArchiveFormat.maximumDepth else {
            throw KeyedArchiveFormat.invalidValue(
                "the value nests more than \(KeyedArchiveFormat.maximumDepth) levels deep")
        }
        let (converted, foundationClass): (ArchivableValue, AnyClass) = try convert(
            value, allowed: allowed, secure: secure, depth: depth, path: path)
        if let allowed, !KeyedArchiveFormat.isClass(foundationClass, allowedBy: allowed) {
            throw KeyedArchiveFormat.invalidValue(
                "a value of class \(NSStringFromClass(foundationClass)) is not among the allowed classes "
                    + "(\(KeyedArchiveFormat.names(allowed)))")
        }
        return converted
    }

    private static func convert(
        _ value: Any, allowed: [AnyClass]?, secure: Bool, depth: Int, path: Set<ObjectIdentifier>
    ) throws -> (ArchivableValue, AnyClass) {
        func member(_ element: Any) throws -> ArchivableValue {
            try make(element, allowed: allowed, secure: secure, depth: depth + 1, path: path)
        }
        guard let value = flattenedOptional(value), !(value is NSNull) else { return (.null, NSNull.self) }
        switch value {
        case is Decimal:
            throw KeyedArchiveFormat.invalidValue(
                "a Decimal cannot be archived (Foundation on Linux has no archivable NSDecimalNumber); "
                    + "store its description or a Double")
        case let string as String: return (.string(string), NSString.self)
        case let substring as Substring: return (.string(String(substring)), NSString.self)
        case let number as NSNumber: return (.number(number), NSNumber.self)
        case let date as Date: return (.date(date), NSDate.self)
        case let data as Data: return (.data(data), NSData.self)
        case let url as URL: return (.url(url), NSURL.self)
        case let uuid as UUID: return (.uuid(uuid), NSUUID.self)
        case let set as Set<AnyHashable>:
            let members = try set.map { try member($0.base) }
            return (.set(members.sorted { $0.sortKey < $1.sortKey }), NSSet.self)
        case let dictionary as [AnyHashable: Any]:
            var entries: [(key: ArchivableValue, value: ArchivableValue)] = []
            for (key, element) in dictionary {
                let archivedKey = try member(key.base)
                guard archivedKey.isHashableKey else {
                    throw KeyedArchiveFormat.invalidValue(
                        "a dictionary key must be a string, number, date, data, URL, UUID or NSNull, not \(type(of: key.base))"
                    )
                }
                entries.append((archivedKey, try member(element)))
            }
            return (.dictionary(entries.sorted { $0.key.sortKey < $1.key.sortKey }), NSDictionary.self)
        case let array as [Any]:
            return (.array(try array.map(member)), NSArray.self)
        case let object as NSObject & NSCoding:
            return (try encoded(object, secure: secure, depth: depth, path: path), type(of: object))
        default:
            throw KeyedArchiveFormat.invalidValue(
                "a \(type(of: value)) cannot be archived: archives hold property-list values and NSSecureCoding "
                    + "classes (for a Codable type, use CodableValueTransformer)")
        }
    }

    /// One of your objects, encoded by its encode(with:).
    private static func encoded(
        _ object: NSObject & NSCoding, secure: Bool, depth: Int, path: Set<ObjectIdentifier>
    ) throws -> ArchivableValue {
        let className = NSStringFromClass(type(of: object))
        guard className.contains(".") else {
            throw KeyedArchiveFormat.invalidValue(
                "Foundation's \(className) is not archived by this library (only property-list classes, "
                    + "NSURL, NSUUID, NSNull and your own NSCoding classes)")
        }
        if secure {
            guard let secureType = type(of: object) as? NSSecureCoding.Type, secureType.supportsSecureCoding else {
                throw KeyedArchiveFormat.invalidValue("\(className) does not support secure coding")
            }
        }
        let identity = ObjectIdentifier(object)
        guard !path.contains(identity) else {
            throw KeyedArchiveFormat.invalidValue(
                "a \(className) contains itself (encode a back reference with encodeConditionalObject(_:forKey:))")
        }
        let encoder = KeyedArchiveEncoder(secure: secure, depth: depth, path: path.union([identity]))
        object.encode(with: encoder)
        if let failure = encoder.failure { throw failure }
        var chain: [String] = []
        var current: AnyClass? = type(of: object)
        while let type = current {
            chain.append(NSStringFromClass(type))
            current = _getSuperclass(type)
        }
        return .codedObject(className: className, classChain: chain, fields: encoder.fields)
    }

    /// True when the value decodes as a Swift dictionary key or set element.
    var isHashableKey: Bool {
        switch self {
        case .array, .set, .dictionary: false
        default: true
        }
    }

    /// An order for dictionary keys and set members that does not depend on hashing.
    var sortKey: String {
        switch self {
        case .null: "0"
        case .string(let string): "1" + string
        case .number(let number): "2" + number.description
        case .data(let data): "3" + data.base64EncodedString()
        case .date(let date): "4\(date.timeIntervalSinceReferenceDate)"
        case .url(let url): "5" + url.absoluteString
        case .uuid(let uuid): "6" + uuid.uuidString
        case .array, .set, .dictionary, .codedObject: "7"
        }
    }
}
