// Checks a keyed archive before KeyedArchiveDecoder reads it, so decoding meets only
// structures it can read. (The archives refused here include those that stop
// swift-corelibs-foundation's NSKeyedUnarchiver or make it read freed memory: a
// $class that is no class description, NS.keys and NS.objects of different lengths, an
// NSURL without NS.relative, an object that contains itself.) The bytes are parsed by
// BinaryPropertyListReader and refused with an error unless:
//   (1) they are a binary property list with NSKeyedArchiver's envelope;
//   (2) every $objects entry is "$null", a plain string, number, boolean or data, an
//       object whose $class is a UID of a class description, or a class description;
//   (3) every UID an object reachable from the root holds (its fields, and arrays and
//       dictionaries inside them) is in range and names no class description;
//   (4) every object of a standard class has the fields its decoder reads, with their
//       types (KeyedArchiveFormat lists them); other classes without a module name
//       (Foundation's NSValue, NSOrderedSet, ...) are refused: nothing here decodes them;
//   (5) the objects form no cycle and nest at most KeyedArchiveFormat.maximumDepth deep.
import Foundation

/// A keyed archive's object table, checked.
struct KeyedArchiveTable {
    /// One entry of `$objects`.
    enum Entry {
        case null
        case string(String)
        case number(NSNumber)
        case data(Data)
        /// An object: its class name and its fields (`$class` included).
        case object(className: String, fields: [String: PropertyListNode])
        case classDescription(name: String)
    }

    let entries: [Entry]
    /// The index of the root object.
    let root: Int

    /// The index a field holds as a UID (checked in range by the validator).
    func reference(_ fields: [String: PropertyListNode], _ key: String) -> Int? {
        fields[key]?.uidIndex
    }

    /// The indexes of a field holding an array of UIDs.
    func references(_ fields: [String: PropertyListNode], _ key: String) -> [Int] {
        guard case .array(let items)? = fields[key] else { return [] }
        return items.compactMap(\.uidIndex)
    }
}

extension PropertyListNode {
    /// A real or integer as seconds; nil for other values.
    var timeInterval: Double? {
        switch self {
        case .real(let seconds): seconds
        case .integer(let seconds): Double(seconds)
        default: nil
        }
    }

    /// The index a UID holds; nil for other values.
    var uidIndex: Int? {
        if case .uid(let index) = self { return Int(index) }
        return nil
    }

    /// A dictionary's entries by key (the last of equal keys wins); nil for other values.
    var fields: [String: PropertyListNode]? {
        guard case .dictionary(let entries) = self else { return nil }
        return Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}

/// Parses and checks keyed archives.
enum KeyedArchiveValidator {
    /// The checked object table of the keyed archive `data`.
    ///
    /// - Throws: `NSCoderReadCorruptError` naming the first problem found.
    static func table(from data: Data) throws -> KeyedArchiveTable {
        let plist = try BinaryPropertyListReader.parse(data)
        guard let envelope = plist.fields, case .string(KeyedArchiveFormat.archiverName)? = envelope["$archiver"],
            case .integer(Int64(KeyedArchiveFormat.version))? = envelope["$version"]
        else { throw KeyedArchiveFormat.corrupt("the property list is not an NSKeyedArchiver archive") }
        guard case .array(let objects)? = envelope["$objects"], let top = envelope["$top"]?.fields,
            let root = top[KeyedArchiveFormat.rootKey]?.uidIndex
        else { throw KeyedArchiveFormat.corrupt("the archive has no $objects or no root object") }
        let entries = try classify(objects)
        guard entries.indices.contains(root) else {
            throw KeyedArchiveFormat.corrupt("the root object \(root) is outside $objects (\(entries.count) entries)")
        }
        var walk = GraphWalk(entries: entries)
        try walk.check(from: root)
        return KeyedArchiveTable(entries: entries, root: root)
    }

    /// Rules 1-2: each entry's kind, and each object's class description.
    private static func classify(_ objects: [PropertyListNode]) throws -> [KeyedArchiveTable.Entry] {
        var entries: [KeyedArchiveTable.Entry] = []
        entries.reserveCapacity(objects.count)
        var objectFields: [(index: Int, fields: [String: PropertyListNode])] = []
        for (index, value) in objects.enumerated() {
            switch value {
            case .boolean(let flag): entries.append(.number(NSNumber(value: flag)))
            case .integer(let number): entries.append(.number(NSNumber(value: number)))
            case .unsignedInteger(let number): entries.append(.number(NSNumber(value: number)))
            case .real(let number): entries.append(.number(NSNumber(value: number)))
            case .string(let string): entries.append(string == KeyedArchiveFormat.nullName ? .null : .string(string))
            case .data(let data): entries.append(.data(data))
            case .dictionary:
                let fields = value.fields ?? [:]
                if let name = fields["$classname"] {
                    guard case .string(let name) = name else {
                        throw KeyedArchiveFormat.corrupt("class description \(index) is malformed")
                    }
                    entries.append(.classDescription(name: name))
                } else if fields["$class"] != nil {
                    entries.append(.null)  // replaced once every class description is known
                    objectFields.append((index, fields))
                } else {
                    throw KeyedArchiveFormat.corrupt("entry \(index) of $objects is neither an object nor a class")
                }
            case .uid, .array:
                throw KeyedArchiveFormat.corrupt("entry \(index) of $objects is not an archived value")
            }
        }
        for (index, fields) in objectFields {
            guard let classIndex = fields["$class"]?.uidIndex,
                entries.indices.contains(classIndex), case .classDescription(let name) = entries[classIndex]
            else { throw KeyedArchiveFormat.corrupt("object \(index) has no valid $class reference") }
            entries[index] = .object(className: name, fields: fields)
        }
        return entries
    }
}

/// Rules 3-5: a depth-first walk of the objects reachable from the root.
private struct GraphWalk {
    let entries: [KeyedArchiveTable.Entry]
    /// The height of each finished object (1 for an object holding only values).
    private var heights: [Int: Int] = [:]

