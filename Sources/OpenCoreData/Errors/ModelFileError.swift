// The error a model file that cannot be read throws: where (file, line, element) and why.
import Foundation

/// A model file (`.xcdatamodeld`, `.xcdatamodel`, its `contents` XML or its
/// `.xccurrentversion`) that cannot be read: missing, not well-formed XML, or XML that
/// is not a Core Data model (an unknown element or attribute, a bad value, a reference
/// to an entity or property that does not exist).
///
/// Core Data's `NSManagedObjectModel(contentsOf:)` returns nil for such a file; use
/// ``NSManagedObjectModel/init(validatingContentsOf:)`` to get this error instead. Bridged
/// to `NSError` in `NSCocoaErrorDomain`: `NSFileReadNoSuchFileError` (260) for a missing
/// file, `NSFileReadCorruptFileError` (259) otherwise, with the path under
/// `NSFilePathErrorKey`.
///
/// ```swift
/// do {
///     let model = try NSManagedObjectModel(validatingContentsOf: url)
/// } catch let error as ModelFileError {
///     print(error)  // ".../contents, line 12, <attribute>: unknown attributeType 'Integer 8'"
/// }
/// ```
public struct ModelFileError: Error, Equatable, CustomStringConvertible, CustomNSError {
    /// The file that could not be read.
    public let fileURL: URL
    /// The line (from 1) of the offending XML, when the error is inside a file.
    public let line: Int?
    /// The name of the offending XML element, when there is one.
    public let element: String?
    /// What is wrong, in a sentence.
    public let message: String
    /// The `NSCocoaErrorDomain` code: 260 for a missing file, 259 otherwise.
    public let code: Int

    /// An error in `fileURL` at `line` in `element`.
    public init(fileURL: URL, line: Int? = nil, element: String? = nil, message: String, code: Int = 259) {
        self.fileURL = fileURL
        self.line = line
        self.element = element
        self.message = message
        self.code = code
    }

    /// The path, line, element and message, as one line.
    public var description: String {
        var text = fileURL.path
        if let line { text += ", line \(line)" }
        if let element { text += ", <\(element)>" }
        return text + ": " + message
    }

    /// `NSCocoaErrorDomain`.
    public static var errorDomain: String { NSCocoaErrorDomain }
    /// ``code``.
    public var errorCode: Int { code }
    /// The description and the path.
    public var errorUserInfo: [String: Any] {
        [NSLocalizedDescriptionKey: description, NSFilePathErrorKey: fileURL.path]
    }
}
