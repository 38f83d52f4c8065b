// Where each property of an entity lives in a managed object and in a store row.
//
// Slot order is the inheritance order: the root entity's properties first, each
// sub-entity appending its own. A sub-entity's rows and objects therefore share
// their superentity's slot numbers, so a fetch of the superentity reads slot k the
// same way in every row it scans.
import Foundation

/// The frozen, thread-safe slot table of one entity; predicates and sort descriptors
/// compiled for it read objects and rows by slot.
final class EntityLayout: KeyValueSchema, @unchecked Sendable {
    /// The entity's name, for error messages.
    let schemaName: String

    /// Every property, inherited ones first; a property's slot is its index here.
    let properties: [NSPropertyDescription]
    let propertiesByName: [String: NSPropertyDescription]
    let slotsByName: [String: Int]
    /// Slots of attributes and of relationships, in slot order.
    let attributeSlots: [Int]
    let relationshipSlots: [Int]
    /// The attributes and relationships themselves (typed, in slot order).
    let attributes: [NSAttributeDescription]
    let relationships: [NSRelationshipDescription]
    /// For each slot: the attribute, if the slot holds one (nil for a relationship).
    let attributeBySlot: [NSAttributeDescription?]
    /// For each slot: the relationship, if the slot holds one.
    let relationshipBySlot: [NSRelationshipDescription?]
    /// For each relationship slot: the slot of its inverse in the destination, or nil.
    let inverseSlotBySlot: [Int?]
    /// For each slot: whether it is a relationship whose inverse is a to-many (read on
    /// every inverse edit; the descriptions' properties are dynamically dispatched).
    let inverseIsToManyBySlot: [Bool]
    /// For each slot: whether it is an unordered to-many whose inverse is a to-one
    /// (`isDecidedByInverseToOne`, read on every inverse edit of an unloaded list).
    let decidedByInverseToOneBySlot: [Bool]
    /// For each slot: whether it is a to-many relationship (read for every relationship
    /// value a save stores; the description's property is dynamically dispatched).
    let toManyBySlot: [Bool]
    /// For each slot: whether it is a relationship with an inverse (read per saved row by
    /// the store's integrity pass; the description's inverse is a weak reference).
    let hasInverseBySlot: [Bool]
    /// For each slot: whether it is a relationship any number of destinations satisfies
    /// (an optional to-many without a minimum above one or a maximum): validation skips it.
    let countUncheckedBySlot: [Bool]
    /// For each relationship slot: the identity of its destination entity. An object of
    /// exactly that entity is a valid destination without walking the superentities
    /// (the object holds its entity, so an equal identity is that entity).
    let destinationIdentityBySlot: [ObjectIdentifier?]
    /// The class of the entity's objects.
    let objectClass: NSManagedObject.Type
    /// Attribute defaults and empty relationships: the values of a new object.
    let defaultValues: SlotValues
    /// For each attribute slot: the identity of its canonical Swift type (values of that
    /// exact type need no conversion or type check).
    let canonicalTypeBySlot: [ObjectIdentifier?]
    /// For each slot: whether the property is transient (never stored).
    let transientBySlot: [Bool]
    /// For each slot: whether a missing value is fine (optional or transient).
    let mayBeNilBySlot: [Bool]
    /// For each slot: whether the attribute has validation predicates.
    let hasPredicatesBySlot: [Bool]
    /// For each slot: whether it is an attribute without validation predicates (validated
    /// by its value's type alone when that is the canonical one).
    let plainAttributeBySlot: [Bool]
    /// For each attribute slot: its type, read once (the description's property is dynamically dispatched).
    let attributeTypeBySlot: [NSAttributeType?]
    /// For each slot: how a save stores it, one table read per slot of every saved object
    /// (``SlotStoreForm``).
    let storeFormBySlot: [SlotStoreForm]
    /// The relationship slots whose delete rule is deny, in slot order: the only ones
    /// `validateForDelete()` checks (most entities have none).
    let denySlots: [Int]
    /// The stored transformable attribute slots, whose bytes a fetch decodes before it
    /// hands out objects (so damaged bytes fail the fetch, not a later property read).
    let transformableSlots: [Int]
    /// Slots of `@Managed` properties by key path, filled on first use.
    let managedSlots = ManagedSlotCache()
    /// For each slot: how its stored value becomes the object's (StoredValueConversion.swift).
    let storedValueConversions: [StoredValueConversion]

