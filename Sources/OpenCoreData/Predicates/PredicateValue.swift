// One view of the values predicates meet. Attributes arrive as Swift values (Int16,
// Double, String, Date, ...), arguments as Swift or bridged Foundation values
// (NSNumber, NSString, NSDate); the comparison rules need them in a handful of
// kinds: every number is a number whatever its width, every string a string.
import Foundation

/// A value reduced to the kind that decides how it compares.
enum PredicateValue {
    case null
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    case collection([Any?], ordered: Bool)
    case dictionary([AnyHashable: Any])
    case object(Any)

    /// `value` classified by its exact type, for the types attribute values almost always
    /// have; nil for any other. Comparing metatypes first means the one cast that follows
    /// succeeds, instead of a cascade of failing dynamic casts.
    @inline(__always)
    private static func exactType(_ value: Any) -> PredicateValue? {
        let type = ObjectIdentifier(Swift.type(of: value))
        if type == ObjectIdentifier(String.self) { return (value as? String).map(PredicateValue.string) }
        if type == ObjectIdentifier(Int16.self) { return (value as? Int16).map { .integer(Int64($0)) } }
        if type == ObjectIdentifier(Double.self) { return (value as? Double).map(PredicateValue.double) }
        if type == ObjectIdentifier(Int.self) { return (value as? Int).map { .integer(Int64($0)) } }
        if type == ObjectIdentifier(Int32.self) { return (value as? Int32).map { .integer(Int64($0)) } }
        if type == ObjectIdentifier(Int64.self) { return (value as? Int64).map(PredicateValue.integer) }
        if type == ObjectIdentifier(Bool.self) { return (value as? Bool).map { .integer($0 ? 1 : 0) } }
        return nil
    }

    /// Classifies `value`; natives are tried before bridged classes so no bridging happens for them.
    init(_ value: Any?) {
        guard let value else {
            self = .null
            return
        }
        if let exact = Self.exactType(value) {
            self = exact
            return
        }
        switch value {
        case let string as String: self = .string(string)
        case let number as Int: self = .integer(Int64(number))
        case let number as Double: self = .double(number)
        case let number as Int16: self = .integer(Int64(number))
        case let number as Int32: self = .integer(Int64(number))
        case let number as Int64: self = .integer(number)
        case let flag as Bool: self = .integer(flag ? 1 : 0)
        case let date as Date: self = .date(date)
        case let number as Float: self = .double(Double(number))
        case let number as Decimal: self = .decimal(number)
        case let number as Int8: self = .integer(Int64(number))
        case let number as UInt8: self = .integer(Int64(number))
        case let number as UInt16: self = .integer(Int64(number))
        case let number as UInt32: self = .integer(Int64(number))
        case let number as UInt:
            self = number <= UInt(Int64.max) ? .integer(Int64(number)) : .double(Double(number))
        case let number as UInt64:
            self = number <= UInt64(Int64.max) ? .integer(Int64(number)) : .double(Double(number))
        case let data as Data: self = .data(data)
        case let uuid as UUID: self = .uuid(uuid)
        case let url as URL: self = .url(url)
        case let number as NSNumber:
            let integer = number.int64Value
            let double = number.doubleValue
            self = Double(integer) == double ? .integer(integer) : .double(double)
        case is NSNull: self = .null
        default:
            // An Optional boxed in an Any is rare (arrays of Any?); unwrap it here, off the fast path.
            if let optional = value as? any OptionalUnwrapping {
                self.init(optional.unwrappedValue)
            } else if let elements = collectionElements(value) {
                let ordered = !(value is NSSet) && !(value is any SetAlgebra)
                self = .collection(elements, ordered: ordered)
            } else if let dictionary = dictionaryValue(value) {
                self = .dictionary(dictionary)
            } else {
                self = .object(value)
            }
        }
    }

    /// The number as a Double, for numbers.
    var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        case .decimal(let value): NSDecimalNumber(decimal: value).doubleValue
        default: nil
        }
    }

    var isNumber: Bool {
        switch self {
        case .integer, .double, .decimal: true
        default: false
        }
    }

    /// A short name of the kind, for error messages.
    var kindName: String {
        switch self {
        case .null: "nil"
        case .integer, .double, .decimal: "number"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .uuid: "UUID"
        case .url: "URL"
        case .collection: "collection"
        case .dictionary: "dictionary"
        case .object(let object): "\(type(of: object))"
        }
    }
}

