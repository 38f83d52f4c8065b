// Decodes a checked keyed archive: the standard classes here, your NSCoding classes
// through their init(coder:) with this decoder as the coder. Foundation's
// NSKeyedUnarchiver is not used: it calls fatalError for a refused class under secure
// coding, its NSDictionary decoder reads freed memory when a key or value fails to
// decode, and it cannot be subclassed outside Foundation.
//
// Classes follow the secure unarchiver's rules: the root, the members of arrays,
// dictionaries and sets, and each object your decoder asks for with
// decodeObject(of:forKey:) must be a kind of the classes allowed there (a plain string
// counts as NSString, a number as NSNumber, data as NSData); your classes must exist in
// the program (top-level classes: NSClassFromString finds only those), conform to
// NSCoding and, under secure coding, support it. A failure is recorded as the coder's
// error (decodingFailurePolicy is setErrorAndReturn): later decodes answer nil, and the
// archive's decoding throws it.
//
// Values come back as Swift values: String, NSNumber (numbers and booleans; it casts to
// Int, Double, Bool...), Data, Date, URL, UUID, NSNull, [Any], [AnyHashable: Any] and
// Set<AnyHashable>; typed requests such as decodeObject(of: NSArray.self, forKey:)
// bridge them.
import Foundation

final class KeyedArchiveDecoder: NSCoder {
    private let table: KeyedArchiveTable
    private let secure: Bool
    /// The fields of the objects being decoded, innermost last.
    private var contexts: [[String: PropertyListNode]] = []
    /// The classes allowed where each object being decoded was asked for.
    private var allowedStack: [[AnyClass]?] = []
    /// Your objects already decoded: a shared reference gives one instance.
    private var decodedObjects: [Int: Any] = [:]
    private var recordedError: Error?

    private init(table: KeyedArchiveTable, secure: Bool) {
        self.table = table
        self.secure = secure
        super.init()
    }

    /// The root value of `table`.
    ///
    /// - Parameters:
    ///   - allowed: The classes the root may belong to (nil: any).
    ///   - secure: Whether your classes must support secure coding.
    /// - Throws: `NSCoderReadCorruptError` naming the first failure.
    static func rootValue(of table: KeyedArchiveTable, allowed: [AnyClass]?, secure: Bool) throws -> Any {
        let decoder = KeyedArchiveDecoder(table: table, secure: secure)
        let root = try decoder.value(at: table.root, allowed: allowed)
        if let error = decoder.recordedError { throw error }
        guard let root else { throw KeyedArchiveFormat.corrupt("the root object is $null") }
        return root
    }

    // MARK: Values

    private func value(at index: Int, allowed: [AnyClass]?) throws -> Any? {
        switch table.entries[index] {
        case .null:
            return nil
        case .classDescription:
            throw KeyedArchiveFormat.corrupt("entry \(index) is a class description, not a value")
        case .string(let string):
            try check(NSString.self, "NSString", allowed: allowed)
            return string
        case .number(let number):
            try check(NSNumber.self, "NSNumber", allowed: allowed)
            return number
        case .data(let data):
            try check(NSData.self, "NSData", allowed: allowed)
            return data
        case .object(let className, let fields):
            if let standard = KeyedArchiveFormat.standardClasses[className] {
                try check(standard, className, allowed: allowed)
                return try standardObject(className, fields, at: index, allowed: allowed)
            }
            return try yourObject(className, fields, at: index, allowed: allowed)
        }
    }

    private func check(_ candidate: AnyClass, _ name: String, allowed: [AnyClass]?) throws {
        guard let allowed, !KeyedArchiveFormat.isClass(candidate, allowedBy: allowed) else { return }
        throw KeyedArchiveFormat.corrupt(
            "the archive holds a \(name) where only \(KeyedArchiveFormat.names(allowed)) are allowed")
    }

    private func member(_ index: Int, allowed: [AnyClass]?, of owner: Int) throws -> Any {
        guard let member = try value(at: index, allowed: allowed) else {
            throw KeyedArchiveFormat.corrupt("object \(owner) holds $null as a member")
        }
        return member
    }

    private func members(_ fields: [String: PropertyListNode], _ key: String, allowed: [AnyClass]?, of owner: Int)
        throws -> [Any]
    {
        try table.references(fields, key).map { try member($0, allowed: allowed, of: owner) }
    }

