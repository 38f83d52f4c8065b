// The coder your NSCoding classes' encode(with:) writes into when a value is archived:
// it collects the object's fields as checked ArchivableValues and scalars, which
// KeyedArchiveWriter writes as an object of the archive. Foundation's NSKeyedArchiver is
// not used: it stops the process on a value it cannot encode (a Swift struct), and it
// compares every container with every other, which takes minutes for a thousand
// dictionaries.
//
// encodeConditionalObject(_:forKey:) of an object being encoded (a back reference to a
// parent) writes nothing: the field decodes as nil. Another object encoded twice is
// written twice and decodes as two objects.
import Foundation

/// One field your class encoded.
enum CodedField {
    /// An object reference (`encode(_:forKey:)`).
    case value(ArchivableValue)
    /// `encode(nil, forKey:)`.
    case nilObject
    case boolean(Bool)
    case integer(Int64)
    case real(Double)
    /// `encodeBytes(_:length:forKey:)`.
    case bytes(Data)
}

final class KeyedArchiveEncoder: NSCoder {
    private let secure: Bool
    private let depth: Int
    /// The objects being encoded, outermost first, for conditional references.
    private let path: Set<ObjectIdentifier>
    /// The fields written so far, in order.
    private(set) var fields: [(key: String, value: CodedField)] = []
    /// The first value that could not be encoded.
    private(set) var failure: Error?

    init(secure: Bool, depth: Int, path: Set<ObjectIdentifier>) {
        self.secure = secure
        self.depth = depth
        self.path = path
        super.init()
    }

    override var allowsKeyedCoding: Bool { true }

    override var requiresSecureCoding: Bool { secure }

    // NSCoder's own getter stops the process; an encoder restricts no classes.
    override var allowedClasses: [AnyClass]? { nil }

    private func add(_ key: String, _ value: CodedField) {
        fields.append((KeyedArchiveFormat.escaped(key), value))
    }

    override func encode(_ objv: Any?, forKey key: String) {
        guard failure == nil else { return }
        guard let object = flattenedOptional(objv) else {
            add(key, .nilObject)
            return
        }
        do {
            add(
                key,
                .value(try ArchivableValue.make(object, allowed: nil, secure: secure, depth: depth + 1, path: path)))
        } catch {
            failure = error
        }
    }

    override func encodeConditionalObject(_ objv: Any?, forKey key: String) {
        if let object = flattenedOptional(objv) as? AnyObject, path.contains(ObjectIdentifier(object)) { return }
        encode(objv, forKey: key)
    }

    override func encode(_ boolv: Bool, forKey key: String) { add(key, .boolean(boolv)) }

    override func encode(_ intv: Int32, forKey key: String) { add(key, .integer(Int64(intv))) }

    override func encode(_ intv: Int64, forKey key: String) { add(key, .integer(intv)) }

    override func encode(_ intv: Int, forKey key: String) { add(key, .integer(Int64(intv))) }

    override func encode(_ realv: Float, forKey key: String) { add(key, .real(Double(realv))) }

    override func encode(_ realv: Double, forKey key: String) { add(key, .real(realv)) }

    override func encodeBytes(_ bytesp: UnsafePointer<UInt8>?, length lenv: Int, forKey key: String) {
        guard let bytesp, lenv > 0 else {
            add(key, .bytes(Data()))
            return
        }
        add(key, .bytes(Data(bytes: bytesp, count: lenv)))
    }

    // Unkeyed encoding is not part of keyed archives: each of these fails instead of
    // reaching NSCoder's abstract implementation, which stops the process.

    override func encode(_ object: Any?) { unkeyed("encode(_:)") }

    override func encode(_ data: Data) { unkeyed("encode(_: Data)") }

    override func encodeConditionalObject(_ object: Any?) { unkeyed("encodeConditionalObject(_:)") }

    override func encodeRootObject(_ rootObject: Any) { unkeyed("encodeRootObject(_:)") }

    override func encodeBycopyObject(_ anObject: Any?) { unkeyed("encodeBycopyObject(_:)") }

    override func encodeByrefObject(_ anObject: Any?) { unkeyed("encodeByrefObject(_:)") }

    override func encodePropertyList(_ aPropertyList: Any) { unkeyed("encodePropertyList(_:)") }

    override func encodeBytes(_ byteaddr: UnsafeRawPointer?, length: Int) { unkeyed("encodeBytes(_:length:)") }

    override func encodeValue(ofObjCType type: UnsafePointer<Int8>, at addr: UnsafeRawPointer) {
        unkeyed("encodeValue(ofObjCType:at:)")
    }

    override func encodeArray(ofObjCType type: UnsafePointer<Int8>, count: Int, at array: UnsafeRawPointer) {
        unkeyed("encodeArray(ofObjCType:count:at:)")
    }

    private func unkeyed(_ method: String) {
        if failure == nil {
            failure = KeyedArchiveFormat.invalidValue("\(method): keyed archives support keyed encoding only")
        }
    }
}
