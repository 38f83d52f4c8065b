// Inferring a lightweight migration from two models, as Core Data's inferred mapping
// model does, and refusing what it cannot infer instead of guessing.
//
// Identity. A destination entity continues the source entity with the same canonical
// identity (its renaming identifier, else its name); failing that, the source entity its
// renaming identifier names; failing that, the source entity of the same name. Properties
// are matched the same way among the stored properties of the two entities (inherited
// ones included, so a property may move up or down a hierarchy). Renaming identifiers are
// canonical — the first name of the thing — so version 1 migrates straight to version 3.
// Two candidates at one step, or two destinations continuing one source, are ambiguous:
// an error rather than a guess.
//
// Inferable: add or remove entities and properties; rename by renaming identifier;
// optional to mandatory (a nil takes the default; without one the migration fails at that
// row) and back; to-one to to-many and back (several destinations in a now to-one fail);
// unordered to ordered and back; a relationship's destination widened, or narrowed when the
// stored objects fit; hierarchy changes. Not inferable (134140, naming entity and
// property): an attribute's type, an attribute becoming a relationship or back, a
// relationship pointing at an unrelated entity.
import Foundation

extension LightweightMigrationPlan {
    /// The plan migrating stores of `source` to `destination`.
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) naming the entity and the
    ///   property of the first change lightweight migration cannot infer.
    init(inferringFrom source: NSManagedObjectModel, to destination: NSManagedObjectModel) throws {
        var inference = Inference(source: source, destination: destination)
        try inference.matchEntities()
        try inference.matchProperties()
        let mappings = try destination.entities.map { try inference.mapping(of: $0) }
        inference.noteRemovedEntities()
        self.init(source: source, destination: destination, entityMappings: mappings, changes: inference.changes)
    }
}

/// The state of one inference: entity and property matches, then slots and changes.
private struct Inference {
    let source: NSManagedObjectModel
    let destination: NSManagedObjectModel
    var changes: [MigrationChange] = []
    /// Source entity by destination entity.
    var sourceEntity: [ObjectIdentifier: NSEntityDescription] = [:]
    /// For each matched destination entity: the source property of each destination slot.
    var sourceProperty: [ObjectIdentifier: [NSPropertyDescription?]] = [:]

    init(source: NSManagedObjectModel, destination: NSManagedObjectModel) {
        self.source = source
        self.destination = destination
    }

    mutating func matchEntities() throws {
        let matches = try Inference.match(
            destination.entities, source.entities, name: { $0.name ?? "" }, renamingIdentifier: \.renamingIdentifier,
            ambiguity: { destination, sentence in
                MigrationError.uninferable("entities: \(sentence)", entity: destination)
            })
        for (entity, match) in zip(destination.entities, matches) {
            if let match { sourceEntity[ObjectIdentifier(entity)] = source.entities[match] }
        }
    }

    mutating func matchProperties() throws {
        for entity in destination.entities {
            guard let from = sourceEntity[ObjectIdentifier(entity)] else { continue }
            let entityName = entity.name ?? ""
            let stored = from.layout.properties.filter { !$0.isTransient }
            let wanted = entity.layout.properties
            let matches = try Inference.match(
                wanted, stored, name: \.name, renamingIdentifier: \.renamingIdentifier,
                ambiguity: { property, sentence in
                    MigrationError.uninferable(
                        "properties of \(entityName): \(sentence)", entity: entityName, property: property)
                })
            sourceProperty[ObjectIdentifier(entity)] = wanted.indices.map { index in
                wanted[index].isTransient ? nil : matches[index].map { stored[$0] }
            }
        }
    }

    // MARK: Slots

    mutating func mapping(of entity: NSEntityDescription) throws -> LightweightMigrationPlan.EntityMapping {
        let name = entity.name ?? ""
        let layout = entity.layout
        guard let from = sourceEntity[ObjectIdentifier(entity)],
            let properties = sourceProperty[ObjectIdentifier(entity)]
        else {
            note(.addEntity, name, nil, "a new entity: no objects")
            return .init(destination: entity, source: nil, slots: try layout.properties.map(newSlot))
        }
        if from.name != name {
            note(.renameEntity, name, nil, "the objects of \(from.name ?? "") continue as \(name)")
        }
        if from.superentity.flatMap(destinationName(continuing:)) != entity.superentity?.name
            || from.isAbstract != entity.isAbstract
        {
            note(
                .changeHierarchy, name, nil,
                entity.isAbstract && !from.isAbstract
                    ? "becomes abstract: a store holding objects of it cannot migrate"
                    : "moves in the entity hierarchy (superentity \(entity.superentity?.name ?? "none"))")
        }
        var slots: [LightweightMigrationPlan.Slot] = []
        for (slot, property) in layout.properties.enumerated() {
            if property.isTransient {
                slots.append(.transient)
                continue
            }
            guard let old = properties[slot] else {
                note(.addProperty, name, property.name, addedDescription(property))
                slots.append(try newSlot(property))
                continue
            }
            guard let oldSlot = from.layout.slotsByName[old.name] else {
                throw MigrationError.uninferable(
                    "\(name).\(property.name) has no slot in \(from.name ?? "")", entity: name, property: property.name)
            }
            if old.name != property.name {
                note(.renameProperty, name, property.name, "continues \(from.name ?? "").\(old.name)")
            }
            if old.isOptional != property.isOptional {
                note(
                    property.isOptional ? .makeOptional : .makeMandatory, name, property.name,
                    property.isOptional
                        ? "becomes optional"
                        : "becomes mandatory: a nil takes the default, or fails the migration without one")
            }
            slots.append(try keptSlot(property, old: old, oldSlot: oldSlot, entity: name))
        }
        return .init(destination: entity, source: from, slots: slots)
    }