    private func standardObject(
        _ className: String, _ fields: [String: PropertyListNode], at index: Int, allowed: [AnyClass]?
    ) throws -> Any {
        switch className {
        case "NSArray", "NSMutableArray":
            return try members(fields, "NS.objects", allowed: allowed, of: index)
        case "NSSet", "NSMutableSet":
            return Set(
                try members(fields, "NS.objects", allowed: allowed, of: index).map { try hashable($0, in: index) })
        case "NSDictionary", "NSMutableDictionary":
            let keys = try members(fields, "NS.keys", allowed: allowed, of: index).map { try hashable($0, in: index) }
            let values = try members(fields, "NS.objects", allowed: allowed, of: index)
            return Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last })
        case "NSString", "NSMutableString":
            if case .string(let string)? = fields["NS.string"] { return string }
        case "NSDate":
            if let time = fields["NS.time"]?.timeInterval { return Date(timeIntervalSinceReferenceDate: time) }
        case "NSData", "NSMutableData":
            if case .data(let data)? = fields["NS.data"] { return data }
        case "NSUUID":
            if case .data(let bytes)? = fields["NS.uuidbytes"], bytes.count == 16 {
                return UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
            }
        case "NSURL":
            return try url(fields, at: index)
        case "NSNull":
            return NSNull()
        default:
            break
        }
        throw KeyedArchiveFormat.corrupt("\(className) object \(index) does not hold its value")
    }

    private func url(_ fields: [String: PropertyListNode], at index: Int) throws -> URL {
        var base: URL?
        if let baseIndex = table.reference(fields, "NS.base"),
            case .object(_, let baseFields) = table.entries[baseIndex]
        {
            base = try url(baseFields, at: baseIndex)
        }
        var relative: String?
        switch table.reference(fields, "NS.relative").map({ table.entries[$0] }) {
        case .string(let string)?: relative = string
        case .object(_, let stringFields)?:
            if case .string(let string)? = stringFields["NS.string"] { relative = string }
        default: break
        }
        guard let relative, let url = URL(string: relative, relativeTo: base) else {
            throw KeyedArchiveFormat.corrupt("NSURL object \(index) does not hold a valid URL")
        }
        return url
    }

    private func hashable(_ value: Any, in index: Int) throws -> AnyHashable {
        guard !(value is [Any]), !(value is [AnyHashable: Any]), let key = value as? AnyHashable else {
            throw KeyedArchiveFormat.corrupt(
                "object \(index) uses a \(type(of: value)) as a dictionary key or set member, which Swift cannot hash")
        }
        return key
    }

    private func yourObject(
        _ className: String, _ fields: [String: PropertyListNode], at index: Int, allowed: [AnyClass]?
    ) throws -> Any {
        let type: AnyClass = try yourClass(className)
        try check(type, className, allowed: allowed)
        if let decoded = decodedObjects[index] { return decoded }
        contexts.append(fields)
        allowedStack.append(allowed)
        defer {
            contexts.removeLast()
            allowedStack.removeLast()
        }
        guard let codingType = type as? NSCoding.Type, let object = codingType.init(coder: self) else {
            throw recordedError ?? KeyedArchiveFormat.corrupt("\(className).init(coder:) failed for object \(index)")
        }
        decodedObjects[index] = object
        return object
    }

    /// The class named `className`, checked: it exists, codes, and supports secure coding
    /// when required.
    private func yourClass(_ className: String) throws -> AnyClass {
        guard let type = NSKeyedUnarchiver.class(forClassName: className) ?? NSClassFromString(className) else {
            throw KeyedArchiveFormat.corrupt(
                "the archive holds a \(className), a class this program does not have (is it a top-level class?)")
        }
        guard type is NSCoding.Type else {
            throw KeyedArchiveFormat.corrupt("the archive holds a \(className), which does not conform to NSCoding")
        }
        if secure {
            guard let secureType = type as? NSSecureCoding.Type, secureType.supportsSecureCoding else {
                throw KeyedArchiveFormat.corrupt(
                    "the archive holds a \(className), which does not support secure coding")
            }
        }
        return type
    }

    // MARK: NSCoder, for your classes' init(coder:)

    override var allowsKeyedCoding: Bool { true }

    override var requiresSecureCoding: Bool { secure }

    override var allowedClasses: [AnyClass]? { allowedStack.last ?? nil }

    override var decodingFailurePolicy: NSCoder.DecodingFailurePolicy { .setErrorAndReturn }

    override var error: Error? { recordedError }

    override func failWithError(_ error: Error) {
        if recordedError == nil { recordedError = error }
    }

    /// The field `key` of the object being decoded.
    private func field(_ key: String) -> PropertyListNode? {
        contexts.last?[KeyedArchiveFormat.escaped(key)]
    }

    override func containsValue(forKey key: String) -> Bool {
        field(key) != nil
    }

    override func decodeObject(forKey key: String) -> Any? {
        decodeObject(of: allowedClasses, forKey: key)
    }

    override func decodeObject(of classes: [AnyClass]?, forKey key: String) -> Any? {
        guard recordedError == nil, let node = field(key) else { return nil }
        guard let index = node.uidIndex else {
            failWithError(KeyedArchiveFormat.corrupt("the field \(key) is not an object reference"))
            return nil
        }
        do {
            return try value(at: index, allowed: secure ? classes : nil)
        } catch {
            failWithError(error)
            return nil
        }
    }

    override func decodeObject<DecodedObjectType: NSObject & NSCoding>(
        of cls: DecodedObjectType.Type, forKey key: String
    ) -> DecodedObjectType? {
        decodeObject(of: [cls], forKey: key) as? DecodedObjectType
    }

    override func decodePropertyList(forKey key: String) -> Any? {
        decodeObject(
            of: [NSArray.self, NSDictionary.self, NSString.self, NSNumber.self, NSDate.self, NSData.self], forKey: key)
    }

    override func decodeBool(forKey key: String) -> Bool {
        switch field(key) {
        case .boolean(let flag)?: flag
        case .integer(let number)?: number != 0
        default: false
        }
    }

    override func decodeInt64(forKey key: String) -> Int64 {
        switch field(key) {
        case .integer(let number)?: number
        case .unsignedInteger(let number)?: Int64(clamping: number)
        case .boolean(let flag)?: flag ? 1 : 0
        case .real(let number)?: Int64(exactly: number.rounded(.towardZero)) ?? 0
        default: 0
        }
    }

    override func decodeInt32(forKey key: String) -> Int32 { Int32(clamping: decodeInt64(forKey: key)) }

    override func decodeCInt(forKey key: String) -> Int32 { decodeInt32(forKey: key) }

    override func decodeInteger(forKey key: String) -> Int { Int(clamping: decodeInt64(forKey: key)) }

    override func decodeDouble(forKey key: String) -> Double {
        switch field(key) {
        case .real(let number)?: number
        case .integer(let number)?: Double(number)
        case .unsignedInteger(let number)?: Double(number)
        case .boolean(let flag)?: flag ? 1 : 0
        default: 0
        }
    }

    override func decodeFloat(forKey key: String) -> Float { Float(decodeDouble(forKey: key)) }

    override func withDecodedUnsafeBytes<ResultType>(
        forKey key: String, body: (UnsafeRawBufferPointer?) throws -> ResultType
    ) rethrows -> ResultType {
        guard case .data(let data)? = field(key) else { return try body(nil) }
        return try data.withUnsafeBytes { try body($0) }
    }

    override func withDecodedUnsafeBufferPointer<ResultType>(
        forKey key: String, body: (UnsafeBufferPointer<UInt8>?) throws -> ResultType
    ) rethrows -> ResultType {
        guard case .data(let data)? = field(key) else { return try body(nil) }
        return try data.withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }

    // Unkeyed decoding is not part of keyed archives: each of these fails instead of
    // reaching NSCoder's abstract implementation, which stops the process.

    override func decodeObject() -> Any? {
        unkeyed("decodeObject()")
        return nil
    }

    override func decodeData() -> Data? {
        unkeyed("decodeData()")
        return nil
    }

    override func decodePropertyList() -> Any? {
        unkeyed("decodePropertyList()")
        return nil
    }

    override func decodeValue(ofObjCType type: UnsafePointer<Int8>, at data: UnsafeMutableRawPointer) {
        unkeyed("decodeValue(ofObjCType:at:)")
    }

    override func decodeArray(ofObjCType itemType: UnsafePointer<Int8>, count: Int, at array: UnsafeMutableRawPointer) {
        unkeyed("decodeArray(ofObjCType:count:at:)")
    }

    override func version(forClassName className: String) -> Int { 0 }

    private func unkeyed(_ method: String) {
        failWithError(KeyedArchiveFormat.corrupt("\(method): keyed archives support keyed decoding only"))
    }
}
