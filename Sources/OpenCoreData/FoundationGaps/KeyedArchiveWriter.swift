// Writes ArchivableValues as NSKeyedArchiver archives, without NSKeyedArchiver:
// swift-corelibs-foundation's archiver compares every container with every other to
// share equal objects, so an array of a hundred dictionaries took over a second and a
// thousand minutes. Here each value is written once, in linear time, in the layout
// KeyedArchiveFormat describes; Foundation's NSKeyedUnarchiver reads the result.
import Foundation

/// Writes keyed archives.
struct KeyedArchiveWriter {
    private var objects: [PropertyListNode] = [.string(KeyedArchiveFormat.nullName)]
    private var classIndexes: [String: UInt32] = [:]
    private var stringIndexes: [String: UInt32] = [:]

    /// The keyed archive of `value`.
    static func data(for value: ArchivableValue) -> Data {
        var writer = KeyedArchiveWriter()
        let root = writer.append(value)
        let envelope = PropertyListNode.dictionary([
            ("$version", .integer(Int64(KeyedArchiveFormat.version))),
            ("$archiver", .string(KeyedArchiveFormat.archiverName)),
            ("$top", .dictionary([(KeyedArchiveFormat.rootKey, .uid(root))])),
            ("$objects", .array(writer.objects)),
        ])
        return BinaryPropertyListWriter.data(for: envelope)
    }

    private mutating func append(_ value: ArchivableValue) -> UInt32 {
        switch value {
        case .string(let string):
            if let index = stringIndexes[string] { return index }
            let index = add(.string(string))
            stringIndexes[string] = index
            return index
        case .number(let number):
            return add(Self.node(for: number))
        case .data(let data):
            return add(.data(data))
        case .null:
            return object("NSNull", [])
        case .date(let date):
            return object("NSDate", [("NS.time", .real(date.timeIntervalSinceReferenceDate))])
        case .uuid(let uuid):
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            return object("NSUUID", [("NS.uuidbytes", .data(bytes))])
        case .url(let url):
            let base = url.baseURL.map { append(.url($0)) } ?? 0
            let relative = append(.string(url.relativeString))
            return object("NSURL", [("NS.base", .uid(base)), ("NS.relative", .uid(relative))])
        case .array(let members):
            let references = members.map { PropertyListNode.uid(append($0)) }
            return object("NSArray", [("NS.objects", .array(references))])
        case .set(let members):
            let references = members.map { PropertyListNode.uid(append($0)) }
            return object("NSSet", [("NS.objects", .array(references))])
        case .dictionary(let entries):
            let keys = entries.map { PropertyListNode.uid(append($0.key)) }
            let values = entries.map { PropertyListNode.uid(append($0.value)) }
            return object("NSDictionary", [("NS.keys", .array(keys)), ("NS.objects", .array(values))])
        case .codedObject(let className, let classChain, let fields):
            let written = fields.map { field -> (key: String, value: PropertyListNode) in
                switch field.value {
                case .value(let value): (field.key, .uid(append(value)))
                case .nilObject: (field.key, .uid(0))
                case .boolean(let flag): (field.key, .boolean(flag))
                case .integer(let number): (field.key, .integer(number))
                case .real(let number): (field.key, .real(number))
                case .bytes(let data): (field.key, .data(data))
                }
            }
            return object(className, written, classChain: classChain)
        }
    }

    private mutating func add(_ node: PropertyListNode) -> UInt32 {
        objects.append(node)
        return UInt32(objects.count - 1)
    }

    /// An object of class `className` with `fields`; `classChain` names the class and its
    /// superclasses (a standard class: itself and NSObject).
    private mutating func object(
        _ className: String, _ fields: [(key: String, value: PropertyListNode)], classChain: [String]? = nil
    ) -> UInt32 {
        let classIndex: UInt32
        if let known = classIndexes[className] {
            classIndex = known
        } else {
            let chain = classChain ?? [className, "NSObject"]
            classIndex = add(
                .dictionary([
                    ("$classes", .array(chain.map(PropertyListNode.string))),
                    ("$classname", .string(className)),
                ]))
            classIndexes[className] = classIndex
        }
        return add(.dictionary([("$class", .uid(classIndex))] + fields))
    }

    /// A number as the property list holds it: a boolean, a real or an integer.
    private static func node(for number: NSNumber) -> PropertyListNode {
        switch String(cString: number.objCType) {
        case "c", "B": .boolean(number.boolValue)
        case "f", "d": .real(number.doubleValue)
        case "Q", "L", "I", "S", "C": .unsignedInteger(number.uint64Value)
        default: .integer(number.int64Value)
        }
    }
}
