// NSValueTransformerName: the names value transformers are registered under, with
// Foundation's standard names (and raw values).
import Foundation

/// The name of a registered `ValueTransformer`; a transformable attribute's
/// `valueTransformerName` is its raw value.
///
/// ```swift
/// extension NSValueTransformerName {
///     static let addressTransformer = NSValueTransformerName(rawValue: "AddressTransformer")
/// }
/// ValueTransformer.setValueTransformer(AddressTransformer(), forName: .addressTransformer)
/// ```
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    /// The name as a string.
    public var rawValue: String

    /// The name `rawValue`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The name `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension NSValueTransformerName {
    /// Negates a boolean: true for false (and nil), false for true. Reversible.
    public static let negateBooleanTransformerName = NSValueTransformerName("NSNegateBoolean")
    /// True when the value is nil. Not reversible.
    public static let isNilTransformerName = NSValueTransformerName("NSIsNil")
    /// True when the value is not nil. Not reversible.
    public static let isNotNilTransformerName = NSValueTransformerName("NSIsNotNil")
    /// Unarchives data into an object and archives it back. Foundation used NSArchiver's
    /// non-keyed format; Linux has no NSArchiver, so this reads and writes keyed
    /// archives, as `keyedUnarchiveFromDataTransformerName` does.
    public static let unarchiveFromDataTransformerName = NSValueTransformerName("NSUnarchiveFromData")
    /// Unarchives keyed-archive data into an object of any NSCoding class, and archives
    /// it back. Prefer `secureUnarchiveFromDataTransformerName`.
    public static let keyedUnarchiveFromDataTransformerName = NSValueTransformerName("NSKeyedUnarchiveFromData")
    /// Unarchives keyed-archive data with secure coding, accepting only
    /// `NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses`, and archives back.
    public static let secureUnarchiveFromDataTransformerName = NSValueTransformerName("NSSecureUnarchiveFromData")
}
