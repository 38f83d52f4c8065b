// An attribute: a typed value of an entity.
import Foundation

/// A typed value of an entity, such as a name or a date.
///
/// ```swift
/// let name = NSAttributeDescription()
/// name.name = "name"
/// name.attributeType = .stringAttributeType
/// name.isOptional = false
/// ```
open class NSAttributeDescription: NSPropertyDescription, @unchecked Sendable {
    /// The attribute's type.
    open var attributeType: NSAttributeType = .undefinedAttributeType {
        willSet { assertEditable("attributeType") }
    }
    /// The name of the Swift class of its values (informational, as in Core Data).
    open var attributeValueClassName: String? {
        willSet { assertEditable("attributeValueClassName") }
    }
    /// The value a newly inserted object starts with.
    open var defaultValue: Any? {
        willSet { assertEditable("defaultValue") }
    }
    /// For a transformable attribute: the name of the `ValueTransformer` that turns values into `Data`.
    open var valueTransformerName: String? {
        willSet { assertEditable("valueTransformerName") }
    }
    /// Whether large binary values may live outside the store file.
    open var allowsExternalBinaryDataStorage: Bool = false {
        willSet { assertEditable("allowsExternalBinaryDataStorage") }
    }
    /// Whether the store keeps this value when the object is deleted (for history).
    open var preservesValueInHistoryOnDeletion: Bool = false {
        willSet { assertEditable("preservesValueInHistoryOnDeletion") }
    }
    /// Whether the attribute's value changes are captured for CloudKit-like mirroring (informational).
    open var allowsCloudEncryption: Bool = false

    override var isAttribute: Bool { true }

    /// Creates an attribute of undefined type.
    public override init() {
        super.init()
    }

    override var versionHashKind: String { "attribute" }

    override var versionHashComponents: [String] {
        super.versionHashComponents + [String(attributeType.rawValue)]
    }
}
