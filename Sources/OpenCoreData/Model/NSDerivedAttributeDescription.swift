// A derived attribute: a value the store computes from an expression when its object is saved.
import Foundation

/// An attribute whose value the store computes from ``derivationExpression`` each time
/// its object is saved, such as `lowercase:(lastName)`, `employees.@count` or `now()`.
///
/// ```swift
/// let searchName = NSDerivedAttributeDescription()
/// searchName.name = "searchName"
/// searchName.attributeType = .stringAttributeType
/// searchName.derivationExpression = NSExpression(format: "lowercase:(lastName)")
/// ```
///
/// The model side only for now: adding a store to a coordinator whose model has a
/// derived attribute throws `NSPersistentStoreIncompatibleSchemaError` (134020) naming
/// it, until the stores compute derived values.
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The expression the value is computed from: a key path (with `@count`, `@sum`, ...),
    /// a function such as `lowercase:` or `now()`.
    open var derivationExpression: NSExpression? {
        willSet { assertEditable("derivationExpression") }
    }

    /// Creates a derived attribute of undefined type.
    public override init() {
        super.init()
    }

    override var isReadOnly: Bool { true }

    override var versionHashComponents: [String] {
        super.versionHashComponents + [derivationExpression.map { "\($0)" } ?? ""]
    }
}
