// NSKeyedArchiver's format, as the keyed-archive reader, writer and validator share it.
//
// A keyed archive is a binary property list:
//   { "$archiver": "NSKeyedArchiver", "$version": 100000,
//     "$top": { "root": UID }, "$objects": [ "$null", ... ] }
// A UID is an index into $objects. An entry of $objects is "$null", a plain value
// (string, number, boolean, data), an object { "$class": UID, fields... } or a class
// description { "$classname": name, "$classes": [name, superclass names...] }.
//
// The standard classes, and the fields their decoders read:
//   NSArray, NSMutableArray, NSSet, NSMutableSet   NS.objects: [UID]
//   NSDictionary, NSMutableDictionary              NS.keys: [UID], NS.objects: [UID] (same count)
//   NSString, NSMutableString                      NS.string: string (plain strings are usual)
//   NSDate                                         NS.time: real, seconds since 2001-01-01
//   NSData, NSMutableData                          NS.data: data (plain data is usual)
//   NSURL                                          NS.base: UID ($null or NSURL), NS.relative: UID (string)
//   NSUUID                                         NS.uuidbytes: data, 16 bytes
//   NSNull                                         (none)
// NSNumber is always a plain number or boolean.
import Foundation

enum KeyedArchiveFormat {
    static let archiverName = "NSKeyedArchiver"
    static let version = 100_000
    static let nullName = "$null"
    static let rootKey = "root"

    /// The deepest nesting of objects accepted, writing or reading. Deeper graphs are
    /// refused: Foundation's decoders recurse once per level, and its archiver takes
    /// seconds beyond a few dozen levels.
    static let maximumDepth = 64

    /// The Foundation class of each standard class name.
    static let standardClasses: [String: AnyClass] = [
        "NSArray": NSArray.self, "NSMutableArray": NSMutableArray.self, "NSSet": NSSet.self,
        "NSMutableSet": NSMutableSet.self, "NSDictionary": NSDictionary.self,
        "NSMutableDictionary": NSMutableDictionary.self, "NSString": NSString.self,
        "NSMutableString": NSMutableString.self, "NSDate": NSDate.self, "NSData": NSData.self,
        "NSMutableData": NSMutableData.self, "NSURL": NSURL.self, "NSUUID": NSUUID.self, "NSNull": NSNull.self,
    ]

    /// A field key as archives store it: NSKeyedArchiver adds a "$" to keys that begin
    /// with one, so they cannot clash with "$class".
    static func escaped(_ key: String) -> String {
        key.hasPrefix("$") ? "$" + key : key
    }

    /// True when `candidate` is `ancestor` or one of its subclasses.
    static func isClass(_ candidate: AnyClass, kindOf ancestor: AnyClass) -> Bool {
        var current: AnyClass? = candidate
        while let type = current {
            if type == ancestor { return true }
            current = _getSuperclass(type)
        }
        return false
    }

    /// True when `candidate` is a kind of one of `allowed`.
    static func isClass(_ candidate: AnyClass, allowedBy allowed: [AnyClass]) -> Bool {
        allowed.contains { isClass(candidate, kindOf: $0) }
    }

    /// The names of `classes`, for messages.
    static func names(_ classes: [AnyClass]) -> String {
        classes.map { NSStringFromClass($0) }.joined(separator: ", ")
    }

    /// An error for bytes that are not a readable keyed archive (NSCoderReadCorruptError).
    static func corrupt(_ message: String) -> NSError {
        CoreDataError.make(CocoaError.Code.coderReadCorrupt.rawValue, "keyed archive: \(message)")
    }

    /// An error for a value that cannot be archived (NSCoderInvalidValueError).
    static func invalidValue(_ message: String) -> NSError {
        CoreDataError.make(CocoaError.Code.coderInvalidValue.rawValue, "keyed archive: \(message)")
    }
}