    init(entity: NSEntityDescription) {
        var chain: [NSEntityDescription] = []
        var current: NSEntityDescription? = entity
        while let candidate = current {
            chain.insert(candidate, at: 0)
            current = candidate.superentity
        }
        var properties: [NSPropertyDescription] = []
        var seen: Set<String> = []
        for ancestor in chain {
            for property in ancestor.properties where !seen.contains(property.name) {
                seen.insert(property.name)
                properties.append(property)
            }
        }
        self.properties = properties
        self.schemaName = entity.name ?? "entity"
        var byName: [String: NSPropertyDescription] = [:]
        var slots: [String: Int] = [:]
        var attributeSlots: [Int] = []
        var relationshipSlots: [Int] = []
        var attributes: [NSAttributeDescription] = []
        var relationships: [NSRelationshipDescription] = []
        var attributeBySlot: [NSAttributeDescription?] = []
        var relationshipBySlot: [NSRelationshipDescription?] = []
        var inverseSlots: [Int?] = []
        for (slot, property) in properties.enumerated() {
            byName[property.name] = property
            slots[property.name] = slot
            if let attribute = property as? NSAttributeDescription {
                attributeSlots.append(slot)
                attributes.append(attribute)
                attributeBySlot.append(attribute)
                relationshipBySlot.append(nil)
                inverseSlots.append(nil)
            } else if let relationship = property as? NSRelationshipDescription {
                relationshipSlots.append(slot)
                relationships.append(relationship)
                attributeBySlot.append(nil)
                relationshipBySlot.append(relationship)
                inverseSlots.append(EntityLayout.inverseSlot(of: relationship))
            } else {
                attributeBySlot.append(nil)
                relationshipBySlot.append(nil)
                inverseSlots.append(nil)
            }
        }
        self.propertiesByName = byName
        self.slotsByName = slots
        self.attributeSlots = attributeSlots
        self.relationshipSlots = relationshipSlots
        self.attributes = attributes
        self.relationships = relationships
        self.attributeBySlot = attributeBySlot
        self.relationshipBySlot = relationshipBySlot
        self.inverseSlotBySlot = inverseSlots
        self.inverseIsToManyBySlot = relationshipBySlot.map { $0?.inverseRelationship?.isToMany ?? false }
        self.decidedByInverseToOneBySlot = relationshipBySlot.map { $0?.isDecidedByInverseToOne ?? false }
        self.toManyBySlot = relationshipBySlot.map { $0?.isToMany ?? false }
        self.hasInverseBySlot = relationshipBySlot.map { $0?.inverseRelationship != nil }
        self.countUncheckedBySlot = relationshipBySlot.map { relationship in
            guard let relationship else { return false }
            return relationship.isToMany && relationship.isOptional && relationship.minCount <= 1
                && relationship.maxCount == 0
        }
        self.destinationIdentityBySlot = relationshipBySlot.map { $0?.destinationEntity.map(ObjectIdentifier.init) }
        self.objectClass = EntityLayout.resolveClass(named: entity.managedObjectClassName)
        self.canonicalTypeBySlot = properties.map { property in
            (property as? NSAttributeDescription).flatMap { $0.attributeType.canonicalType.map(ObjectIdentifier.init) }
        }
        self.mayBeNilBySlot = properties.map { $0.isOptional || $0.isTransient }
        self.transientBySlot = properties.map(\.isTransient)
        self.hasPredicatesBySlot = properties.map { !$0.validationPredicates.isEmpty }
        self.attributeTypeBySlot = properties.map { ($0 as? NSAttributeDescription)?.attributeType }
        self.storeFormBySlot = properties.map(SlotStoreForm.init)
        self.denySlots = relationshipSlots.filter { relationshipBySlot[$0]?.deleteRule == .denyDeleteRule }
        self.transformableSlots = properties.indices.filter {
            !properties[$0].isTransient
                && (properties[$0] as? NSAttributeDescription)?.attributeType == .transformableAttributeType
        }
        self.plainAttributeBySlot = properties.map { $0 is NSAttributeDescription && $0.validationPredicates.isEmpty }
        self.storedValueConversions = properties.map(StoredValueConversion.init)
        self.defaultValues = SlotValues(
            properties.map { property -> Any? in
                if let attribute = property as? NSAttributeDescription {
                    if case .value(let value) = attribute.attributeType.coerce(attribute.defaultValue) { return value }
                    return attribute.defaultValue
                }
                if let relationship = property as? NSRelationshipDescription, relationship.isToMany {
                    return relationship.isOrdered ? [NSManagedObject]() as Any : Set<NSManagedObject>() as Any
                }
                return nil
            })
    }

    /// The slot of `key` and what it holds, for compiled predicates and sort descriptors.
    func slot(forKey key: String) -> KeyValueSlot? {
        guard let index = slotsByName[key] else { return nil }
        guard let relationship = relationshipBySlot[index] else { return KeyValueSlot(index: index, kind: .attribute) }
        let destination = relationship.destinationEntity?.frozenLayoutIfAny
        return KeyValueSlot(
            index: index,
            kind: relationship.isToMany ? .toMany(destination: destination) : .toOne(destination: destination))
    }

    /// The inverse's slot in the destination's layout: the destination's own slot
    /// table, computed by name so that a sub-entity destination gets the same number.
    private static func inverseSlot(of relationship: NSRelationshipDescription) -> Int? {
        guard let inverse = relationship.inverseRelationship, let owner = inverse.entity else { return nil }
        var chainCount = 0
        var ownerChain: [NSEntityDescription] = []
        var current: NSEntityDescription? = owner
        while let candidate = current {
            ownerChain.insert(candidate, at: 0)
            current = candidate.superentity
            chainCount += 1
        }
        var slot = 0
        var seen: Set<String> = []
        for ancestor in ownerChain {
            for property in ancestor.properties where !seen.contains(property.name) {
                if property === inverse { return slot }
                seen.insert(property.name)
                slot += 1
            }
        }
        return nil
    }

    /// The managed object class named `name`; `NSManagedObject` when there is none.
    static func resolveClass(named name: String?) -> NSManagedObject.Type {
        guard let name, !name.isEmpty, name != "NSManagedObject", name != "OpenCoreData.NSManagedObject" else {
            return NSManagedObject.self
        }
        if let type = NSClassFromString(name) as? NSManagedObject.Type { return type }
        return NSManagedObject.self
    }
}

/// How a save stores one slot of an object, read from the layout instead of the property's
/// description (whose properties are dynamically dispatched).
enum SlotStoreForm {
    /// A stored attribute of this type.
    case attribute(NSAttributeType)
    /// A to-one relationship.
    case toOne
    /// A to-many relationship.
    case toMany
    /// Nothing stored: a transient attribute, or neither an attribute nor a relationship.
    case none

    init(_ property: NSPropertyDescription) {
        if let attribute = property as? NSAttributeDescription {
            self = attribute.isTransient ? .none : .attribute(attribute.attributeType)
        } else if let relationship = property as? NSRelationshipDescription {
            self = relationship.isToMany ? .toMany : .toOne
        } else {
            self = .none
        }
    }
}
