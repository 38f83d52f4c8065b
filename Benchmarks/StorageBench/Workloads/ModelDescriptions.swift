// The pieces the benchmarks' models are built from in code, as an app without a model
// file builds them.
import OpenCoreData

enum ModelDescriptions {
    /// An attribute; strings and dates are optional unless `optional` says otherwise.
    static func attribute(
        _ name: String, _ type: NSAttributeType, optional: Bool? = nil, indexed: Bool = false,
        defaultValue: Any? = nil
    ) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional ?? (type == .stringAttributeType || type == .dateAttributeType)
        attribute.isIndexed = indexed
        if let defaultValue { attribute.defaultValue = defaultValue }
        return attribute
    }

    /// A relationship to `destination`; give it an inverse with `pair`.
    static func relationship(
        _ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule
    ) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = toMany ? 0 : 1
        relationship.deleteRule = rule
        return relationship
    }

    /// Makes `one` and `other` each other's inverse.
    static func pair(_ one: NSRelationshipDescription, _ other: NSRelationshipDescription) {
        one.inverseRelationship = other
        other.inverseRelationship = one
    }

    /// An entity named `name` whose objects are `type`.
    static func entity(_ name: String, _ type: NSManagedObject.Type) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = NSStringFromClass(type)
        return entity
    }
}