/// Removes any level of `Optional` wrapping an `Any` may hide, and maps NSNull to nil.
func unwrapOptional(_ value: Any?) -> Any? {
    guard let value else { return nil }
    // The commonest values (a `%lld` id, a `%@` string) are told by their exact type, no
    // Optional: the cast below searches the runtime's conformances for every other type.
    if isPlainValue(value) { return value }
    if let optional = value as? any OptionalUnwrapping {
        return unwrapOptional(optional.unwrappedValue)
    }
    return value
}

/// Whether `value`'s exact type is one of the plain value types predicate arguments and
/// attribute values mostly have (no Optional among them).
@inline(__always)
private func isPlainValue(_ value: Any) -> Bool {
    let type = ObjectIdentifier(Swift.type(of: value))
    return type == ObjectIdentifier(Int64.self) || type == ObjectIdentifier(Int.self)
        || type == ObjectIdentifier(String.self) || type == ObjectIdentifier(Int32.self)
        || type == ObjectIdentifier(Int16.self) || type == ObjectIdentifier(Double.self)
        || type == ObjectIdentifier(Bool.self)
}

/// Lets `unwrapOptional` see through `Optional<T>` stored in an `Any`.
protocol OptionalUnwrapping {
    var unwrappedValue: Any? { get }
}

extension Optional: OptionalUnwrapping {
    var unwrappedValue: Any? {
        switch self {
        case .some(let wrapped): wrapped
        case .none: nil
        }
    }
}

/// The elements of an array, set or ordered set (Swift or Foundation); nil for anything else.
/// Strings, data and dictionaries are not collections here, as in key-value coding.
func collectionElements(_ value: Any?) -> [Any?]? {
    guard let value = unwrapOptional(value) else { return nil }
    switch value {
    case is String, is Data, is NSString, is NSData: return nil
    case let array as [Any]: return array.map { Optional($0) }
    case let array as NSArray: return array.map { Optional($0) }
    case let set as NSOrderedSet: return set.array.map { Optional($0) }
    case is NSDictionary: return nil
    default:
        // Swift sets (to-many relationships) before NSSet, so no bridging copy is made.
        if let collection = value as? any Collection, dictionaryValue(value) == nil {
            var elements: [Any?] = []
            elements.reserveCapacity(collection.underestimatedCount)
            for element in collection { elements.append(element) }
            return elements
        }
        if let set = value as? NSSet { return set.allObjects.map { Optional($0) } }
        return nil
    }
}

/// The entries of a Swift dictionary or an NSDictionary, for key lookups.
func dictionaryValue(_ value: Any) -> [AnyHashable: Any]? {
    if let dictionary = value as? [AnyHashable: Any] { return dictionary }
    if let dictionary = value as? NSDictionary {
        var result: [AnyHashable: Any] = [:]
        for (key, element) in dictionary {
            if let key = key as? AnyHashable { result[key] = element }
        }
        return result
    }
    return nil
}

/// Exact-type fast paths for the prepared comparisons: attribute values are nearly always a
/// native String or number, and reading them this way skips building a `PredicateValue`.
enum FastValue {
    /// The value as a String when its dynamic type is exactly `String`.
    @inline(__always)
    static func string(_ value: Any?) -> String? {
        guard let value, ObjectIdentifier(type(of: value)) == ObjectIdentifier(String.self) else { return nil }
        return value as? String
    }

    /// The value as an Int64 when its dynamic type is exactly a native signed integer type.
    @inline(__always)
    static func integer(_ value: Any?) -> Int64? {
        guard let value else { return nil }
        let type = ObjectIdentifier(Swift.type(of: value))
        if type == ObjectIdentifier(Int.self), let number = value as? Int { return Int64(number) }
        if type == ObjectIdentifier(Int16.self), let number = value as? Int16 { return Int64(number) }
        if type == ObjectIdentifier(Int32.self), let number = value as? Int32 { return Int64(number) }
        if type == ObjectIdentifier(Int64.self), let number = value as? Int64 { return number }
        return nil
    }

    /// The value as a Double when it is exactly a native integer (within ±2^53) or Double.
    @inline(__always)
    static func number(_ value: Any?) -> Double? {
        if let integer = integer(value) { return integer.magnitude < 1 << 53 ? Double(integer) : nil }
        guard let value, ObjectIdentifier(type(of: value)) == ObjectIdentifier(Double.self) else { return nil }
        return value as? Double
    }
}