    private func newSlot(_ property: NSPropertyDescription) throws -> LightweightMigrationPlan.Slot {
        if property.isTransient { return .transient }
        if let attribute = property as? NSAttributeDescription {
            return .newAttribute(Inference.defaultValue(of: attribute))
        }
        if let relationship = property as? NSRelationshipDescription {
            return .newRelationship(reversing: reversedSource(of: relationship))
        }
        return .transient
    }

    private func addedDescription(_ property: NSPropertyDescription) -> String {
        if let attribute = property as? NSAttributeDescription {
            let value = Inference.defaultValue(of: attribute)
            if value == .null {
                return attribute.isOptional
                    ? "a new attribute: nil"
                    : "a new mandatory attribute without a default: "
                        + "a store holding objects of the entity cannot migrate"
            }
            return "a new attribute: its default"
        }
        if let relationship = property as? NSRelationshipDescription, let inverse = reversedSource(of: relationship) {
            return "a new relationship: filled from the inverse \(inverse.entity?.name ?? "").\(inverse.name)"
        }
        return "a new relationship: empty"
    }

    /// The source relationship whose destinations, reversed, give the new relationship
    /// `relationship`: the source of its inverse, when the inverse continues one.
    private func reversedSource(of relationship: NSRelationshipDescription) -> NSRelationshipDescription? {
        guard let inverse = relationship.inverseRelationship, let owner = inverse.entity,
            let slot = owner.layout.properties.firstIndex(where: { $0 === inverse }),
            let old = sourceProperty[ObjectIdentifier(owner)]?[slot] as? NSRelationshipDescription,
            let oldDestination = old.destinationEntity,
            let continued = destinationEntity(continuing: oldDestination),
            let entity = relationship.entity, continued.isKindOf(entity: entity) || entity.isKindOf(entity: continued)
        else { return nil }
        return old
    }

    private mutating func keptSlot(
        _ property: NSPropertyDescription, old: NSPropertyDescription, oldSlot: Int, entity: String
    ) throws -> LightweightMigrationPlan.Slot {
        let place = "\(entity).\(property.name)"
        if let attribute = property as? NSAttributeDescription {
            guard let oldAttribute = old as? NSAttributeDescription else {
                throw MigrationError.uninferable(
                    "\(place) was a relationship and is now an attribute", entity: entity, property: property.name)
            }
            guard oldAttribute.attributeType == attribute.attributeType else {
                throw MigrationError.uninferable(
                    "\(place) changed type from \(ModelFileValues.name(of: oldAttribute.attributeType)) to "
                        + "\(ModelFileValues.name(of: attribute.attributeType)); lightweight migration does not convert values "
                        + "(migrate with a mapping model or a custom stage)", entity: entity, property: property.name)
            }
            guard (oldAttribute is NSCompositeAttributeDescription) == (attribute is NSCompositeAttributeDescription),
                Inference.elementHashes(oldAttribute) == Inference.elementHashes(attribute)
            else {
                throw MigrationError.uninferable(
                    "\(place) changed its composite elements", entity: entity, property: property.name)
            }
            return .attribute(
                source: oldSlot, fill: attribute.isOptional ? .null : Inference.defaultValue(of: attribute))
        }
        guard let relationship = property as? NSRelationshipDescription else { return .transient }
        guard let oldRelationship = old as? NSRelationshipDescription else {
            throw MigrationError.uninferable(
                "\(place) was an attribute and is now a relationship", entity: entity, property: property.name)
        }
        guard let oldDestination = oldRelationship.destinationEntity,
            let continued = destinationEntity(continuing: oldDestination), let target = relationship.destinationEntity,
            continued.isKindOf(entity: target) || target.isKindOf(entity: continued)
        else {
            throw MigrationError.uninferable(
                "\(place) pointed to \(oldRelationship.destinationEntity?.name ?? "nothing") and now points to "
                    + "\(relationship.destinationEntity?.name ?? "nothing"), which does not continue it",
                entity: entity, property: property.name)
        }
        if oldRelationship.isToMany != relationship.isToMany {
            note(
                .changeCardinality, entity, property.name,
                relationship.isToMany
                    ? "becomes to-many: holds the one destination it had"
                    : "becomes to-one: a store where an object holds several destinations cannot migrate")
        } else if relationship.isToMany, oldRelationship.isOrdered != relationship.isOrdered {
            note(
                .changeOrdering, entity, property.name,
                relationship.isOrdered ? "becomes ordered (in the order of the primary keys)" : "becomes unordered")
        }
        return .relationship(source: oldSlot, relationship: oldRelationship)
    }

