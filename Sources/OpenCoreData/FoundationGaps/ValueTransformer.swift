// ValueTransformer: Foundation's named value conversions, which swift-corelibs-foundation
// does not ship. Core Data turns a transformable attribute's value into data with the
// transformer registered under the attribute's valueTransformerName.
//
// The registry is one table behind a lock, read and written from any thread; the
// standard transformers (NSValueTransformerName) are in it from the start.
import Foundation

/// An object that converts a value into another and, when reversible, back:
/// Foundation's `ValueTransformer`.
///
/// Subclass it, override `transformedValueClass()`, `allowsReverseTransformation()`,
/// `transformedValue(_:)` and `reverseTransformedValue(_:)`, and register an instance
/// under a name that your model's transformable attributes give:
///
/// ```swift
/// final class AddressTransformer: ValueTransformer {
///     static let name = NSValueTransformerName(rawValue: "AddressTransformer")
///     override class func transformedValueClass() -> AnyClass { NSData.self }
///     override class func allowsReverseTransformation() -> Bool { true }
///     override func transformedValue(_ value: Any?) -> Any? {
///         (value as? Address).flatMap { try? JSONEncoder().encode($0) }
///     }
///     override func reverseTransformedValue(_ value: Any?) -> Any? {
///         (value as? Data).flatMap { try? JSONDecoder().decode(Address.self, from: $0) }
///     }
/// }
/// ValueTransformer.setValueTransformer(AddressTransformer(), forName: AddressTransformer.name)
/// let transformer = ValueTransformer(forName: AddressTransformer.name)
/// ```
///
/// A registered transformer may be used from any thread: keep it free of mutable state.
open class ValueTransformer: NSObject {
    /// A transformer.
    public override init() {
        super.init()
    }

    /// Registers `transformer` under `name`, replacing any transformer registered under
    /// it; nil removes the registration.
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        ValueTransformerRegistry.shared.set(transformer, forName: name)
    }

    /// The names of the registered transformers (the standard ones included), sorted.
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        ValueTransformerRegistry.shared.names()
    }

    /// The class of the values `transformedValue(_:)` returns. `NSObject` unless
    /// overridden.
    open class func transformedValueClass() -> AnyClass {
        NSObject.self
    }

    /// Whether `reverseTransformedValue(_:)` converts back. True unless overridden.
    open class func allowsReverseTransformation() -> Bool {
        true
    }

    /// The transformed `value`. Unless overridden: a `ThrowingValueTransformer`'s
    /// `transformedValueThrowing(_:)`, nil where that throws; for other transformers
    /// `value` unchanged.
    open func transformedValue(_ value: Any?) -> Any? {
        if let throwing = self as? any ThrowingValueTransformer { return try? throwing.transformedValueThrowing(value) }
        return value
    }

    /// `value` transformed back. Unless overridden: a `ThrowingValueTransformer`'s
    /// `reverseTransformedValueThrowing(_:)`, nil where that throws; for other
    /// transformers `transformedValue(_:)` when the class allows reverse transformation,
    /// and nil when it does not (Foundation raises an exception there).
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        if let throwing = self as? any ThrowingValueTransformer {
            return try? throwing.reverseTransformedValueThrowing(value)
        }
        guard type(of: self).allowsReverseTransformation() else { return nil }
        return transformedValue(value)
    }
}

/// Supplies `ValueTransformer(forName:)`, which returns the registered instance.
///
/// A Swift class initializer cannot return an existing object; an initializer in a
/// protocol extension can, so the lookup lives here. Only `ValueTransformer` conforms.
public protocol ValueTransformerRegistryLookup {}

extension ValueTransformer: ValueTransformerRegistryLookup {}

extension ValueTransformerRegistryLookup {
    /// The transformer registered under `name`, or nil when none is (or when it is not a
    /// `Self`).
    ///
    /// ```swift
    /// let negate = ValueTransformer(forName: .negateBooleanTransformerName)
    /// negate?.transformedValue(true)   // false
    /// ```
    public init?(forName name: NSValueTransformerName) {
        guard let registered = ValueTransformerRegistry.shared.transformer(forName: name) as? Self else { return nil }
        self = registered
    }
}

/// The table of registered transformers.
///
/// `@unchecked Sendable`: every access to the table holds the lock; the transformers in
/// it are shared across threads as Foundation shares them.
final class ValueTransformerRegistry: @unchecked Sendable {
    static let shared = ValueTransformerRegistry()

    private let lock = NSLock()
    private var transformers: [NSValueTransformerName: ValueTransformer]

    private init() {
        let keyed = KeyedUnarchiveFromDataTransformer()
        transformers = [
            .negateBooleanTransformerName: NegateBooleanTransformer(),
            .isNilTransformerName: IsNilTransformer(),
            .isNotNilTransformerName: IsNotNilTransformer(),
            .unarchiveFromDataTransformerName: keyed,
            .keyedUnarchiveFromDataTransformerName: keyed,
            .secureUnarchiveFromDataTransformerName: NSSecureUnarchiveFromDataTransformer(),
        ]
    }

    func set(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        lock.lock()
        defer { lock.unlock() }
        transformers[name] = transformer
    }

    func transformer(forName name: NSValueTransformerName) -> ValueTransformer? {
        lock.lock()
        defer { lock.unlock() }
        return transformers[name]
    }

    func names() -> [NSValueTransformerName] {
        lock.lock()
        defer { lock.unlock() }
        return transformers.keys.sorted { $0.rawValue < $1.rawValue }
    }
}
