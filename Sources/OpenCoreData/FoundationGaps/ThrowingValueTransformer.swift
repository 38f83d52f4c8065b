// A value transformer that can say why a value does not transform. ValueTransformer's
// API answers nil for failure; a store that turns attribute values into bytes needs the
// reason, so the transformers of this library also conform to this protocol.
import Foundation

/// A `ValueTransformer` whose transformations can throw an error naming the problem.
///
/// `TransformableValueCoding` uses these methods when a registered transformer conforms,
/// and the non-throwing ones otherwise. A conforming transformer need not override
/// `transformedValue(_:)` and `reverseTransformedValue(_:)`: `ValueTransformer`'s answer
/// these methods' results, nil for an error. Conform your own transformer to report why a
/// value or stored bytes do not transform:
///
/// ```swift
/// final class PointTransformer: ValueTransformer, ThrowingValueTransformer {
///     func transformedValueThrowing(_ value: Any?) throws -> Any? { ... }
///     func reverseTransformedValueThrowing(_ value: Any?) throws -> Any? { ... }
/// }
/// ```
public protocol ThrowingValueTransformer: ValueTransformer {
    /// `transformedValue(_:)`, throwing an error instead of answering nil for a value
    /// that does not transform.
    func transformedValueThrowing(_ value: Any?) throws -> Any?

    /// `reverseTransformedValue(_:)`, throwing an error instead of answering nil for a
    /// value that does not transform back.
    func reverseTransformedValueThrowing(_ value: Any?) throws -> Any?
}
