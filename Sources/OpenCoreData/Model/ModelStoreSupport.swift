// What the stores cannot hold: a model with such a property is refused when a store is
// added, with an error naming the property, instead of failing later on a value.
// Derived attributes are checked by DerivedAttributePlan.
import Foundation

extension NSManagedObjectModel {
    /// Checks that every store can hold this model's attributes.
    ///
    /// Composite attributes may not have elements that are undefined, object IDs or binary
    /// data in external storage (as Core Data documents), nor derived or transient
    /// elements, and need at least one element.
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) naming the attribute.
    func checkStoreSupport(storeType: String) throws {
        for entity in entities {
            // A constraint may name a composite's element by key path (`location.latitude`);
            // one naming no element would be left out by the stores: refuse it instead.
            for constraint in entity.uniquenessConstraints {
                for name in constraint.compactMap({ ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }) {
                    let head = String(name.prefix { $0 != "." })
                    guard head != name,
                        let composite = entity.propertiesByName[head] as? NSCompositeAttributeDescription,
                        NSEntityDescription.property(atKeyPath: name, in: [head: composite]) == nil
                    else { continue }
                    throw CoreDataError.make(
                        NSPersistentStoreIncompatibleSchemaError,
                        "cannot add a store of type \(storeType): the uniqueness constraint of "
                            + "\(entity.name ?? "entity") names '\(name)', which is no element of the composite "
                            + "attribute '\(head)' (its elements: \(composite.elements.map(\.name).joined(separator: ", ")))",
                        userInfo: [NSStoreTypeKey: storeType])
                }
            }
            for property in entity.properties {
                guard let composite = property as? NSCompositeAttributeDescription else { continue }
                if let problem = composite.elementProblem() {
                    throw CoreDataError.make(
                        NSPersistentStoreIncompatibleSchemaError,
                        "cannot add a store of type \(storeType): the composite attribute "
                            + "\(entity.name ?? "entity").\(property.name) \(problem)",
                        userInfo: [NSStoreTypeKey: storeType])
                }
            }
        }
    }
}

extension NSCompositeAttributeDescription {
    /// What is wrong with the elements, or nil.
    func elementProblem() -> String? {
        if elements.isEmpty { return "has no elements" }
        var names: Set<String> = []
        for element in elements {
            guard names.insert(element.name).inserted else { return "has two elements named '\(element.name)'" }
            if element.name.isEmpty || element.name.contains(".") {
                return "has an element named '\(element.name)': element names are non-empty and have no '.'"
            }
            if element is NSDerivedAttributeDescription || element.isTransient {
                return "has the element '\(element.name)', which is derived or transient"
            }
            switch element.attributeType {
            case .undefinedAttributeType, .objectIDAttributeType:
                return "has the element '\(element.name)' of a type composite elements cannot have"
            case .binaryDataAttributeType where element.allowsExternalBinaryDataStorage:
                return "has the element '\(element.name)', binary data in external storage, which elements cannot be"
            case .compositeAttributeType:
                if let nested = element as? NSCompositeAttributeDescription, let problem = nested.elementProblem() {
                    return "has the element '\(element.name)', which \(problem)"
                }
            default: break
            }
        }
        return nil
    }
}