    // MARK: Changes

    mutating func note(_ kind: MigrationChange.Kind, _ entity: String, _ property: String?, _ description: String) {
        changes.append(MigrationChange(kind: kind, entity: entity, property: property, description: description))
    }

    mutating func noteRemovedEntities() {
        let continued = Set(sourceEntity.values.map(ObjectIdentifier.init))
        for entity in source.entities where !continued.contains(ObjectIdentifier(entity)) {
            note(.removeEntity, entity.name ?? "", nil, "removed: its objects are dropped")
        }
        for entity in destination.entities {
            guard let from = sourceEntity[ObjectIdentifier(entity)], let kept = sourceProperty[ObjectIdentifier(entity)]
            else { continue }
            let keptNames = Set(kept.compactMap { $0?.name })
            for property in from.layout.properties where !property.isTransient && !keptNames.contains(property.name) {
                note(.removeProperty, entity.name ?? "", property.name, "removed: its values are dropped")
            }
        }
    }

    func destinationEntity(continuing entity: NSEntityDescription) -> NSEntityDescription? {
        destination.entities.first { sourceEntity[ObjectIdentifier($0)] === entity }
    }

    func destinationName(continuing entity: NSEntityDescription) -> String? {
        destinationEntity(continuing: entity)?.name
    }

    static func defaultValue(of attribute: NSAttributeDescription) -> StoreValue {
        guard let entity = attribute.entity, let slot = entity.layout.properties.firstIndex(where: { $0 === attribute })
        else { return (try? attribute.storeValue(attribute.defaultValue)) ?? .null }
        return (try? attribute.storeValue(entity.layout.defaultValues[slot])) ?? .null
    }

    static func elementHashes(_ attribute: NSAttributeDescription) -> [Data] {
        (attribute as? NSCompositeAttributeDescription)?.elements.map(\.versionHash) ?? []
    }

    // MARK: Matching

    /// For each destination item, the index of the source item it continues (nil: new):
    /// equal canonical identities first, then the destination's renaming identifier
    /// naming a source item, then equal names. A source item is continued at most once.
    static func match<Item>(
        _ destinations: [Item], _ sources: [Item], name: (Item) -> String, renamingIdentifier: (Item) -> String?,
        ambiguity: (_ destination: String, _ sentence: String) -> NSError
    ) throws -> [Int?] {
        var result = [Int?](repeating: nil, count: destinations.count)
        var claimed: Set<Int> = []
        for level in 0..<3 {
            // Level 0: canonical identities; 1: the renaming identifier names the source; 2: names.
            var sourcesByKey: [String: [Int]] = [:]
            for (index, item) in sources.enumerated() where !claimed.contains(index) {
                sourcesByKey[level == 0 ? renamingIdentifier(item) ?? name(item) : name(item), default: []].append(
                    index)
            }
            var proposals: [Int: [Int]] = [:]
            for (index, item) in destinations.enumerated() where result[index] == nil {
                let key =
                    level == 2
                    ? name(item) : level == 1 ? renamingIdentifier(item) : renamingIdentifier(item) ?? name(item)
                guard let key, let candidates = sourcesByKey[key] else { continue }
                guard candidates.count == 1 else {
                    let names = candidates.map { name(sources[$0]) }.sorted().joined(separator: ", ")
                    throw ambiguity(
                        name(item), "\(name(item)) could continue any of \(names) (name one with a renaming identifier)"
                    )
                }
                proposals[candidates[0], default: []].append(index)
            }
            for (sourceIndex, claimants) in proposals.sorted(by: { $0.key < $1.key }) {
                guard claimants.count == 1 else {
                    let names = claimants.map { name(destinations[$0]) }.sorted()
                    throw ambiguity(
                        names[0],
                        "\(names.joined(separator: " and ")) would all continue \(name(sources[sourceIndex])), "
                            + "which cannot be split")
                }
                result[claimants[0]] = sourceIndex
                claimed.insert(sourceIndex)
            }
        }
        return result
    }
}
