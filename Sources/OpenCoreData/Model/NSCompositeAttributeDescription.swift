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
/// Its `attributeType` is `.compositeAttributeType`. An object's value is a
/// `[String: Any]` keyed by element name (`["street": "1 Fjord Road", "city": "Oslo"]`);
/// elements are read with key paths (`address.city`) in predicates, sort descriptors and
/// `value(forKeyPath:)`. Elements may be composites themselves; elements that are
/// undefined, object IDs or binary data in external storage are refused when a store
/// is added (134020), as Core Data refuses them.
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The elements of the value, each an attribute (composites may nest).
    open var elements: [NSAttributeDescription] = [] {
        willSet { assertEditable("elements") }
    }

    /// Creates a composite attribute with no elements.
    public override init() {
        super.init()
        attributeType = .compositeAttributeType
    }

    override var versionHashComponents: [String] {
        super.versionHashComponents + elements.map { $0.versionHash.base64EncodedString() }
    }
}
