// A composite attribute: one value made of named elements, like a small struct.
import Foundation

/// An attribute whose value is a dictionary of named elements, each described by an
/// attribute (`street`, `city`, `postcode` of an address).
///
/// ```swift
/// let address = NSCompositeAttributeDescription()
/// address.name = "address"
/// address.elements = [street, city, postcode]
/// ```
///
/// Its `attributeType` is `.undefinedAttributeType` here (Core Data's
/// `.compositeAttributeType` is not a case of ``NSAttributeType`` yet). The model side
/// only for now: adding a store to a coordinator whose model has a composite attribute
/// throws `NSPersistentStoreIncompatibleSchemaError` (134020) naming it.
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The elements of the value, each an attribute (composites may nest).
    open var elements: [NSAttributeDescription] = [] {
        willSet { assertEditable("elements") }
    }

    /// Creates a composite attribute with no elements.
    public override init() {
        super.init()
    }

    override var versionHashComponents: [String] {
        super.versionHashComponents + elements.map { $0.versionHash.base64EncodedString() }
    }
}
