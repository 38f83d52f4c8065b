// Which classes a keyed archive may instantiate, decided before anything decodes it.
//
// swift-corelibs-foundation's NSKeyedUnarchiver calls fatalError, when it requires
// secure coding, for a class outside the allowed classes or one without secure coding,
// and its NSKeyedUnarchiver cannot be subclassed outside Foundation. So the classes of
// every object reachable from the root are checked here, with the secure unarchiver's
// rules, and decoding (by KeyedArchiveReader, or by NSKeyedUnarchiver for your classes
// with the class of each name pinned) starts only when all pass:
//   (1) the root and the members of arrays, dictionaries and sets reached from it
//       through arrays, dictionaries and sets are kinds of the allowed classes (a plain
//       string counts as NSString, a number as NSNumber, data as NSData);
//   (2) your classes exist in the program (top-level classes: NSClassFromString finds
//       only those), conform to NSCoding and, when secure, support secure coding.
// Objects inside your objects are checked by rule 2 only: which classes your
// init(coder:) asks for is not known before it runs.
import Foundation

enum KeyedArchiveClassCheck {
    /// Checks the classes of `table`'s reachable objects and returns the class of each of
    /// your class names, for `NSKeyedUnarchiver.setClass(_:forClassName:)`.
    ///
    /// - Parameters:
    ///   - allowed: The classes rule 1 admits; nil admits any.
    ///   - secure: Whether your classes must support secure coding.
    /// - Throws: `NSCoderReadCorruptError` naming the first refused class.
    static func check(_ table: KeyedArchiveTable, allowed: [AnyClass]?, secure: Bool) throws -> [String: AnyClass] {
        var yourClasses: [String: AnyClass] = [:]
        var visited: Set<Int> = []
        // (index, whether rule 1 applies to it)
        var pending: [(index: Int, checkAllowed: Bool)] = [(table.root, true)]
        while let (index, checkAllowed) = pending.popLast() {
            guard visited.insert(index * 2 + (checkAllowed ? 1 : 0)).inserted else { continue }
            let entryClass: AnyClass
            switch table.entries[index] {
            case .null, .classDescription: continue
            case .string: entryClass = NSString.self
            case .number: entryClass = NSNumber.self
            case .data: entryClass = NSData.self
            case .object(let className, let fields):
                if let standard = KeyedArchiveFormat.standardClasses[className] {
                    entryClass = standard
                    let members = ["NS.objects", "NS.keys"].flatMap { table.references(fields, $0) }
                    let isCollection = className != "NSURL"
                    pending += members.map { ($0, checkAllowed && isCollection) }
                    if className == "NSURL" {
                        pending += ["NS.base", "NS.relative"].compactMap { table.reference(fields, $0) }.map { ($0, false) }
                    }
                } else {
                    entryClass = try yourClass(className, secure: secure)
                    yourClasses[className] = entryClass
                    pending += referencedIndexes(in: fields).map { ($0, false) }
                }
            }
            if checkAllowed, let allowed, !KeyedArchiveFormat.isClass(entryClass, allowedBy: allowed) {
                throw KeyedArchiveFormat.corrupt(
                    "the archive holds a \(NSStringFromClass(entryClass)) where only "
                        + "\(KeyedArchiveFormat.names(allowed)) are allowed")
            }
        }
        return yourClasses
    }

    /// The class named `className` (rule 2).
    private static func yourClass(_ className: String, secure: Bool) throws -> AnyClass {
        guard let resolved = NSKeyedUnarchiver.class(forClassName: className) ?? NSClassFromString(className) else {
            throw KeyedArchiveFormat.corrupt(
                "the archive holds a \(className), a class this program does not have (is it a top-level class?)")
        }
        guard resolved is NSCoding.Type else {
            throw KeyedArchiveFormat.corrupt("the archive holds a \(className), which does not conform to NSCoding")
        }
        if secure {
            guard let secureType = resolved as? NSSecureCoding.Type, secureType.supportsSecureCoding else {
                throw KeyedArchiveFormat.corrupt(
                    "the archive holds a \(className), which does not support secure coding")
            }
        }
        return resolved
    }

    /// The UIDs anywhere in an object's fields but `$class` (the validator checked them).
    private static func referencedIndexes(in fields: [String: Any]) -> [Int] {
        var indexes: [Int] = []
        var values = fields.filter { $0.key != "$class" }.map(\.value)
        while let value = values.popLast() {
            if let index = KeyedArchiveFormat.uidIndex(value) {
                indexes.append(index)
            } else if let array = value as? [Any] {
                values += array
            } else if let dictionary = value as? [String: Any] {
                values += dictionary.values
            }
        }
        return indexes
    }
}
