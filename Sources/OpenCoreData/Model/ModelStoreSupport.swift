// What the stores cannot hold yet: a model with such a property is refused when a store
// is added, with an error naming the property, instead of saving data that would be
// wrong (a derived value never computed) or failing later on a value it cannot encode.
import Foundation

extension NSManagedObjectModel {
    /// The error adding any store to a coordinator of this model gives, or nil.
    ///
    /// Derived attributes need the store to compute values at save; composite attributes
    /// need a stored form for their dictionary. Neither exists yet in any store.
    func unsupportedStoreFeatureError(storeType: String) -> NSError? {
        for entity in entities {
            for property in entity.properties {
                let what: String
                if let derived = property as? NSDerivedAttributeDescription {
                    what =
                        "is a derived attribute (\(derived.derivationExpression.map { "\($0)" } ?? "no expression")), "
                        + "which stores do not compute yet"
                } else if property is NSCompositeAttributeDescription {
                    what = "is a composite attribute, which stores cannot hold yet"
                } else {
                    continue
                }
                return CoreDataError.make(
                    NSPersistentStoreIncompatibleSchemaError,
                    "cannot add a store of type \(storeType): \(entity.name ?? "entity").\(property.name) \(what)",
                    userInfo: [NSStoreTypeKey: storeType])
            }
        }
        return nil
    }
}
