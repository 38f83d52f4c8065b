// Key-value coding as predicates, expressions and sort descriptors read it.
//
// Swift on Linux has no Objective-C runtime, so Foundation's `value(forKey:)` on
// NSObject does not exist. Anything a predicate can evaluate against conforms to
// this protocol: managed objects (by their entity's properties), store rows, and a
// user's own types. Dictionaries, arrays and sets are handled by the evaluator.

/// A value whose properties predicates, sort descriptors and key paths can read by name.
///
/// Conform your own types to filter them with `NSPredicate`:
///
/// ```swift
/// struct Book: KeyValueReadable {
///     var title: String
///     func readValue(forKey key: String) throws -> Any? {
///         switch key {
///         case "title": return title
///         default: throw KeyValueCodingError.unknownKey(key, in: "Book")
///         }
///     }
/// }
/// ```
public protocol KeyValueReadable {
    /// The value stored under `key`, or nil when it has none.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` when the receiver has no property `key`.
    func readValue(forKey key: String) throws -> Any?
}
