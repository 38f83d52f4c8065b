// Archiving and unarchiving values as NSKeyedArchiver archives, never stopping the
// process on a value or on bytes: values are checked and encoded by ArchivableValue
// (your classes through KeyedArchiveEncoder) and written by KeyedArchiveWriter; bytes
// are parsed by BinaryPropertyListReader, checked by KeyedArchiveValidator and decoded
// by KeyedArchiveDecoder. Foundation's NSKeyedArchiver and NSKeyedUnarchiver are not
// used (their failures stop the process on Linux); the archives are theirs, and they
// read what is written here.
import Foundation

/// Keyed archives of values, under a secure or an insecure class policy.
enum KeyedArchiveCoding {
    /// The keyed archive of `value`.
    ///
    /// - Parameters:
    ///   - allowedClasses: With `secure`, the classes the root and the members of
    ///     collections must belong to (nil: any).
    ///   - secure: Whether your classes must support secure coding.
    /// - Throws: `NSCoderInvalidValueError` naming a value that cannot be archived.
    static func archive(_ value: Any, allowedClasses: [AnyClass]?, secure: Bool) throws -> Data {
        let archivable = try ArchivableValue.make(value, allowed: secure ? allowedClasses : nil, secure: secure)
        return KeyedArchiveWriter.data(for: archivable)
    }

    /// The root value of the keyed archive `data`.
    ///
    /// - Parameters:
    ///   - allowedClasses: With `secure`, the classes the root and the members of
    ///     collections must belong to (nil: any).
    ///   - secure: Whether classes must support secure coding and be allowed.
    /// - Throws: `NSCoderReadCorruptError` naming what is wrong with the bytes.
    static func unarchive(_ data: Data, allowedClasses: [AnyClass]?, secure: Bool) throws -> Any {
        let table = try KeyedArchiveValidator.table(from: data)
        return try KeyedArchiveDecoder.rootValue(of: table, allowed: secure ? allowedClasses : nil, secure: secure)
    }
}