    init(entries: [KeyedArchiveTable.Entry]) {
        self.entries = entries
    }

    mutating func check(from root: Int) throws {
        // An explicit stack: the archive, not the machine's stack, bounds the depth.
        var stack: [(index: Int, children: [Int], next: Int)] = []
        var onPath: Set<Int> = []
        if let children = try enter(root) {
            stack.append((root, children, 0))
            onPath.insert(root)
        }
        while let frame = stack.last {
            if frame.next == frame.children.count {
                stack.removeLast()
                onPath.remove(frame.index)
                let height = 1 + (frame.children.compactMap { heights[$0] }.max() ?? 0)
                guard height <= KeyedArchiveFormat.maximumDepth else {
                    throw KeyedArchiveFormat.corrupt(
                        "objects nest more than \(KeyedArchiveFormat.maximumDepth) levels deep")
                }
                heights[frame.index] = height
                continue
            }
            let child = frame.children[frame.next]
            stack[stack.count - 1].next += 1
            if onPath.contains(child) {
                throw KeyedArchiveFormat.corrupt("object \(child) contains itself")
            }
            if heights[child] != nil { continue }
            if let children = try enter(child) {
                stack.append((child, children, 0))
                onPath.insert(child)
            }
        }
    }

    /// Checks entry `index`; returns the entries it references when it is an object,
    /// nil for a plain value.
    private mutating func enter(_ index: Int) throws -> [Int]? {
        guard case .object(let className, let fields) = entries[index] else { return nil }
        var children: [Int] = []
        for (key, value) in fields where key != "$class" {
            try collectReferences(in: value, of: index, into: &children)
        }
        try checkFields(of: index, className: className, fields: fields)
        return children
    }

    private func collectReferences(in value: PropertyListNode, of owner: Int, into children: inout [Int]) throws {
        switch value {
        case .uid(let index):
            let reference = Int(index)
            guard entries.indices.contains(reference) else {
                throw KeyedArchiveFormat.corrupt(
                    "object \(owner) refers to entry \(reference), outside $objects (\(entries.count) entries)")
            }
            if case .classDescription = entries[reference] {
                throw KeyedArchiveFormat.corrupt("object \(owner) refers to class description \(reference) as a value")
            }
            children.append(reference)
        case .array(let elements):
            for element in elements { try collectReferences(in: element, of: owner, into: &children) }
        case .dictionary(let entries):
            for entry in entries { try collectReferences(in: entry.value, of: owner, into: &children) }
        default:
            break
        }
    }

    /// Rule 4.
    private func checkFields(of index: Int, className: String, fields: [String: PropertyListNode]) throws {
        func fail(_ problem: String) -> NSError {
            KeyedArchiveFormat.corrupt("\(className) object \(index) \(problem)")
        }
        func referenceArray(_ key: String) throws -> [Int] {
            guard case .array(let array)? = fields[key] else { throw fail("has no \(key) array") }
            let references = array.compactMap(\.uidIndex)
            guard references.count == array.count else { throw fail("holds a non-reference in \(key)") }
            for reference in references {
                if case .null = entries[reference] { throw fail("holds $null in \(key)") }
            }
            return references
        }
        func referencedEntry(_ key: String) throws -> KeyedArchiveTable.Entry {
            guard let reference = fields[key]?.uidIndex else {
                throw fail("has no \(key) reference")
            }
            return entries[reference]
        }
        switch className {
        case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet":
            _ = try referenceArray("NS.objects")
        case "NSDictionary", "NSMutableDictionary":
            guard try referenceArray("NS.keys").count == referenceArray("NS.objects").count else {
                throw fail("has NS.keys and NS.objects of different lengths")
            }
        case "NSString", "NSMutableString":
            guard case .string? = fields["NS.string"] else { throw fail("has no NS.string string") }
        case "NSDate":
            guard let time = fields["NS.time"]?.timeInterval, time.isFinite else {
                throw fail("has no finite NS.time number")
            }
        case "NSData", "NSMutableData":
            guard case .data? = fields["NS.data"] else { throw fail("has no NS.data bytes") }
        case "NSUUID":
            guard case .data(let bytes)? = fields["NS.uuidbytes"], bytes.count == 16 else {
                throw fail("has no 16-byte NS.uuidbytes")
            }
        case "NSURL":
            switch try referencedEntry("NS.base") {
            case .null, .object(className: "NSURL", _): break
            default: throw fail("has an NS.base that is neither $null nor a URL")
            }
            switch try referencedEntry("NS.relative") {
            case .string, .object(className: "NSString", _), .object(className: "NSMutableString", _): break
            default: throw fail("has an NS.relative that is not a string")
            }
        case "NSNull":
            break
        default:
            guard className.contains(".") else {
                throw fail(
                    "is of a class this library does not decode from archives (only NSArray, NSDictionary, NSSet, "
                        + "NSString, NSNumber, NSDate, NSData, NSURL, NSUUID, NSNull and Swift classes of your modules)"
                )
            }
        }
    }
}
