// Archiving and unarchiving values as NSKeyedArchiver archives, never stopping the
// process on a value or on bytes: values are checked (ArchivableValue) and archives
// validated (KeyedArchiveValidator, KeyedArchiveClassCheck) first. Values of standard
// classes are written and read here; archives holding your own NSCoding classes go
// through NSKeyedArchiver and NSKeyedUnarchiver, since only Foundation's coder can call
// your encode(with:) and init(coder:). That unarchiver does not require secure coding
// itself (it would stop the process on a refused class): the classes it may create are
// checked and pinned beforehand, so your decoders read `requiresSecureCoding` as false.
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
        guard archivable.containsObjects else { return KeyedArchiveWriter.data(for: archivable) }
        let archiver = NSKeyedArchiver(requiringSecureCoding: secure)
        archiver.encode(archivable.foundationObject, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        if let error = archiver.error {
            throw KeyedArchiveFormat.invalidValue("NSKeyedArchiver failed (\(error.localizedDescription))")
        }
        return archiver.encodedData
    }

    /// The root value of the keyed archive `data`.
    ///
    /// - Parameters:
    ///   - allowedClasses: With `secure`, the classes the root and the members of
    ///     collections must belong to.
    ///   - secure: Whether classes must support secure coding and be allowed.
    /// - Throws: `NSCoderReadCorruptError` naming what is wrong with the bytes.
    static func unarchive(_ data: Data, allowedClasses: [AnyClass], secure: Bool) throws -> Any {
        let table = try KeyedArchiveValidator.table(from: data)
        let yourClasses = try KeyedArchiveClassCheck.check(table, allowed: secure ? allowedClasses : nil, secure: secure)
        if table.holdsOnlyStandardClasses { return try KeyedArchiveReader.rootValue(of: table) }
        let unarchiver: NSKeyedUnarchiver
        do {
            unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        } catch {
            throw KeyedArchiveFormat.corrupt("NSKeyedUnarchiver refused the archive (\(error.localizedDescription))")
        }
        unarchiver.requiresSecureCoding = false
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        for name in yourClasses.keys { unarchiver.setClass(yourClasses[name], forClassName: name) }
        let root = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
        unarchiver.finishDecoding()
        if let error = unarchiver.error {
            throw KeyedArchiveFormat.corrupt("NSKeyedUnarchiver failed (\(error.localizedDescription))")
        }
        guard let root else { throw KeyedArchiveFormat.corrupt("the root object decodes to nil") }
        return root
    }
}
